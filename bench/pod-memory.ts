// What one stored pod costs in memory, part by part, at a chosen count
// (30,000 by default), in this process with the collector run between the
// steps (`node --expose-gc dist/bench/pod-memory.js [--pods 30000]`):
//   - its stored bytes as the store hands them over (one allocation each);
//   - the watch cache's entry (key, the KeyValue, its slots by key and in order);
//   - the spec.nodeName index's entry;
//   - one decoded copy (what an informer or the derived cache keeps);
//   - the event window's share while the pods are recent (CacheEvent.windowBytes).
// The pod is the one cluster-sim creates, stored as the server stores it
// (managed fields, defaults, status).

import { MemoryBackend } from '../src/storage/memory/store.js';
import { WatchCache } from '../src/storage/cache/watch-cache.js';
import { CacheEvent, CachedKeyValue } from '../src/storage/cache/types.js';
import { fmtInt } from './stats.js';
import { storedPod } from './stored-pod.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function used(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--pods');
  const count = at > 0 ? Number(process.argv[at + 1]) : 30_000;
  const nodes = Math.max(1, Math.round(count / 30));
  const root = '/registry/pods/';
  const rows: [string, number][] = [];
  let last = used();
  const step = (what: string) => {
    const now = used();
    rows.push([what, (now - last) / count]);
    last = now;
  };

  const values = Array.from({ length: count }, (_, i) => storedPod(i, `node-${String(i % nodes).padStart(5, '0')}`));
  const stored = values.reduce((n, v) => n + v.length, 0) / count;
  step('stored bytes as the store hands them (one allocation each)');
  const backend = new MemoryBackend();
  for (let i = 0; i < count; i++) await backend.create(`${root}sim-pods/pod-${String(i).padStart(6, '0')}`, values[i]!);
  values.length = 0;
  step('the memory store\'s own entry (not in a server on SQLite)');
  const cache = new WatchCache(backend, root);
  await cache.start();
  step('the watch cache\'s entry (key, KeyValue, slots by key and in key order)');
  cache.addIndex({ name: 'spec.nodeName', valueOf: (kv) => (JSON.parse(kv.value.toString()) as { spec: { nodeName: string } }).spec.nodeName });
  step('the spec.nodeName index\'s entry');
  const decoded = cache.list(root).items.map((kv) => JSON.parse(kv.value.toString()) as unknown);
  step('one decoded copy (an informer\'s, or the derived cache\'s while it holds it)');
  const sample = cache.list(root, { limit: 1 }).items[0]! as CachedKeyValue;
  const windowShare = new CacheEvent('put', sample, undefined, 1).windowBytes;
  rows.push(['the event window\'s share while the pod is recent (windowBytes of its ADDED event; the window holds at most 32 MiB)', windowShare]);

  process.stdout.write(`Memory per pod at ${fmtInt(count)} pods (${fmtInt(stored)} stored bytes each, ${nodes} nodes)\n\n| part | bytes per pod |\n|---|---|\n`);
  for (const [what, bytes] of rows) process.stdout.write(`| ${what} | ${fmtInt(bytes)} |\n`);
  cache.stop();
  await backend.close();
  if (decoded.length < 0) process.stdout.write('');
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
