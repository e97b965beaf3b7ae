// Watch cache benchmark: how long one write takes to reach 1,000 watchers of
// the cache (p50/p99 over every delivery, and of the last watcher per event),
// and how long a list of 10,000 objects of about 2 KiB takes from memory.
// Runs standalone: npm run bench -- watchcache

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../src/storage/backend.js';
import { WatchCache } from '../src/storage/cache/watch-cache.js';
import { MemoryBackend } from '../src/storage/memory/store.js';
import { openSqliteBackend } from '../src/storage/sqlite/store.js';

export interface WatchCacheBenchRow {
  name: string;
  value: number;
  unit: string;
}

const root = '/registry/configmaps/';
const WATCHERS = 1000;
const EVENTS = 200;
const LIST_ITEMS = 10_000;
const LISTS = 200;

/** A ConfigMap of about 2 KiB, as stored (JSON without resourceVersion). */
function objectBytes(i: number): Buffer {
  return Buffer.from(JSON.stringify({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, namespace: `ns-${i % 10}`, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, labels: { app: 'bench' } },
    data: { payload: 'x'.repeat(1800) },
  }));
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

/** JS heap plus buffers, after a collection when node runs with --expose-gc. */
function memoryInUse(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/** One write at a time; each must reach every watcher before the next. */
async function fanOut(label: string, backend: Backend): Promise<WatchCacheBenchRow[]> {
  const cache = new WatchCache(backend, root);
  await cache.start();
  const deliveries = new Float64Array(EVENTS * WATCHERS);
  const slowest = new Float64Array(EVENTS);
  let sentAt = 0;
  let event = -1;
  let received = 0;
  let allReceived: (() => void) | undefined;
  const watches = Array.from({ length: WATCHERS }, (_, w) => cache.watch(root, cache.revision, {
    onEvents(events) {
      for (const e of events) {
        // What the server does: encode once per event, shared by every watcher.
        let frame = e.memo.get('json') as Buffer | undefined;
        if (!frame) e.memo.set('json', (frame = Buffer.from(`{"type":"ADDED","object":${e.kv.value.toString()}}\n`)), frame.length);
        if (frame.length === 0) throw new Error('empty frame');
        const latency = performance.now() - sentAt;
        deliveries[event * WATCHERS + w] = latency;
        if (++received === WATCHERS) {
          slowest[event] = latency;
          allReceived?.();
        }
      }
    },
    onError(err) {
      throw err;
    },
  }));
  for (event = 0; event < EVENTS; event++) {
    received = 0;
    const done = new Promise<void>((resolve) => (allReceived = resolve));
    sentAt = performance.now();
    await backend.create(`${root}ns-${event % 10}/fan-${event}`, objectBytes(event));
    await done;
  }
  for (const watch of watches) watch.cancel();
  cache.stop();
  deliveries.sort();
  slowest.sort();
  return [
    { name: `${label}: one event to ${WATCHERS} watchers, p50 of deliveries`, value: round(percentile(deliveries, 0.5)), unit: 'ms' },
    { name: `${label}: one event to ${WATCHERS} watchers, p99 of deliveries`, value: round(percentile(deliveries, 0.99)), unit: 'ms' },
    { name: `${label}: one event to ${WATCHERS} watchers, p50 of the last watcher`, value: round(percentile(slowest, 0.5)), unit: 'ms' },
    { name: `${label}: one event to ${WATCHERS} watchers, p99 of the last watcher`, value: round(percentile(slowest, 0.99)), unit: 'ms' },
  ];
}

async function listing(label: string, backend: Backend): Promise<WatchCacheBenchRow[]> {
  for (let i = 0; i < LIST_ITEMS; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => backend.create(`${root}ns-${(i + j) % 10}/cm-${i + j}`, objectBytes(i + j))));
  }
  const heapBefore = memoryInUse();
  const t = performance.now();
  const cache = new WatchCache(backend, root);
  await cache.start();
  const startMs = performance.now() - t;
  const heapDelta = memoryInUse() - heapBefore;
  const time = (op: () => unknown): Float64Array => {
    const samples = new Float64Array(LISTS);
    for (let i = 0; i < LISTS; i++) {
      const s = performance.now();
      op();
      samples[i] = performance.now() - s;
    }
    return samples.sort();
  };
  const full = time(() => {
    const { items } = cache.list(root);
    if (items.length < LIST_ITEMS) throw new Error(`listed ${items.length}`);
  });
  let page = 0;
  const paged = time(() => {
    const { items } = cache.list(`${root}ns-${page++ % 10}/`, { limit: 500 });
    if (items.length !== 500) throw new Error(`paged ${items.length}`);
  });
  cache.stop();
  return [
    { name: `${label}: cache start, reading ${LIST_ITEMS} objects of 2 KiB`, value: round(startMs), unit: 'ms' },
    { name: `${label}: heap and buffers held by the cache of ${LIST_ITEMS} objects`, value: Math.round(heapDelta / 1024 / 1024), unit: 'MB' },
    { name: `${label}: list of ${LIST_ITEMS} from the cache, p50`, value: round(percentile(full, 0.5)), unit: 'ms' },
    { name: `${label}: list of ${LIST_ITEMS} from the cache, p99`, value: round(percentile(full, 0.99)), unit: 'ms' },
    { name: `${label}: list of 500 in one namespace from the cache, p50`, value: round(percentile(paged, 0.5)), unit: 'ms' },
  ];
}

export async function benchWatchCache(): Promise<WatchCacheBenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-watchcache-'));
  const rows: WatchCacheBenchRow[] = [];
  try {
    const memory = new MemoryBackend();
    rows.push(...(await fanOut('watch cache (memory store)', memory)));
    await memory.close();
    const sqlite = openSqliteBackend(join(dir, 'store.db'));
    rows.push(...(await fanOut('watch cache (sqlite store, write included)', sqlite)));
    rows.push(...(await listing('watch cache (sqlite store)', sqlite)));
    await sqlite.close();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
