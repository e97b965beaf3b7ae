// Shared helpers of the watch cache tests: the two backends to run against,
// a recording watcher, seeded random writes, and event summaries to compare.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, KeyValue, StorageError, WatchEvent } from '../../../src/storage/backend.js';
import type { CacheEvent, CacheWatch, CacheWatchOptions } from '../../../src/storage/cache/types.js';
import type { WatchCache } from '../../../src/storage/cache/watch-cache.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { openSqliteBackend } from '../../../src/storage/sqlite/store.js';

export interface BackendCase {
  name: string;
  /** A fresh, empty store and the function that closes and removes it. */
  open(): { backend: Backend; dispose(): Promise<void> };
}

export const backendCases: BackendCase[] = [
  {
    name: 'memory',
    open() {
      const backend = new MemoryBackend();
      return { backend, dispose: () => backend.close() };
    },
  },
  {
    name: 'sqlite',
    open() {
      const dir = mkdtempSync(join(tmpdir(), 'cache-test-'));
      const backend = openSqliteBackend(join(dir, 'store.db'));
      return {
        backend,
        async dispose() {
          await backend.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

export const buf = (text: string): Buffer => Buffer.from(text);
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export { seededRandom } from '../../support/random.js';

/** `count` sequential creates, updates and deletes over `keys`, chosen by `random`. */
export async function randomWrites(backend: Backend, keys: string[], count: number, random: () => number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const key = keys[Math.floor(random() * keys.length)]!;
    const current = await backend.get(key);
    if (!current) await backend.create(key, buf(`v${i}`));
    else if (random() < 0.25) await backend.delete(key, current.modRevision);
    else await backend.update(key, buf(`v${i}`), current.modRevision);
  }
}

/** What a watch consumer can observe of an event, to compare cache and backend streams. */
export function summary(e: CacheEvent | WatchEvent): string {
  const value = (kv: KeyValue | undefined) => (kv ? `${kv.value.toString()}@${kv.modRevision}/${kv.createRevision}` : '-');
  return `${e.revision} ${e.type} ${e.kv.key} ${value(e.kv)} prev=${value(e.prevKv)}`;
}

/** A cache watch that records what it receives, asserting order and no re-entrance. */
export function recordCacheWatch(cache: WatchCache, prefix: string, afterRevision: number, options?: CacheWatchOptions) {
  const events: CacheEvent[] = [];
  let error: StorageError | undefined;
  let inHandler = false;
  let last = afterRevision;
  const watch: CacheWatch = cache.watch(prefix, afterRevision, {
    onEvents(batch) {
      assert.equal(inHandler, false, 'onEvents re-entered');
      assert.equal(error, undefined, 'events after the error');
      inHandler = true;
      for (const e of batch) {
        assert.ok(e.revision > last, `revision ${e.revision} after ${last}`);
        assert.ok(e.key.startsWith(prefix), `${e.key} outside ${prefix}`);
        last = e.revision;
        events.push(e);
      }
      inHandler = false;
    },
    onError(err) {
      assert.equal(error, undefined, 'a second error');
      error = err;
    },
  }, options);
  return {
    watch,
    events,
    get error() {
      return error;
    },
    /** Resolves once `n` events (or an error) arrived. */
    async waitFor(n: number, ms = 10_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (events.length < n && !error) {
        if (Date.now() > deadline) assert.fail(`waited for ${n} events, got ${events.length}`);
        await sleep(5);
      }
    },
    async waitForError(ms = 10_000): Promise<StorageError> {
      const deadline = Date.now() + ms;
      while (!error) {
        if (Date.now() > deadline) assert.fail('waited for a watch error');
        await sleep(5);
      }
      return error;
    },
  };
}

/**
 * Every event of the store from `afterRevision` on, from a direct backend
 * watch over all keys: the expected stream to compare the cache's with.
 */
export function startOracle(backend: Backend, afterRevision: number) {
  const events: WatchEvent[] = [];
  let error: StorageError | undefined;
  const watch = backend.watch('', { afterRevision, prevKv: true }, {
    onEvents(batch) {
      events.push(...batch);
    },
    onError(err) {
      error = err;
    },
  });
  return {
    cancel: () => watch.cancel(),
    /** The events under `prefix` in (after, upTo], once the oracle has seen revision `upTo`. */
    async under(prefix: string, after: number, upTo: number): Promise<WatchEvent[]> {
      const deadline = Date.now() + 10_000;
      while ((events.at(-1)?.revision ?? afterRevision) < upTo) {
        if (error) throw error;
        if (Date.now() > deadline) assert.fail(`the oracle did not reach revision ${upTo}`);
        await sleep(5);
      }
      return events.filter((e) => e.revision > after && e.revision <= upTo && e.kv.key.startsWith(prefix));
    },
  };
}
