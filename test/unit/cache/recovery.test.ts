import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Backend, KeyValue, RangeOptions, RangeResult, StorageError, Watch, WatchHandlers, WatchOptions,
} from '../../../src/storage/backend.js';
import { WatchCache } from '../../../src/storage/cache/watch-cache.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { buf, recordCacheWatch, sleep, startOracle, summary } from './support.js';

/** A memory store whose watches the test can break, as a lost connection to etcd would. */
class BreakableBackend implements Backend {
  readonly name = 'breakable';
  readonly inner = new MemoryBackend();
  private readonly open = new Set<{ inner: Watch; handlers: WatchHandlers }>();

  currentRevision(): Promise<number> { return this.inner.currentRevision(); }
  compactedRevision(): Promise<number> { return this.inner.compactedRevision(); }
  get(key: string, revision?: number): Promise<KeyValue | undefined> { return this.inner.get(key, revision); }
  range(prefix: string, options?: RangeOptions): Promise<RangeResult> { return this.inner.range(prefix, options); }
  create(key: string, value: Buffer): Promise<KeyValue> { return this.inner.create(key, value); }
  update(key: string, value: Buffer, expected: number): Promise<KeyValue> { return this.inner.update(key, value, expected); }
  delete(key: string, expected?: number): Promise<KeyValue> { return this.inner.delete(key, expected); }
  compact(revision: number): Promise<void> { return this.inner.compact(revision); }
  check(): Promise<void> { return this.inner.check(); }
  close(): Promise<void> { return this.inner.close(); }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    const entry = { inner: this.inner.watch(prefix, options, handlers), handlers };
    this.open.add(entry);
    return { cancel: () => { entry.inner.cancel(); this.open.delete(entry); } };
  }

  /** End every open watch with an error. */
  breakWatches(): void {
    for (const entry of [...this.open]) {
      entry.inner.cancel();
      this.open.delete(entry);
      entry.handlers.onError(new StorageError('Unavailable', 'connection lost'));
    }
  }
}

test('after losing its store watch the cache ends its watches, re-reads the root and serves again', async () => {
  const backend = new BreakableBackend();
  const root = '/registry/things/';
  const cache = new WatchCache(backend, root);
  try {
    await cache.start();
    const oracle = startOracle(backend.inner, 0);
    await backend.create(`${root}a/1`, buf('1'));
    const rec = recordCacheWatch(cache, root, 0);
    await rec.waitFor(1);
    backend.breakWatches();
    assert.equal((await rec.waitForError()).code, 'Unavailable');
    assert.equal(cache.isReady, false);
    assert.throws(() => cache.list(root), { code: 'Unavailable' });
    // Writes while the cache is down; a read waiting for them is answered once it is back.
    const missed = await backend.create(`${root}a/2`, buf('1'));
    await backend.update(`${root}a/1`, buf('2'), 1);
    await cache.waitUntilFresh(missed.modRevision + 1, 2000);
    assert.equal(cache.isReady, true);
    assert.deepEqual(cache.list(root).items.map((kv) => `${kv.key}=${kv.value}`), [`${root}a/1=2`, `${root}a/2=1`]);
    // A client resuming from before the loss gets the missed events (from the backend).
    const resumed = recordCacheWatch(cache, root, 1);
    const live = await backend.create(`${root}a/3`, buf('1'));
    await resumed.waitFor(3);
    assert.deepEqual(resumed.events.map(summary), (await oracle.under(root, 1, live.modRevision)).map(summary));
    await sleep(10);
    assert.equal(resumed.events.length, 3);
    oracle.cancel();
  } finally {
    cache.stop();
    await backend.close();
  }
});
