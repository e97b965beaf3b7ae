import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CacheSet } from '../../../src/storage/cache/cache-set.js';
import { openSqliteBackend } from '../../../src/storage/sqlite/store.js';
import { buf, randomWrites, recordCacheWatch, seededRandom, startOracle, summary } from './support.js';

const root = '/registry/things/';

test('after reopening a sqlite file, the cache serves watches from revisions the previous process had', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-restart-'));
  const path = join(dir, 'store.db');
  const keys = ['a', 'b'].flatMap((ns) => Array.from({ length: 6 }, (_, i) => `${root}${ns}/k${i}`));
  try {
    const first = openSqliteBackend(path);
    const firstSet = new CacheSet(first);
    const before = await firstSet.cacheFor(root);
    await randomWrites(first, [...keys, '/registry/others/x/y'], 80, seededRandom(1));
    const resumeFrom = Math.floor((await first.currentRevision()) / 3);
    await firstSet.stopAll();
    assert.equal(before.isReady, false);
    await first.close();

    const second = openSqliteBackend(path);
    const set = new CacheSet(second);
    try {
      const cache = await set.cacheFor(root);
      assert.equal(await set.cacheFor(root), cache, 'one cache per root');
      const oracle = startOracle(second, 0);
      // The window is empty after the restart: the backend serves the older history.
      const resumed = recordCacheWatch(cache, root, resumeFrom);
      assert.equal(resumed.watch.fromBackend, true);
      const namespaced = recordCacheWatch(cache, `${root}a/`, resumeFrom);
      await randomWrites(second, keys, 40, seededRandom(2));
      const head = await second.currentRevision();
      for (const [prefix, rec] of [[root, resumed], [`${root}a/`, namespaced]] as const) {
        const expected = await oracle.under(prefix, resumeFrom, head);
        await rec.waitFor(expected.length);
        assert.equal(rec.error, undefined);
        assert.deepEqual(rec.events.map(summary), expected.map(summary), prefix);
      }
      assert.equal(resumed.watch.fromBackend, false, 'handed over to the cache once it reached the window');
      // What the previous process could list, this one lists from memory.
      assert.deepEqual(cache.list(root).items.map((kv) => kv.key), (await second.range(root)).items.map((kv) => kv.key));
      // Another root's cache shares the feed and the revision.
      const others = await set.cacheFor('/registry/others/');
      const written = await second.create(`${root}z/new`, buf('1'));
      await others.waitUntilFresh(written.modRevision, 1000);
      assert.deepEqual(set.roots().sort(), ['/registry/others/', root]);
      oracle.cancel();
      await set.stopAll();
      assert.equal((await resumed.waitForError()).code, 'Unavailable');
    } finally {
      await set.stopAll();
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
