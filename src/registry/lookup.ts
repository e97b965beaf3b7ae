// Reads of single objects for the server's own per-request checks (is this
// token's account still there?): from the watch cache, in memory, once the
// cache has seen the store's current revision, so the answer is as fresh as
// a read from the store but costs no storage round trip and no parse after
// the first (the cache keeps each version's decoded object).

import type { KubeObject } from '../api/kind.js';
import type { CacheSet } from '../storage/cache/index.js';
import type { Registry } from './registry.js';
import { storageFailure } from './storage-errors.js';

export class ObjectLookup {
  constructor(private readonly registry: Registry, private readonly caches: CacheSet) {}

  /** The object as stored now (frozen: read it, do not change it); undefined when absent or its kind is not served. */
  async get(group: string, version: string, resource: string, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const store = this.registry.store(group, version, resource);
    if (!store) return undefined;
    try {
      const cache = await this.caches.cacheFor(store.reader.keyRoot);
      await cache.waitUntilFresh(await this.registry.backend.currentRevision());
      const kv = cache.get(store.key(namespace, name));
      return kv ? store.reader.stored(kv).object : undefined;
    } catch (e) {
      return storageFailure(e);
    }
  }
}
