// A backend that reports how long each store call takes, for the
// etcd_request_duration_seconds histogram of whichever store serves. Watches
// and bookkeeping calls go straight through.

import type { Backend, KeyValue, RangeOptions, RangeResult, Watch, WatchHandlers, WatchOptions } from './backend.js';

/** `operation`: get, list, create, update or delete; `key`: the key or prefix asked for. */
export type StorageObserver = (operation: string, key: string, seconds: number) => void;

export function timedBackend(inner: Backend, observe: StorageObserver): Backend {
  const timed = async <T>(operation: string, key: string, call: Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call;
    } finally {
      observe(operation, key, (performance.now() - started) / 1000);
    }
  };
  return {
    name: inner.name,
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    get: (key: string, revision?: number): Promise<KeyValue | undefined> => timed('get', key, inner.get(key, revision)),
    range: (prefix: string, options?: RangeOptions): Promise<RangeResult> => timed('list', prefix, inner.range(prefix, options)),
    create: (key: string, value: Buffer) => timed('create', key, inner.create(key, value)),
    update: (key: string, value: Buffer, expected: number) => timed('update', key, inner.update(key, value, expected)),
    delete: (key: string, expected?: number) => timed('delete', key, inner.delete(key, expected)),
    watch: (prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch => inner.watch(prefix, options, handlers),
    compact: (revision: number) => inner.compact(revision),
    check: () => inner.check(),
    close: () => inner.close(),
  };
}
