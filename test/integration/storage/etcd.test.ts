import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import type { KeyValue, StorageError } from '../../../src/storage/backend.js';
import { EtcdBackend } from '../../../src/storage/etcd/store.js';
import { startEtcd, EtcdCluster } from '../../support/etcd.js';
import { buf, recordWatch, rejectsWith, runConformance, settle, text } from '../../support/storage-conformance.js';

// A fresh etcd for each test: etcd's revision is global, and the suite expects an empty store.
// A new etcd is at revision 1 before its first write; the offset makes that 0, as in every store.
let cluster: EtcdCluster | undefined;
runConformance('etcd', {
  async open() {
    cluster = await startEtcd(1);
    return new EtcdBackend({ endpoints: cluster.endpoints.split(','), requestTimeoutMs: 5000, revisionOffset: 1 });
  },
  async cleanup() {
    await cluster?.stop();
    cluster = undefined;
  },
});

describe('etcd backend beyond the shared suite', () => {
  test('revisions are etcd\'s own: a new etcd is at 1, its first write at 2', async () => {
    // The first test on this describe's fresh etcd.
    const b = backend();
    assert.equal(await b.currentRevision(), 1);
    const kv = await b.create('/first/key', buf('1'));
    assert.deepEqual([kv.createRevision, kv.modRevision], [2, 2]);
    assert.equal((await b.get('/first/key', 2))?.modRevision, 2);
  });

  let etcd: EtcdCluster;
  const open: EtcdBackend[] = [];
  const backend = (options: Partial<ConstructorParameters<typeof EtcdBackend>[0]> = {}): EtcdBackend => {
    const b = new EtcdBackend({ endpoints: etcd.endpoints.split(','), requestTimeoutMs: 5000, ...options });
    open.push(b);
    return b;
  };
  before(async () => { etcd = await startEtcd(1); });
  after(async () => {
    for (const b of open) await b.close();
    await etcd.stop();
  });

  test('the health check asks the next member when one cannot be reached: one member down is a healthy cluster', async () => {
    // A port nothing listens on, beside the live member: each check picks at random, so ten checks meet the dead one.
    const dead = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => { const { port } = probe.address() as AddressInfo; probe.close(() => resolve(port)); });
    });
    const b = backend({ endpoints: [`http://127.0.0.1:${dead}`, ...etcd.endpoints.split(',')] });
    for (let i = 0; i < 10; i++) await b.check();
    const down = backend({ endpoints: [`http://127.0.0.1:${dead}`] });
    await rejectsWith(down.check(), 'Unavailable');
  });

  test('a value etcd itself refuses (our limit set above its own) fails as our limit does', async () => {
    const b = backend({ maxValueBytes: 4 * 1024 * 1024 });
    const before = await b.currentRevision();
    const refused = await rejectsWith(b.create('/etcd-limit/a', Buffer.alloc(2 * 1024 * 1024, 'a')), 'TooLarge');
    assert.equal(refused.message, 'etcdserver: request is too large');
    assert.equal(await b.get('/etcd-limit/a'), undefined);
    assert.equal(await b.currentRevision(), before);
  });

  test('large values: the ring of recent events stays within its byte bound, and a watch from before it still sees every event', async () => {
    const bound = 64 * 1024;
    const b = backend({ watchHubBytes: bound });
    const from = await b.currentRevision();
    const live = recordWatch(b, '/ring-bytes/', { afterRevision: from });
    const value = (i: number) => Buffer.alloc(16 * 1024, String(i % 10));
    let last = await b.create('/ring-bytes/a', value(0));
    const total = 40;
    for (let i = 1; i < total; i++) last = await b.update('/ring-bytes/a', value(i), last.modRevision);
    await live.waitFor(total);
    assert.ok(b.watchMemory.bytes <= bound, `held ${b.watchMemory.bytes} bytes, bound ${bound}`);
    assert.ok(b.watchMemory.events < 6, `${b.watchMemory.events} events held, each of 16 KiB or more`);
    const late = recordWatch(b, '/ring-bytes/', { afterRevision: from });
    await late.waitFor(total);
    for (const watcher of [live, late]) {
      assert.deepEqual(watcher.events.map((e) => e.kv.value.equals(value(watcher.events.indexOf(e)))), Array(total).fill(true));
      assert.equal(watcher.events.at(-1)?.revision, last.modRevision);
      watcher.cancel();
    }
  });

  test('two stores on one cluster: a write on one is read at once on the other and reaches its watches', async () => {
    const a = backend();
    const b = backend();
    const watcher = recordWatch(b, '/two/', { afterRevision: await b.currentRevision() });
    const made = await a.create('/two/x', buf('1'));
    assert.equal(text(await b.get('/two/x')), '1');
    await watcher.waitFor(1);
    assert.deepEqual(watcher.events.map((e) => [e.type, e.kv.key, e.revision]), [['put', '/two/x', made.modRevision]]);
    // Guards hold across stores.
    await b.update('/two/x', buf('2'), made.modRevision);
    await rejectsWith(a.update('/two/x', buf('3'), made.modRevision), 'RevisionMismatch');
    watcher.cancel();
  });

  test('callers of the current revision share reads: one per turn, and a caller during a read waits for the next, which sees its writes', async () => {
    const a = backend();
    const b = backend();
    await b.currentRevision();
    const before = b.revisionReads;
    const together = await Promise.all(Array.from({ length: 100 }, () => b.currentRevision()));
    assert.equal(b.revisionReads - before, 1, 'one read for 100 callers of one turn');
    assert.equal(new Set(together).size, 1);
    // A write finished before a call is seen by that call, even while an older read is on its way.
    const first = b.currentRevision();
    await new Promise((resolve) => setImmediate(resolve));
    const made = await a.create('/shared-head/x', buf('1'));
    const second = b.currentRevision();
    assert.ok((await second) >= made.modRevision, 'the read after the write sees it');
    assert.ok((await first) <= (await second));
    assert.ok(b.revisionReads - before <= 3);
  });

  test('requests read from many sockets in one turn of the loop share one read of the head, which sees the writes made before them', async () => {
    const a = backend();
    const b = backend();
    await b.currentRevision();
    // Each line a connection sends asks for the head, as a consistent GET does once read off its socket.
    // The turns of the loop in which requests were read are counted: all 16 usually come in one, but a
    // loaded machine may hand some sockets' data to the next turn, and each turn may read the head once.
    let turns = 0;
    let turnCounted = false;
    const server = createServer((socket) => {
      socket.setEncoding('utf8');
      socket.on('data', () => {
        if (!turnCounted) {
          turnCounted = true;
          turns++;
          setImmediate(() => { turnCounted = false; }); // after this turn's reads from sockets
        }
        void b.currentRevision().then((revision) => socket.write(`${revision}\n`));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const clients = await Promise.all(Array.from({ length: 16 }, () => new Promise<Socket>((resolve) => {
      const c = connect(port, '127.0.0.1', () => resolve(c));
      c.setNoDelay(true);
      c.setEncoding('utf8');
    })));
    const readsPerRound: number[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        const made = await a.create(`/burst/${round}`, buf('1'));
        const answers = clients.map((c) => new Promise<number>((resolve) => c.once('data', (line: string) => resolve(Number(line)))));
        const before = b.revisionReads;
        const turnsBefore = turns;
        // One synchronous loop: every request is in its socket before the server's side polls them.
        for (const c of clients) c.write('head?\n');
        const revisions = await Promise.all(answers);
        const roundTurns = turns - turnsBefore;
        assert.ok(b.revisionReads - before <= roundTurns, `one read per turn for the 16 requests of round ${round}: ${b.revisionReads - before} reads in ${roundTurns} turns`);
        readsPerRound.push(b.revisionReads - before);
        assert.equal(new Set(revisions).size, 1);
        assert.ok(revisions[0]! >= made.modRevision, 'the shared read sees the write finished before the requests');
      }
      assert.ok(readsPerRound.some((reads) => reads < clients.length), `requests share reads: ${readsPerRound.join(', ')} reads per round of ${clients.length}`);
    } finally {
      for (const c of clients) c.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('key prefixes keep stores apart; writes outside a prefix reach its watches as progress', async () => {
    const tenant = backend({ keyPrefix: '/tenant' });
    const plain = backend();
    await tenant.create('/registry/pods/a', buf('t'));
    assert.equal(await plain.get('/registry/pods/a'), undefined);
    assert.equal(text(await plain.get('/tenant/registry/pods/a')), 't', 'the tenant key lies under its prefix');
    assert.deepEqual((await tenant.range('')).items.map((kv) => kv.key), ['/registry/pods/a']);
    const progress: number[] = [];
    const watch = tenant.watch('', { afterRevision: await tenant.currentRevision() }, {
      onEvents: () => assert.fail('nothing was written under the prefix'),
      onError: (err) => assert.fail(String(err)),
      onProgress: (revision) => progress.push(revision),
    });
    const outside = await plain.create('/elsewhere', buf('x'));
    // Asking for the head makes the store request progress from etcd.
    const deadline = Date.now() + 5000;
    while (!progress.includes(outside.modRevision) && Date.now() < deadline) {
      await tenant.currentRevision();
      await settle(50);
    }
    assert.ok(progress.includes(outside.modRevision), `progress ${progress.join(',')} reaches ${outside.modRevision}`);
    watch.cancel();
  });

  test('an answer to a progress request that cannot be trusted yet is asked for again until the watches reach the head', async () => {
    const tenant = backend({ keyPrefix: '/retry' });
    const plain = backend();
    const progress: number[] = [];
    const watch = tenant.watch('', { afterRevision: await tenant.currentRevision() }, {
      onEvents: () => assert.fail('nothing was written under the prefix'),
      onError: (err) => assert.fail(String(err)),
      onProgress: (revision) => progress.push(revision),
    });
    // The first answer fails the check, as when a write under the prefix was still on its way.
    const checked = tenant as unknown as { quietBetween(after: number, through: number): Promise<boolean> };
    const check = checked.quietBetween.bind(tenant);
    let checks = 0;
    checked.quietBetween = (after, through) => (checks++ === 0 ? Promise.resolve(false) : check(after, through));
    await plain.create('/elsewhere-retry', buf('x'));
    // Asked once, as a consistent read asks: the store must keep at it on its own.
    const head = await tenant.currentRevision();
    for (const deadline = Date.now() + 5000; !progress.some((r) => r >= head) && Date.now() < deadline;) await settle(50);
    assert.ok(progress.some((r) => r >= head), `progress ${progress.join(',')} reaches ${head}`);
    assert.ok(checks >= 2, `the answer was checked again (${checks})`);
    watch.cancel();
  });

  test('a watch from before the first watch replays history through etcd', async () => {
    const b = backend();
    const first = await b.create('/old/a', buf('1'));
    await b.update('/old/a', buf('2'), first.modRevision);
    const live = recordWatch(b, '/old/', { afterRevision: await b.currentRevision() });
    const replay = recordWatch(b, '/old/', { afterRevision: first.modRevision - 1, prevKv: true });
    await replay.waitFor(2);
    assert.deepEqual(replay.events.map((e) => [e.revision, text(e.kv), text(e.prevKv)]), [[first.modRevision, '1', undefined], [first.modRevision + 1, '2', '1']]);
    const next = await b.create('/old/b', buf('3'));
    await replay.waitFor(3);
    await live.waitFor(1);
    assert.equal(replay.events[2]!.revision, next.modRevision);
    live.cancel();
    replay.cancel();
  });

  test('another store\'s compaction answers Compacted with its revision', async () => {
    const a = backend();
    const b = backend();
    const kv = await a.create('/cmp/a', buf('1'));
    await a.update('/cmp/a', buf('2'), kv.modRevision);
    const head = await a.currentRevision();
    await a.compact(head);
    const err = await rejectsWith(b.get('/cmp/a', kv.modRevision), 'Compacted');
    assert.equal(err.revision, head);
    assert.equal(await b.compactedRevision(), head, 'learned from the refusal');
    await b.compact(head - 1); // already done elsewhere: nothing to do
  });

  test('keys under an expiring prefix are deleted by etcd after their TTL', async () => {
    const b = backend({ expiring: [{ prefix: '/ev/', ttlSeconds: 1 }] });
    const watcher = recordWatch(b, '/', { afterRevision: await b.currentRevision() });
    await b.create('/ev/e1', buf('event'));
    await b.create('/keep/k', buf('kept'));
    await watcher.waitFor(3, 15_000);
    const deleted = watcher.events.find((e) => e.type === 'delete');
    assert.equal(deleted?.kv.key, '/ev/e1');
    assert.equal(text(deleted?.kv), 'event');
    assert.equal(await b.get('/ev/e1'), undefined);
    assert.equal(text(await b.get('/keep/k')), 'kept');
    watcher.cancel();
  });
});

describe('etcd backend across a restart of etcd', () => {
  test('a watch resumes where it was, without a gap; calls fail as Unavailable meanwhile', async () => {
    const etcd = await startEtcd(1);
    const b = new EtcdBackend({ endpoints: etcd.endpoints.split(','), requestTimeoutMs: 3000 });
    try {
      const watcher = recordWatch(b, '/r/', { afterRevision: 0 });
      await b.create('/r/1', buf('1'));
      await watcher.waitFor(1);
      await etcd.kill(0);
      const failed = await Promise.allSettled([b.create('/r/x', buf('x')), b.check()]);
      for (const outcome of failed) {
        assert.equal(outcome.status, 'rejected');
        assert.ok(['Unavailable', 'Timeout'].includes(((outcome as PromiseRejectedResult).reason as StorageError).code));
      }
      await etcd.restart(0);
      let written: KeyValue | undefined;
      for (let i = 0; i < 50 && !written; i++) {
        written = await b.create('/r/2', buf('2')).catch(() => undefined);
        if (!written) await settle(100);
      }
      assert.ok(written, 'writes work again once etcd is back');
      await b.check();
      await watcher.waitFor(2, 10_000);
      assert.deepEqual(watcher.events.map((e) => e.kv.key), ['/r/1', '/r/2']);
      assert.equal(watcher.error, undefined);
      watcher.cancel();
    } finally {
      await b.close();
      await etcd.stop();
    }
  });
});
