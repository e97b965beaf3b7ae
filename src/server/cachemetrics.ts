// Metrics of the watch caches and of what consistent reads cost the store:
// the bytes their event windows hold (bounded by --watch-cache-window-bytes),
// the bytes of decodes and encodings kept for reuse, and the reads of the
// store's current revision that consistent reads wait on (shared by the
// reads that wait together).

import { Counter, Gauge, type Registry as MetricsRegistry } from 'prom-client';
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
