import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend } from '../../../src/storage/backend.js';
import { WatchCache } from '../../../src/storage/cache/watch-cache.js';
import type { WatchCacheSetup } from '../../../src/storage/cache/watch-cache.js';
import {
  backendCases, buf, randomWrites, recordCacheWatch, seededRandom, sleep, startOracle, summary,
} from './support.js';

const root = '/registry/things/';
const namespaces = ['a', 'b', 'c'];
const keysUnder = (r: string, perNamespace: number) =>
  namespaces.flatMap((ns) => Array.from({ length: perNamespace }, (_, i) => `${r}${ns}/n${String(i).padStart(2, '0')}`));
/** Keys of the cached root, of a neighbour whose name extends it, and of another resource. */
const thingKeys = keysUnder(root, 12);
const otherKeys = [...keysUnder('/registry/thingsx/', 2), ...keysUnder('/registry/others/', 3)];

for (const { name, open } of backendCases) {
  describe(`watch cache on the ${name} backend`, () => {
    /** Run `body` with a fresh store and a started cache of `root`, always cleaning up. */
    function withCache(body: (backend: Backend, cache: WatchCache) => Promise<void>, options: WatchCacheSetup = {}, before?: (b: Backend) => Promise<void>) {
      return async () => {
        const { backend, dispose } = open();
        const cache = new WatchCache(backend, root, options);
        try {
          await before?.(backend);
          await cache.start();
          await body(backend, cache);
        } finally {
          cache.stop();
          await dispose();
        }
      };
    }

    test('a root larger than one load page is read whole at one revision while writes go on', async () => {
      const { backend, dispose } = open();
      const many = Array.from({ length: 2_500 }, (_, i) => `${root}a/k${String(i).padStart(5, '0')}`);
      for (const key of many) await backend.create(key, buf('v0'));
      const cache = new WatchCache(backend, root);
      try {
        const starting = cache.start();
        // Writes while the pages are read: an update, a delete, a create past the last key.
        await backend.update(many[0]!, buf('v1'), (await backend.get(many[0]!))!.modRevision);
        await backend.delete(many[1_500]!, (await backend.get(many[1_500]!))!.modRevision);
        await backend.create(`${root}b/late`, buf('late'));
        await starting;
        await cache.waitUntilFresh(await backend.currentRevision());
        const listed = cache.list(root);
        const ranged = await backend.range(root);
        assert.equal(listed.items.length, 2_500);
        assert.deepEqual(listed.items.map((kv) => [kv.key, kv.value.toString(), kv.modRevision]), ranged.items.map((kv) => [kv.key, kv.value.toString(), kv.modRevision]));
      } finally {
        cache.stop();
        await dispose();
      }
    });

    test('list and get equal the backend after random writes', withCache(async (backend, cache) => {
      const random = seededRandom(7);
      await randomWrites(backend, [...thingKeys, ...otherKeys], 600, random);
      await cache.waitUntilFresh(await backend.currentRevision());
      for (const prefix of [root, `${root}a/`, `${root}b/`, `${root}zz/`]) {
        const listed = cache.list(prefix);
        const ranged = await backend.range(prefix, { revision: listed.revision });
        assert.deepEqual(listed.items.map((kv) => summaryOf(kv)), ranged.items.map((kv) => summaryOf(kv)), prefix);
        assert.equal(listed.count, ranged.count);
        assert.equal(listed.more, false);
        // Pages from a start key, as continue tokens do.
        let startKey: string | undefined;
        for (;;) {
          const page = cache.list(prefix, { startKey, limit: 5 });
          const expected = await backend.range(prefix, { revision: listed.revision, startKey, limit: 5 });
          assert.deepEqual(page.items.map((kv) => kv.key), expected.items.map((kv) => kv.key));
          assert.deepEqual([page.more, page.count], [expected.more, expected.count]);
          if (!page.more) break;
          startKey = page.items.at(-1)!.key + '\0';
        }
      }
      for (const key of thingKeys) {
        assert.equal(summaryOf(cache.get(key)), summaryOf(await backend.get(key)), key);
      }
    }, {}, async (backend) => {
      // Part of the history is written before the cache starts (its snapshot), the rest after.
      await randomWrites(backend, [...thingKeys, ...otherKeys], 200, seededRandom(3));
    }));

    test('watches from 0, from a mid revision and from the current one see exactly the backend stream', withCache(async (backend, cache) => {
      const oracle = startOracle(backend, 0);
      const random = seededRandom(11);
      const all = [...thingKeys, ...otherKeys];
      await randomWrites(backend, all, 150, random);
      const mid = Math.floor((await backend.currentRevision()) / 2);
      await cache.waitUntilFresh(await backend.currentRevision());
      const watches = [0, mid, cache.revision].flatMap((after) => [
        { after, prefix: root, rec: recordCacheWatch(cache, root, after) },
        { after, prefix: `${root}b/`, rec: recordCacheWatch(cache, `${root}b/`, after) },
      ]);
      await randomWrites(backend, all, 150, random);
      const head = await backend.currentRevision();
      for (const { after, prefix, rec } of watches) {
        const expected = await oracle.under(prefix, after, head);
        await rec.waitFor(expected.length);
        await sleep(20);
        assert.equal(rec.error, undefined);
        assert.deepEqual(rec.events.map(summary), expected.map(summary), `${prefix} after ${after}`);
        rec.watch.cancel();
      }
      oracle.cancel();
    }, {}, async (backend) => {
      await randomWrites(backend, [...thingKeys, ...otherKeys], 50, seededRandom(5));
    }));

    test('1,000 watchers each receive every event exactly once, in order, under 1,400 concurrent writes', withCache(async (backend, cache) => {
      const start = cache.revision;
      const oracle = startOracle(backend, start);
      const watchers = Array.from({ length: 1000 }, (_, i) => {
        const prefix = i % 5 === 0 ? `${root}${namespaces[i % 3]}/` : root;
        return { prefix, rec: recordCacheWatch(cache, prefix, start) };
      });
      const names = Array.from({ length: 400 }, (_, i) => `${root}${namespaces[i % 3]}/w${i}`);
      // Creates here and elsewhere at once, then concurrent updates and deletes.
      await Promise.all([
        ...names.map((key) => backend.create(key, buf('1'))),
        ...names.map((_, i) => backend.create(`/registry/others/x/o${i}`, buf('1'))),
      ]);
      await Promise.all(names.map(async (key, i) => {
        const kv = await backend.update(key, buf('2'), (await backend.get(key))!.modRevision);
        if (i % 2 === 0) await backend.delete(key, kv.modRevision);
      }));
      const head = await backend.currentRevision();
      assert.ok(head - start >= 1400, `only ${head - start} writes`);
      const expected = new Map<string, string>();
      for (const prefix of new Set(watchers.map((w) => w.prefix))) {
        expected.set(prefix, (await oracle.under(prefix, start, head)).map((e) => e.revision).join(','));
      }
      for (const { prefix, rec } of watchers) {
        const want = expected.get(prefix)!;
        await rec.waitFor(want.split(',').length);
        assert.equal(rec.error, undefined);
        assert.equal(rec.events.map((e) => e.revision).join(','), want, prefix);
      }
      await sleep(30);
      for (const { prefix, rec } of watchers) assert.equal(rec.events.length, expected.get(prefix)!.split(',').length, 'no duplicates');
      assert.deepEqual(watchers[1]!.rec.events.map(summary), (await oracle.under(root, start, head)).map(summary));
      // Watchers share the event objects, so what one consumer memoizes serves all.
      assert.equal(watchers[1]!.rec.events[0], watchers[2]!.rec.events[0]);
      oracle.cancel();
    }));

    test('a watch older than the window falls back to the backend, and fails with Compacted once history is gone', withCache(async (backend, cache) => {
      const first = (await backend.create(`${root}a/one`, buf('1'))).modRevision;
      for (let i = 0; i < 4; i++) await backend.create(`${root}a/k${i}`, buf('1'));
      const head = await backend.currentRevision();
      await cache.waitUntilFresh(head);
      const inWindow = recordCacheWatch(cache, root, first);
      assert.equal(inWindow.watch.fromBackend, false);
      await inWindow.waitFor(4);
      await sleep(350);
      // The events have expired from the window: the backend still has them.
      const expired = recordCacheWatch(cache, root, first);
      assert.equal(expired.watch.fromBackend, true);
      await expired.waitFor(4);
      assert.deepEqual(expired.events.map(summary), inWindow.events.map(summary));
      // The newest revision is still served from memory: nothing after it is missing.
      assert.equal(recordCacheWatch(cache, root, head).watch.fromBackend, false);
      // A live event reaches the fallback watcher too (and hands it over to the cache).
      await backend.create(`${root}b/late`, buf('1'));
      await expired.waitFor(5);
      await inWindow.waitFor(5);
      assert.equal(summary(expired.events[4]!), summary(inWindow.events[4]!));
      assert.equal(expired.watch.fromBackend, false, 'handed over to the cache');
      await backend.compact(head);
      const gone = recordCacheWatch(cache, root, first);
      const err = await gone.waitForError();
      assert.equal(err.code, 'Compacted');
      assert.equal(gone.events.length, 0);
      // The window's size bound expires events as well.
      const small = new WatchCache(backend, root, { maxEvents: 2 });
      await small.start();
      const at = small.revision;
      for (let i = 0; i < 3; i++) await backend.create(`${root}c/m${i}`, buf('1'));
      await small.waitUntilFresh(await backend.currentRevision());
      assert.equal(recordCacheWatch(small, root, at).watch.fromBackend, true);
      assert.equal(recordCacheWatch(small, root, at + 1).watch.fromBackend, false);
      small.stop();
    }, { historyWindowMs: 200 }));

    test('waitUntilFresh follows revisions written under other prefixes, and times out on future ones', withCache(async (backend, cache) => {
      const elsewhere = (await backend.create('/registry/others/a/x', buf('1'))).modRevision;
      await cache.waitUntilFresh(elsewhere);
      assert.ok(cache.revision >= elsewhere);
      assert.ok(cache.list(root).revision >= elsewhere);
      // A watch at that revision starts at once and sees the next change under the root.
      const rec = recordCacheWatch(cache, root, elsewhere);
      const next = await backend.create(`${root}a/y`, buf('1'));
      await rec.waitFor(1);
      assert.equal(rec.events[0]!.revision, next.modRevision);
      // A revision written while waiting resolves the wait.
      const waiting = cache.waitUntilFresh(next.modRevision + 1, 2000);
      await backend.create('/registry/others/a/z', buf('1'));
      await waiting;
      const current = cache.revision;
      const t = Date.now();
      await assert.rejects(cache.waitUntilFresh(current + 100, 200), (err: { code?: string; revision?: number; message: string }) => {
        assert.equal(err.code, 'FutureRevision');
        assert.equal(err.revision, current);
        assert.match(err.message, /Too large resource version/);
        return true;
      });
      assert.ok(Date.now() - t >= 180, 'waited for the timeout');
    }));

    test('a paused watcher that overflows gets Unavailable, the others go on', withCache(async (backend, cache) => {
      const at = cache.revision;
      const slow = recordCacheWatch(cache, root, at, { maxBuffered: 5 });
      slow.watch.pause();
      const patient = recordCacheWatch(cache, root, at, { maxBuffered: 100 });
      patient.watch.pause();
      const fast = recordCacheWatch(cache, root, at);
      for (let i = 0; i < 20; i++) await backend.create(`${root}a/s${i}`, buf('1'));
      const err = await slow.waitForError();
      assert.equal(err.code, 'Unavailable');
      assert.match(err.message, /too slow/);
      assert.equal(slow.events.length, 0);
      await fast.waitFor(20);
      // Within its bound a paused watcher keeps everything, and bookmarks stay behind what it got.
      await sleep(20);
      assert.equal(patient.events.length, 0);
      assert.equal(patient.watch.bookmarkRevision(), fast.events[0]!.revision - 1);
      assert.equal(fast.watch.bookmarkRevision(), cache.revision);
      patient.watch.resume();
      await patient.waitFor(20);
      assert.deepEqual(patient.events.map(summary), fast.events.map(summary));
      await backend.create(`${root}a/after`, buf('1'));
      await fast.waitFor(21);
      await patient.waitFor(21);
      assert.equal(cache.watcherCount, 2, 'the slow watcher is gone');
    }));

    test('lists share values with events; deletes carry the last value; stop ends watches', withCache(async (backend, cache) => {
      const created = await backend.create(`${root}a/m`, buf('1'));
      await cache.waitUntilFresh(created.modRevision);
      const rec = recordCacheWatch(cache, root, cache.revision);
      const updated = await backend.update(`${root}a/m`, buf('2'), created.modRevision);
      await cache.waitUntilFresh(updated.modRevision);
      const listed = cache.list(root).items[0]!;
      listed.memo.set('decoded', { n: 2 }, 64);
      await rec.waitFor(1);
      const put = rec.events[0]!;
      assert.equal(put.kv, listed, 'the put event carries the listed value');
      assert.deepEqual(put.kv.memo.get('decoded'), { n: 2 });
      assert.equal(put.prevKv?.value.toString(), '1');
      put.memo.set('frame', 'x', 64);
      assert.equal(put.kv.memo.get('frame'), undefined, 'event and value memos are distinct');
      await backend.delete(`${root}a/m`);
      await rec.waitFor(2);
      const del = rec.events[1]!;
      assert.equal(del.type, 'delete');
      assert.equal(del.kv.value.toString(), '2');
      assert.equal(del.prevKv, listed);
      assert.equal(cache.get(`${root}a/m`), undefined);
      cache.stop();
      assert.equal((await rec.waitForError()).code, 'Unavailable');
      assert.throws(() => cache.list(root), { code: 'Unavailable' });
      await assert.rejects(cache.waitUntilFresh(0), { code: 'Unavailable' });
    }));

    test('a closed store ends the cache\'s watches with Unavailable', async () => {
      const { backend, dispose } = open();
      const cache = new WatchCache(backend, root);
      try {
        await cache.start();
        const rec = recordCacheWatch(cache, root, cache.revision);
        await backend.close();
        assert.equal((await rec.waitForError()).code, 'Unavailable');
        assert.equal(cache.isReady, false);
      } finally {
        cache.stop();
        await dispose();
      }
    });
  });
}

function summaryOf(kv: { key: string; value: Buffer; modRevision: number; createRevision: number } | undefined): string {
  return kv ? `${kv.key}=${kv.value.toString()}@${kv.modRevision}/${kv.createRevision}` : '-';
}
