// Reads of single objects for the server's own per-request checks (is this
// token's account still there?), as upstream's service-account token getter
// reads them: from the watch cache without waiting for it to catch up with
// the store (no storage round trip, no parse after the first while the
// decode stays in the derived cache), and from the store only when the cache
// does not hold the key: an object created a moment ago through another
// server, or whose event is still on its way, is found all the same.

import type { KubeObject } from '../api/kind.js';
import type { CacheSet } from '../storage/cache/index.js';
import type { Registry } from './registry.js';
import { storageFailure } from './storage-errors.js';
import type { MaybePromise } from '../machinery/maybe-async.js';

export class ObjectLookup {
  constructor(private readonly registry: Registry, private readonly caches: CacheSet) {}

  /** The object (frozen: read it, do not change it); undefined when absent or its kind is not served. */
  async get(group: string, version: string, resource: string, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const store = this.registry.store(group, version, resource);
    if (!store) return undefined;
    try {
      const cache = await this.caches.cacheFor(store.reader.keyRoot);
      const key = store.key(namespace, name);
      const kv = (cache.isReady ? cache.get(key) : undefined) ?? await this.registry.backend.get(key);
      return kv ? store.reader.stored(kv).object : undefined;
    } catch (e) {
      return storageFailure(e);
    }
  }

  /**
   * As get, but answered at once, without a promise, when the started watch
   * cache holds the object (the token checks of every request read so).
   */
  find(group: string, version: string, resource: string, namespace: string | undefined, name: string): MaybePromise<KubeObject | undefined> {
    const store = this.registry.store(group, version, resource);
    if (!store) return undefined;
    const kv = store.reader.cachedValue(store.key(namespace, name));
    if (!kv) return this.get(group, version, resource, namespace, name);
    try {
      return store.reader.stored(kv).object;
    } catch (e) {
      return storageFailure(e);
    }
  }
}
