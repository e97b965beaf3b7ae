// The store and the watch caches on it, as one part: the backend the options
// name, its compactor, the caches (all fed by one watch of the backend) and
// their metrics. What the server asks of the store is timed; what the
// metrics count of it is not.

import type { Logger } from 'pino';
import type { Registry as MetricRegistry } from 'prom-client';
import { openBackend, startCompactor, timedBackend, type Backend, type StorageObserver } from '../storage/index.js';
import { CacheSet } from '../storage/cache/index.js';
import type { ServerOptions } from '../server/options.js';
import { registerCacheMetrics } from './cachemetrics.js';
import type { Closers } from './closers.js';

export interface Storage {
  /** The store itself, untimed. */
  backend: Backend;
  /** The store as the server reads and writes it. */
  timed: Backend;
  caches: CacheSet;
}

export function openStorage(options: ServerOptions, log: Logger, closers: Closers, observer: StorageObserver, metrics: MetricRegistry): Storage {
  const backend = openBackend({
    kind: options.storageBackend, dataDir: options.dataDir,
    servers: options.etcdServers, prefix: options.etcdPrefix,
    caFile: options.etcdCaFile, certFile: options.etcdCertFile, keyFile: options.etcdKeyFile,
    requestTimeoutMs: options.requestTimeoutMs,
    eventTtlSeconds: Math.max(1, Math.round(options.eventTtlMs / 1000)),
    maxValueBytes: options.maxStoredObjectBytes,
    // The store's own recent events for its watchers (the caches' feed) are bounded as the caches' windows are.
    watchHubBytes: options.watchCacheWindowBytes,
    notice: (line) => log.info(line),
  });
  closers.add(() => backend.close());
  const compactor = startCompactor(backend, options.etcdCompactionIntervalMs);
  closers.add(() => compactor.stop());
  const timed = timedBackend(backend, observer);
  const caches = new CacheSet(timed, {
    historyWindowMs: options.etcdCompactionIntervalMs, maxBuffered: options.watchMaxBufferedEvents, maxWindowBytes: options.watchCacheWindowBytes,
  });
  closers.add(() => caches.stopAll());
  registerCacheMetrics(metrics, caches, backend);
  return { backend, timed, caches };
}
