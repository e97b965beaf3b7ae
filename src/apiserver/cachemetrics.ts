// Metrics of the watch caches and of what consistent reads cost the store:
// the bytes their event windows hold (bounded by --watch-cache-window-bytes),
// the bytes of decodes and encodings kept for reuse, and the reads of the
// store's current revision that consistent reads wait on (shared by the
// reads that wait together); and the recent events the store itself keeps in
// memory for its watchers, bounded in bytes too.

import { Counter, Gauge, type Registry as MetricsRegistry } from 'prom-client';
import { declareMetric } from '../machinery/metricdeclaration.js';
import type { Backend } from '../storage/backend.js';
import { derivedCache, type CacheSet } from '../storage/cache/index.js';

export function registerCacheMetrics(metrics: MetricsRegistry, caches: CacheSet, backend: Backend): void {
  const registers = [metrics];
  new Gauge({
    name: 'apiserver_watch_cache_window_bytes', help: 'Bytes held by the events of every watch cache window (the values and previous values they carry).', registers,
    collect() { this.set(caches.windowBytes); },
  });
  new Gauge({
    name: 'apiserver_watch_cache_window_limit_bytes', help: 'Most bytes the watch cache windows may hold together (--watch-cache-window-bytes).', registers,
    collect() { this.set(caches.windowLimit); },
  });
  new Gauge({
    name: 'apiserver_watch_cache_derived_bytes', help: 'Estimated bytes of decoded objects and encoded watch events kept for reuse (bounded, process-wide).', registers,
    collect() { this.set(derivedCache.bytes); },
  });
  // The store's own recent events for its watchers (the caches' feed, watches older than a cache's window).
  if (backend.watchMemory) {
    const held = () => backend.watchMemory!;
    new Gauge(declareMetric(metrics, {
      name: 'apiserver_storage_watch_events', help: 'Recent events the storage keeps in memory for its watchers; older ones are read back from its history.',
      collect() { this.set(held().events); },
    }));
    new Gauge(declareMetric(metrics, {
      name: 'apiserver_storage_watch_bytes', help: 'Bytes held by the recent events the storage keeps in memory for its watchers (the values and previous values they carry).',
      collect() { this.set(held().bytes); },
    }));
    new Gauge(declareMetric(metrics, {
      name: 'apiserver_storage_watch_limit_bytes', help: 'Most bytes the recent events the storage keeps in memory for its watchers may hold (--watch-cache-window-bytes).',
      collect() { this.set(held().limitBytes); },
    }));
  }
  let counted = 0;
  new Counter({
    name: 'apiserver_storage_revision_reads_total', help: 'Reads of the storage\'s current revision made for consistent reads (one serves every read waiting at the time).', registers,
    collect() {
      const now = backend.revisionReads ?? 0;
      if (now > counted) this.inc(now - counted);
      counted = now;
    },
  });
}
