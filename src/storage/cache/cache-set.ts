// The watch caches of one backend, one per resource key root, created and
// started on first use. They share one store feed (one backend watch), so a
// write anywhere moves every cache's revision forward.

import type { Backend } from '../backend.js';
import { WindowBudget } from './event-window.js';
import { StoreFeed } from './feed.js';
import type { WatchCacheOptions } from './types.js';
import type { CacheIndexDeclaration } from './value-index.js';
import { WatchCache } from './watch-cache.js';

export class CacheSet {
  private readonly feed: StoreFeed;
  /** One byte bound for the event windows of every cache of the set. */
  private readonly budget: WindowBudget;
  private readonly caches = new Map<string, Promise<WatchCache>>();
  /** The caches whose start has finished, for callers that must not wait (startedCache). */
  private readonly started = new Map<string, WatchCache>();
  private stopped = false;

  constructor(
    private readonly backend: Backend,
    private readonly options: WatchCacheOptions = {},
  ) {
    this.feed = new StoreFeed(backend);
    this.budget = new WindowBudget(options.maxWindowBytes);
  }

  /** Bytes the event windows of every cache hold together; never above `windowLimit`. */
  get windowBytes(): number {
    return this.budget.bytes;
  }

  get windowLimit(): number {
    return this.budget.maxBytes;
  }

  /**
   * The started cache of `root` (e.g. "/registry/serviceaccounts/"); a failed
   * start is retried on the next call. `indexes`: the cache keeps them (a
   * cache another caller started without them gains them).
   */
  cacheFor(root: string, indexes: readonly CacheIndexDeclaration[] = []): Promise<WatchCache> {
    if (this.stopped) return Promise.reject(new Error('the watch caches are stopped'));
    let pending = this.caches.get(root);
    if (pending && indexes.length > 0) {
      return pending.then((cache) => {
        for (const index of indexes) cache.addIndex(index);
        return cache;
      });
    }
    if (!pending) {
      const cache = new WatchCache(this.backend, root, { ...this.options, feed: this.feed, budget: this.budget });
      // Before the first load, which then builds them with the values.
      for (const index of indexes) cache.addIndex(index);
      pending = cache.start().then(() => {
        if (!this.stopped) this.started.set(root, cache);
        return cache;
      });
      this.caches.set(root, pending);
      pending.catch(() => {
        if (this.caches.get(root) === pending) this.caches.delete(root);
      });
    }
    return pending;
  }

  /** The cache of `root` if it has started, without waiting; undefined while it starts or before anyone asked for it. */
  startedCache(root: string): WatchCache | undefined {
    return this.started.get(root);
  }

  /** Roots with a cache (started or starting). */
  roots(): string[] {
    return [...this.caches.keys()];
  }

  /** Stop every cache (their watches end with 'Unavailable') and the shared feed. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    const pending = [...this.caches.values()];
    this.caches.clear();
    this.started.clear();
    const settled = await Promise.allSettled(pending);
    for (const result of settled) if (result.status === 'fulfilled') result.value.stop();
    this.feed.stop();
  }
}

const sets = new WeakMap<Backend, CacheSet>();

/**
 * The started cache of `root` on `backend`, from one CacheSet per backend
 * (the first call's options apply to every cache of that backend).
 */
export function watchCacheFor(backend: Backend, root: string, options: WatchCacheOptions = {}): Promise<WatchCache> {
  let set = sets.get(backend);
  if (!set) sets.set(backend, (set = new CacheSet(backend, options)));
  return set.cacheFor(root);
}

/** Stop the caches watchCacheFor made for `backend`. */
export async function stopWatchCaches(backend: Backend): Promise<void> {
  const set = sets.get(backend);
  sets.delete(backend);
  await set?.stopAll();
}
