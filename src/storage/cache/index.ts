// The watch cache: per resource root, the latest values and a window of
// recent events in memory, in front of a Backend (see watch-cache.ts).
//
// How a consumer uses it (the cache itself knows nothing of objects):
//   const cache = await caches.cacheFor('/registry/serviceaccounts/');
//   list, resourceVersion unset/0:   cache.list(prefix, { startKey, limit })
//   list, NotOlderThan rv:           await cache.waitUntilFresh(rv); cache.list(prefix)
//   watch, rv unset/0:               const l = cache.list(prefix); send l.items as ADDED;
//                                    cache.watch(prefix, l.revision, handlers)   (same tick: no gap)
//   watch from rv:                   await cache.waitUntilFresh(rv); cache.watch(prefix, rv, handlers)
//   ADDED vs MODIFIED:               a put with prevKv is MODIFIED; prevKv also serves selector transitions
//   'FutureRevision' → 504 Too large resource version; 'Compacted' → 410 Expired;
//   'Unavailable' on a watch → end the stream (too slow, or the cache restarted).
//   indexed field:                   caches.cacheFor(root, [{ name, valueOf }]); then
//                                    cache.list(prefix, { index: { name, value } }) and
//                                    cache.watch(prefix, rev, handlers, { index: { name, value } })

export { CacheSet, stopWatchCaches, watchCacheFor } from './cache-set.js';
export { decodedBytes, DerivedCache, derivedCache } from './derived.js';
export type { Memo } from './derived.js';
export { defaultWindowBytes, WindowBudget } from './event-window.js';
export { StoreFeed } from './feed.js';
export type { FeedSubscriber, StoreFeedOptions } from './feed.js';
export { WatchCache } from './watch-cache.js';
export type { WatchCacheSetup } from './watch-cache.js';
export { CacheEvent, CachedKeyValue, cachedKeyValue } from './types.js';
export type { CacheIndexDeclaration, IndexCondition } from './value-index.js';
export type {
  CacheEventType, CacheListOptions, CacheListResult, CacheWatch, CacheWatchHandlers, CacheWatchOptions, WatchCacheOptions,
} from './types.js';
