// The watch cache's memory bounds: the event window in bytes (shared by the
// caches of a set), and the derived cache that holds decodes and encodings.
// Behaviour only: a watch from before the window still gets every event
// (from the store), and the window never holds more than its bound.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CacheSet } from '../../../src/storage/cache/cache-set.js';
import { DerivedCache } from '../../../src/storage/cache/derived.js';
import { WatchCache } from '../../../src/storage/cache/watch-cache.js';
import { backendCases, buf, recordCacheWatch, startOracle, summary } from './support.js';

const root = '/registry/configmaps/';

for (const { name, open } of backendCases) {
  describe(`event window bounded in bytes, ${name} backend`, () => {
    test('the window never holds more than its bound, and a watch from before it still gets every event', async () => {
      const { backend, dispose } = open();
      const bound = 20_000;
      const cache = new WatchCache(backend, root, { maxWindowBytes: bound });
      try {
        await cache.start();
        const start = cache.revision;
        const oracle = startOracle(backend, start);
        const value = buf('x'.repeat(1_000));
        let last = start;
        for (let i = 0; i < 60; i++) {
          const key = `${root}ns/cm${i % 7}`;
          const current = await backend.get(key);
          const kv = current ? await backend.update(key, value, current.modRevision) : await backend.create(key, value);
          last = kv.modRevision;
          await cache.waitUntilFresh(last);
          assert.ok(cache.windowBytes <= bound, `window ${cache.windowBytes} bytes > ${bound}`);
          assert.ok(cache.windowBytes > 0);
        }
        // The first events fell out of the window: served by the store's history, all of them, in order.
        const resumed = recordCacheWatch(cache, root, start);
        assert.equal(resumed.watch.fromBackend, true, 'older than the window');
        await resumed.waitFor(60);
        const expected = await oracle.under(root, start, last);
        assert.deepEqual(resumed.events.map(summary), expected.map(summary));
        // A recent revision is still served from memory.
        assert.equal(recordCacheWatch(cache, root, last - 1).watch.fromBackend, false);
        oracle.cancel();
      } finally {
        cache.stop();
        await dispose();
      }
    });

    test('the caches of a set share one bound: the oldest event of any resource goes first', async () => {
      const { backend, dispose } = open();
      const bound = 30_000;
      const caches = new CacheSet(backend, { maxWindowBytes: bound });
      try {
        const quiet = await caches.cacheFor('/registry/secrets/');
        const busy = await caches.cacheFor(root);
        const before = quiet.revision;
        await backend.create('/registry/secrets/ns/s', buf('s'.repeat(1_000)));
        for (let i = 0; i < 50; i++) {
          const kv = await backend.create(`${root}ns/cm${i}`, buf('x'.repeat(1_000)));
          await busy.waitUntilFresh(kv.modRevision);
          assert.ok(caches.windowBytes <= bound, `windows ${caches.windowBytes} bytes > ${bound}`);
          assert.equal(caches.windowBytes, quiet.windowBytes + busy.windowBytes);
        }
        assert.equal(caches.windowLimit, bound);
        // The secret's event was the oldest: it has left, and a watch from before it goes to the store and still sees it.
        assert.equal(quiet.windowBytes, 0);
        const rec = recordCacheWatch(quiet, '/registry/secrets/', before);
        assert.equal(rec.watch.fromBackend, true);
        await rec.waitFor(1);
        assert.equal(rec.events[0]!.key, '/registry/secrets/ns/s');
        rec.watch.cancel();
      } finally {
        await caches.stopAll();
        await dispose();
      }
    });
  });
}

describe('derived cache', () => {
  test('keeps what is used within its bound and forgets the least recently used', () => {
    const cache = new DerivedCache(1_000);
    const memos = Array.from({ length: 20 }, () => cache.memo());
    memos.forEach((memo, i) => memo.set('object', { i }, 100));
    assert.ok(cache.bytes <= 1_000);
    assert.equal(memos[0]!.get('object'), undefined, 'the oldest were forgotten');
    assert.deepEqual(memos[19]!.get('object'), { i: 19 });
    // Reading an entry keeps it: the others go first.
    memos[10]!.get('object');
    for (let i = 0; i < 5; i++) memos[i]!.set('object', { again: i }, 100);
    assert.ok(cache.bytes <= 1_000);
    assert.deepEqual(memos[10]!.get('object'), { i: 10 });
    // Replacing a key counts once; something larger than the whole bound is not kept.
    memos[10]!.set('object', { i: 'ten' }, 100);
    assert.ok(cache.bytes <= 1_000);
    memos[1]!.set('huge', 'x', 5_000);
    assert.equal(memos[1]!.get('huge'), undefined);
    cache.resize(0);
    assert.equal(cache.bytes, 0);
    assert.equal(memos[19]!.get('object'), undefined);
  });
});
