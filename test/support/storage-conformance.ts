// The one behaviour suite every Backend must pass. Each backend's test file
// calls runConformance with a factory that opens a fresh, empty store.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultMaxValueBytes, tooLargeMessage } from '../../src/storage/backend.js';
import type { Backend, KeyValue, StorageError, StorageErrorCode, WatchEvent, WatchOptions } from '../../src/storage/backend.js';

export interface BackendFactory {
  /** A new, empty store. */
  open(): Backend | Promise<Backend>;
  /** Called after each test's store is closed. */
  cleanup?(): void | Promise<void>;
}

export const buf = (text: string): Buffer => Buffer.from(text);
export const text = (kv: KeyValue | undefined): string | undefined => kv?.value.toString();

/** Expect `promise` to reject with a StorageError of `code`; returns the error. */
export async function rejectsWith(promise: Promise<unknown>, code: StorageErrorCode): Promise<StorageError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected StorageError ${code}, but it resolved`);
  assert.equal((caught as StorageError).code, code, `expected ${code}, got ${String(caught)}`);
  return caught as StorageError;
}

/** A watch that records what it receives and can wait for a number of events. */
export function recordWatch(backend: Backend, prefix: string, options: WatchOptions) {
  const events: WatchEvent[] = [];
  const batches: number[] = [];
  let error: StorageError | undefined;
  let inHandler = false;
  let wake: (() => void) | undefined;
  const watch = backend.watch(prefix, options, {
    onEvents(batch) {
      assert.equal(inHandler, false, 'onEvents re-entered');
      inHandler = true;
      events.push(...batch);
      batches.push(batch.length);
      inHandler = false;
      wake?.();
    },
    onError(err) {
      error = err;
      wake?.();
    },
  });
  return {
    events,
    batches,
    get error() {
      return error;
    },
    cancel: () => watch.cancel(),
    /** Resolves once `n` events (or an error) arrived; fails after `ms`. */
    async waitFor(n: number, ms = 5000): Promise<void> {
      const deadline = Date.now() + ms;
      while (events.length < n && !error) {
        if (Date.now() > deadline) assert.fail(`waited for ${n} events, got ${events.length}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 20);
        });
      }
    },
    async waitForError(ms = 5000): Promise<StorageError> {
      const deadline = Date.now() + ms;
      while (!error) {
        if (Date.now() > deadline) assert.fail('waited for a watch error');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return error;
    },
  };
}

/** Let pending deliveries run. */
export const settle = (ms = 30): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function runConformance(name: string, factory: BackendFactory): void {
  /** Run `body` against a fresh store, always closing it. */
  function withStore(body: (b: Backend) => Promise<void>): () => Promise<void> {
    return async () => {
      const backend = await factory.open();
      try {
        await body(backend);
      } finally {
        await backend.close();
        await factory.cleanup?.();
      }
    };
  }

  describe(`${name} backend conformance`, () => {
    test('an empty store is at revision 0', withStore(async (b) => {
      assert.equal(await b.currentRevision(), 0);
      assert.equal(await b.compactedRevision(), 0);
      assert.equal(await b.get('/a'), undefined);
      assert.deepEqual(await b.range('/'), { items: [], revision: 0, more: false, count: 0 });
      await b.check();
    }));

    test('create assigns the next revision and refuses an existing key', withStore(async (b) => {
      const first = await b.create('/a', buf('1'));
      assert.deepEqual({ ...first, value: text(first) }, { key: '/a', value: '1', createRevision: 1, modRevision: 1 });
      const second = await b.create('/b', buf('2'));
      assert.equal(second.modRevision, 2);
      const err = await rejectsWith(b.create('/a', buf('x')), 'KeyExists');
      assert.equal(text(err.current), '1');
      assert.equal(err.current?.modRevision, 1);
      assert.equal(await b.currentRevision(), 2, 'a refused write takes no revision');
      assert.equal(text(await b.get('/a')), '1');
    }));

    test('update is guarded by the mod revision and keeps the create revision', withStore(async (b) => {
      await rejectsWith(b.update('/a', buf('x'), 1), 'KeyNotFound');
      const created = await b.create('/a', buf('1'));
      await b.create('/other', buf('o'));
      const updated = await b.update('/a', buf('2'), created.modRevision);
      assert.deepEqual({ ...updated, value: text(updated) }, { key: '/a', value: '2', createRevision: 1, modRevision: 3 });
      const err = await rejectsWith(b.update('/a', buf('3'), created.modRevision), 'RevisionMismatch');
      assert.equal(err.current?.modRevision, 3);
      assert.equal(text(err.current), '2');
      assert.equal(text(await b.get('/a')), '2');
      assert.equal(await b.currentRevision(), 3);
    }));

    test('delete, guarded or not, returns the last value at the delete revision', withStore(async (b) => {
      await rejectsWith(b.delete('/a'), 'KeyNotFound');
      await b.create('/a', buf('1'));
      await b.update('/a', buf('2'), 1);
      const err = await rejectsWith(b.delete('/a', 1), 'RevisionMismatch');
      assert.equal(err.current?.modRevision, 2);
      const deleted = await b.delete('/a', 2);
      assert.deepEqual({ ...deleted, value: text(deleted) }, { key: '/a', value: '2', createRevision: 1, modRevision: 3 });
      assert.equal(await b.get('/a'), undefined);
      await rejectsWith(b.delete('/a'), 'KeyNotFound');
      await b.create('/b', buf('b'));
      const unguarded = await b.delete('/b');
      assert.equal(unguarded.modRevision, 5);
      const again = await b.create('/a', buf('new'));
      assert.equal(again.createRevision, 6, 'a re-created key starts a new life');
    }));

    test('values are copied: changing the caller buffer later changes nothing', withStore(async (b) => {
      const value = buf('abc');
      await b.create('/a', value);
      value.write('zzz');
      assert.equal(text(await b.get('/a')), 'abc');
    }));

    test('get and range read the state as of an older revision', withStore(async (b) => {
      await b.create('/r/a', buf('a1'));                  // 1
      await b.create('/r/b', buf('b1'));                  // 2
      await b.update('/r/a', buf('a2'), 1);               // 3
      await b.delete('/r/b');                             // 4
      await b.create('/r/c', buf('c1'));                  // 5
      assert.equal(await b.get('/r/b', 0), undefined, 'revision 0 means current');
      assert.equal(text(await b.get('/r/a', 1)), 'a1');
      assert.equal(text(await b.get('/r/a', 2)), 'a1');
      assert.equal(text(await b.get('/r/a', 3)), 'a2');
      assert.equal(text(await b.get('/r/b', 3)), 'b1');
      assert.equal(await b.get('/r/b', 4), undefined);
      assert.equal(await b.get('/r/c', 4), undefined);
      const atThree = await b.range('/r/', { revision: 3 });
      assert.equal(atThree.revision, 3);
      assert.deepEqual(atThree.items.map((kv) => [kv.key, text(kv), kv.modRevision]), [['/r/a', 'a2', 3], ['/r/b', 'b1', 2]]);
      const now = await b.range('/r/');
      assert.equal(now.revision, 5);
      assert.deepEqual(now.items.map((kv) => kv.key), ['/r/a', '/r/c']);
      const future = await rejectsWith(b.get('/r/a', 6), 'FutureRevision');
      assert.equal(future.revision, 5);
      await rejectsWith(b.range('/r/', { revision: 99 }), 'FutureRevision');
    }));

    test('range returns only keys under the prefix, in byte order', withStore(async (b) => {
      const keys = ['/p/b', '/p/a', '/p/B', '/p/a0', '/p/\u00e9', '/p/\ud83d\ude00', '/p/\uffff', '/p', '/p0', '/pa', '/o/x', '/p/'];
      for (const key of keys) await b.create(key, buf(key));
      const got = (await b.range('/p/')).items.map((kv) => kv.key);
      const byBytes = keys.filter((k) => k.startsWith('/p/')).sort((x, y) => Buffer.compare(buf(x), buf(y)));
      assert.deepEqual(got, byBytes);
      // U+1F600 is above U+FFFF in byte order, though not in UTF-16 order.
      assert.deepEqual(got.slice(-2), ['/p/\uffff', '/p/\ud83d\ude00']);
      const all = await b.range('');
      assert.equal(all.count, keys.length);
      assert.deepEqual(all.items.map((kv) => kv.key), [...keys].sort((x, y) => Buffer.compare(buf(x), buf(y))));
      assert.deepEqual((await b.range('/p/a')).items.map((kv) => kv.key), ['/p/a', '/p/a0']);
    }));

    test('range pages with limit and startKey, reporting count and more', withStore(async (b) => {
      const keys = Array.from({ length: 10 }, (_, i) => `/k/${String(i).padStart(2, '0')}`);
      for (const key of keys) await b.create(key, buf(key));
      await b.create('/l/x', buf('outside'));
      const first = await b.range('/k/', { limit: 3 });
      assert.deepEqual(first.items.map((kv) => kv.key), keys.slice(0, 3));
      assert.equal(first.more, true);
      assert.equal(first.count, 10);
      const second = await b.range('/k/', { limit: 3, startKey: '/k/03', revision: first.revision });
      assert.deepEqual(second.items.map((kv) => kv.key), keys.slice(3, 6));
      assert.equal(second.count, 7, 'count runs from startKey on');
      assert.equal(second.more, true);
      const last = await b.range('/k/', { limit: 4, startKey: '/k/06' });
      assert.deepEqual(last.items.map((kv) => kv.key), keys.slice(6));
      assert.equal(last.more, false);
      assert.equal(last.count, 4);
      const between = await b.range('/k/', { limit: 2, startKey: '/k/055' });
      assert.deepEqual(between.items.map((kv) => kv.key), ['/k/06', '/k/07']);
      const unlimited = await b.range('/k/', { limit: 0 });
      assert.equal(unlimited.items.length, 10);
      assert.equal(unlimited.more, false);
      const exact = await b.range('/k/', { limit: 10 });
      assert.equal(exact.more, false);
      assert.equal(exact.count, 10);
      const past = await b.range('/k/', { startKey: '/k/99' });
      assert.deepEqual(past, { items: [], revision: 11, more: false, count: 0 });
    }));

    test('paging at a fixed revision ignores later writes', withStore(async (b) => {
      for (let i = 0; i < 6; i++) await b.create(`/k/${i}`, buf(String(i)));
      const first = await b.range('/k/', { limit: 2 });
      await b.delete('/k/2');
      await b.create('/k/25', buf('late'));
      await b.update('/k/3', buf('changed'), 4);
      const second = await b.range('/k/', { limit: 2, startKey: '/k/2', revision: first.revision });
      assert.deepEqual(second.items.map((kv) => [kv.key, text(kv)]), [['/k/2', '2'], ['/k/3', '3']]);
      assert.equal(second.count, 4);
      assert.equal(second.more, true);
      const current = await b.range('/k/', { startKey: '/k/2' });
      assert.deepEqual(current.items.map((kv) => kv.key), ['/k/25', '/k/3', '/k/4', '/k/5']);
    }));

    test('watch delivers puts and deletes under the prefix, with prevKv when asked', withStore(async (b) => {
      const plain = recordWatch(b, '/w/', { afterRevision: 0 });
      const withPrev = recordWatch(b, '/w/', { afterRevision: 0, prevKv: true });
      await b.create('/w/a', buf('1'));
      await b.create('/x/a', buf('elsewhere'));
      await b.update('/w/a', buf('2'), 1);
      await b.delete('/w/a');
      await plain.waitFor(3);
      await withPrev.waitFor(3);
      assert.deepEqual(plain.events.map((e) => [e.type, e.revision, e.kv.key, text(e.kv), e.kv.modRevision, e.prevKv]), [
        ['put', 1, '/w/a', '1', 1, undefined],
        ['put', 3, '/w/a', '2', 3, undefined],
        ['delete', 4, '/w/a', '2', 4, undefined],
      ]);
      assert.deepEqual(withPrev.events.map((e) => [e.revision, text(e.prevKv), e.prevKv?.modRevision]), [
        [1, undefined, undefined],
        [3, '1', 1],
        [4, '2', 3],
      ]);
      assert.equal(withPrev.events[2]!.kv.createRevision, 1);
      plain.cancel();
      withPrev.cancel();
    }));

    test('watch events are never delivered from inside the write call', withStore(async (b) => {
      let inWriteCall = false;
      let delivered = 0;
      const watch = b.watch('/', { afterRevision: 0 }, {
        onEvents(events) {
          assert.equal(inWriteCall, false);
          delivered += events.length;
        },
        onError(err) {
          assert.fail(String(err));
        },
      });
      for (let i = 0; i < 5; i++) {
        inWriteCall = true;
        const pending = b.create(`/s/${i}`, buf('x'));
        inWriteCall = false;
        await pending;
      }
      // Delivered after the writes returned, however late a loaded machine gets to it.
      for (const deadline = Date.now() + 10_000; delivered < 5 && Date.now() < deadline;) await settle(10);
      await settle();
      assert.equal(delivered, 5);
      watch.cancel();
    }));

    test('500 concurrent writes reach a watcher once each, in revision order', withStore(async (b) => {
      const watcher = recordWatch(b, '/c/', { afterRevision: 0 });
      const writes: Promise<KeyValue>[] = [];
      for (let i = 0; i < 500; i++) writes.push(b.create(`/c/${i}`, buf(String(i))));
      const results = await Promise.all(writes);
      assert.deepEqual(results.map((kv) => kv.modRevision).sort((x, y) => x - y), Array.from({ length: 500 }, (_, i) => i + 1));
      await watcher.waitFor(500);
      await settle();
      assert.deepEqual(watcher.events.map((e) => e.revision), Array.from({ length: 500 }, (_, i) => i + 1));
      const byKey = new Map(results.map((kv) => [kv.key, kv.modRevision]));
      for (const event of watcher.events) assert.equal(byKey.get(event.kv.key), event.revision);
      watcher.cancel();
    }));

    test('interleaved writers and two watchers agree on one order', withStore(async (b) => {
      const all = recordWatch(b, '/', { afterRevision: 0 });
      const some = recordWatch(b, '/q/1', { afterRevision: 0 });
      async function writer(id: number): Promise<void> {
        let kv = await b.create(`/q/${id}`, buf('0'));
        for (let i = 1; i <= 20; i++) kv = await b.update(kv.key, buf(String(i)), kv.modRevision);
        await b.delete(kv.key, kv.modRevision);
      }
      await Promise.all(Array.from({ length: 16 }, (_, i) => writer(i)));
      const total = 16 * 22;
      assert.equal(await b.currentRevision(), total);
      await all.waitFor(total);
      assert.deepEqual(all.events.map((e) => e.revision), Array.from({ length: total }, (_, i) => i + 1));
      await some.waitFor(7 * 22);
      await settle();
      const expected = all.events.filter((e) => e.kv.key.startsWith('/q/1')).map((e) => e.revision);
      assert.deepEqual(some.events.map((e) => e.revision), expected);
      all.cancel();
      some.cancel();
    }));

    test('watch from an old revision replays history, then goes live', withStore(async (b) => {
      await b.create('/h/a', buf('1'));        // 1
      await b.create('/h/b', buf('1'));        // 2
      await b.update('/h/a', buf('2'), 1);     // 3
      await b.delete('/h/b');                  // 4
      const watcher = recordWatch(b, '/h/', { afterRevision: 2, prevKv: true });
      await watcher.waitFor(2);
      assert.deepEqual(watcher.events.map((e) => [e.type, e.revision, text(e.kv), text(e.prevKv)]), [
        ['put', 3, '2', '1'],
        ['delete', 4, '1', '1'],
      ]);
      await b.create('/h/c', buf('live'));
      await watcher.waitFor(3);
      assert.deepEqual(watcher.events.map((e) => e.revision), [3, 4, 5]);
      const future = recordWatch(b, '/h/', { afterRevision: 7 });
      await b.create('/h/d', buf('6'));
      await b.create('/h/e', buf('7'));
      await b.create('/h/f', buf('8'));
      await future.waitFor(1);
      await settle();
      assert.deepEqual(future.events.map((e) => e.revision), [8], 'a watch past the head waits for it');
      watcher.cancel();
      future.cancel();
    }));

    test('a cancelled watch receives nothing more', withStore(async (b) => {
      const watcher = recordWatch(b, '/', { afterRevision: 0 });
      await b.create('/a', buf('1'));
      await watcher.waitFor(1);
      watcher.cancel();
      await b.create('/b', buf('2'));
      await settle();
      assert.equal(watcher.events.length, 1);
      let count = 0;
      const selfCancelling = b.watch('/', { afterRevision: 0 }, {
        onEvents(events) {
          count += events.length;
          selfCancelling.cancel();
        },
        onError: (err) => assert.fail(String(err)),
      });
      // Its first delivery (the two events so far) ends it; a loaded machine may take a while to make it.
      for (const deadline = Date.now() + 10_000; count === 0 && Date.now() < deadline;) await settle(10);
      await b.create('/c', buf('3'));
      await settle();
      assert.equal(count, 2);
    }));

    test('compaction keeps the latest state and refuses older reads and watches', withStore(async (b) => {
      await b.create('/z/a', buf('a1'));       // 1
      await b.create('/z/b', buf('b1'));       // 2
      await b.update('/z/a', buf('a2'), 1);    // 3
      await b.delete('/z/b');                  // 4
      await b.create('/z/c', buf('c1'));       // 5
      await b.update('/z/a', buf('a3'), 3);    // 6
      const live = recordWatch(b, '/z/', { afterRevision: 6 });
      await b.compact(5);
      assert.equal(await b.compactedRevision(), 5);
      const err = await rejectsWith(b.get('/z/a', 4), 'Compacted');
      assert.equal(err.revision, 5);
      await rejectsWith(b.range('/z/', { revision: 3 }), 'Compacted');
      assert.equal(text(await b.get('/z/a', 5)), 'a2', 'the compacted revision itself stays readable');
      assert.equal(await b.get('/z/b', 5), undefined);
      assert.deepEqual((await b.range('/z/', { revision: 5 })).items.map((kv) => [kv.key, text(kv)]), [['/z/a', 'a2'], ['/z/c', 'c1']]);
      assert.deepEqual((await b.range('/z/')).items.map((kv) => [kv.key, text(kv), kv.createRevision, kv.modRevision]), [
        ['/z/a', 'a3', 1, 6], ['/z/c', 'c1', 5, 5],
      ]);
      const old = recordWatch(b, '/z/', { afterRevision: 3 });
      const compacted = await old.waitForError();
      assert.equal(compacted.code, 'Compacted');
      assert.equal(compacted.revision, 5);
      assert.equal(old.events.length, 0);
      const atEdge = recordWatch(b, '/z/', { afterRevision: 5, prevKv: true });
      await atEdge.waitFor(1);
      assert.deepEqual(atEdge.events.map((e) => [e.revision, text(e.kv), text(e.prevKv)]), [[6, 'a3', 'a2']]);
      await b.compact(3); // older than the compacted revision: nothing to do
      assert.equal(await b.compactedRevision(), 5);
      await rejectsWith(b.compact(99), 'FutureRevision');
      await b.create('/z/b', buf('b2'));
      await b.compact(7);
      assert.deepEqual((await b.range('/z/')).items.map((kv) => text(kv)), ['a3', 'b2', 'c1']);
      assert.equal(text(await b.get('/z/a', 7)), 'a3');
      await live.waitFor(1);
      await settle();
      assert.equal(live.error, undefined, 'a caught-up watch survives compaction');
      assert.deepEqual(live.events.map((e) => e.revision), [7]);
      live.cancel();
      atEdge.cancel();
    }));

    test('compacting everything keeps deleted keys deleted', withStore(async (b) => {
      await b.create('/d/a', buf('1'));
      await b.delete('/d/a');
      await b.create('/d/b', buf('2'));
      await b.compact(await b.currentRevision());
      assert.equal(await b.get('/d/a'), undefined);
      assert.deepEqual((await b.range('/d/')).items.map((kv) => kv.key), ['/d/b']);
      const again = await b.create('/d/a', buf('3'));
      assert.equal(again.createRevision, 4);
    }));

    test('concurrent updates with the same expected revision: exactly one wins', withStore(async (b) => {
      const base = await b.create('/g/a', buf('0'));
      const attempts = Array.from({ length: 20 }, (_, i) => b.update('/g/a', buf(String(i + 1)), base.modRevision));
      const settled = await Promise.allSettled(attempts);
      const won = settled.filter((s) => s.status === 'fulfilled');
      assert.equal(won.length, 1);
      for (const s of settled) {
        if (s.status === 'rejected') assert.equal((s.reason as StorageError).code, 'RevisionMismatch');
      }
      const winner = (won[0] as PromiseFulfilledResult<KeyValue>).value;
      assert.equal(winner.modRevision, 2);
      assert.equal(text(await b.get('/g/a')), text(winner));
      assert.equal(await b.currentRevision(), 2);
    }));

    test('writes issued together apply in call order', withStore(async (b) => {
      const creates = await Promise.allSettled([b.create('/g/x', buf('1')), b.create('/g/x', buf('2'))]);
      assert.deepEqual(creates.map((s) => s.status), ['fulfilled', 'rejected']);
      const [deleted, recreated, dup] = await Promise.allSettled([
        b.delete('/g/x', 1), b.create('/g/x', buf('3')), b.update('/g/x', buf('4'), 1),
      ]);
      assert.equal(deleted.status, 'fulfilled');
      assert.equal(recreated.status, 'fulfilled');
      assert.equal((recreated as PromiseFulfilledResult<KeyValue>).value.createRevision, 3);
      assert.equal(dup.status, 'rejected');
      assert.equal(((dup as PromiseRejectedResult).reason as StorageError).code, 'RevisionMismatch');
      assert.equal(((dup as PromiseRejectedResult).reason as StorageError).current?.modRevision, 3);
      assert.equal(text(await b.get('/g/x')), '3');
    }));

    test('a value over the size limit is refused with etcd\'s words and leaves no trace', withStore(async (b) => {
      const watcher = recordWatch(b, '/big/', { afterRevision: 0 });
      const oversize = Buffer.alloc(defaultMaxValueBytes + 1, 'a');
      const refused = await rejectsWith(b.create('/big/a', oversize), 'TooLarge');
      assert.equal(refused.message, tooLargeMessage);
      assert.equal(await b.currentRevision(), 0, 'a refused write takes no revision');
      assert.equal(await b.get('/big/a'), undefined);
      // Well under the limit (room for etcd's key and framing): stored; then an oversize update of it is refused.
      const fits = Buffer.alloc(defaultMaxValueBytes - 4096, 'b');
      const made = await b.create('/big/a', fits);
      await rejectsWith(b.update('/big/a', oversize, made.modRevision), 'TooLarge');
      const kept = await b.get('/big/a');
      assert.equal(kept?.modRevision, made.modRevision);
      assert.ok(kept?.value.equals(fits));
      assert.equal(await b.currentRevision(), made.modRevision);
      await b.delete('/big/a');
      await watcher.waitFor(2);
      await settle();
      assert.deepEqual(watcher.events.map((e) => [e.type, e.revision]), [['put', made.modRevision], ['delete', made.modRevision + 1]]);
      watcher.cancel();
    }));

    test('closing ends watches and refuses further calls', withStore(async (b) => {
      const watcher = recordWatch(b, '/', { afterRevision: 0 });
      await b.close();
      assert.equal((await watcher.waitForError()).code, 'Unavailable');
      await rejectsWith(b.get('/a'), 'Unavailable');
      await rejectsWith(b.create('/a', buf('1')), 'Unavailable');
      await rejectsWith(b.check(), 'Unavailable');
    }));
  });
}
