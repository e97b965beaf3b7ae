// Storage benchmark: write throughput with concurrent callers (group commit),
// read latency, and paged ranges. Runs standalone: npm run bench -- storage

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../src/storage/backend.js';
import { MemoryBackend } from '../src/storage/memory/store.js';
import { openSqliteBackend } from '../src/storage/sqlite/store.js';

export interface BenchRow {
  name: string;
  opsPerSec: number;
  p50ms: number;
  p99ms: number;
}

const value = Buffer.from(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b'.repeat(200) } }));

/** Run `total` operations from `callers` concurrent loops, timing each. */
async function measure(name: string, total: number, callers: number, op: (i: number) => Promise<unknown>): Promise<BenchRow> {
  const latencies = new Float64Array(total);
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: callers }, async () => {
    while (next < total) {
      const i = next++;
      const t = performance.now();
      await op(i);
      latencies[i] = performance.now() - t;
    }
  }));
  const elapsedMs = performance.now() - started;
  latencies.sort();
  return {
    name,
    opsPerSec: Math.round(total / (elapsedMs / 1000)),
    p50ms: round(latencies[Math.floor(total * 0.5)]!),
    p99ms: round(latencies[Math.floor(total * 0.99)]!),
  };
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;
const keyOf = (i: number): string => `/registry/configmaps/default/cm-${String(i).padStart(6, '0')}`;

/** Creates, updates, gets and pages `keys` keys in `backend`. */
export async function measureBackend(label: string, backend: Backend, keys: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  rows.push(await measure(`${label} create, 16 callers`, keys, 16, (i) => backend.create(keyOf(i), value)));
  const revisions = new Map<number, number>();
  for (const kv of (await backend.range('/registry/configmaps/')).items) revisions.set(Number(kv.key.slice(-6)), kv.modRevision);
  rows.push(await measure(`${label} update, 16 callers`, keys, 16, async (i) => {
    const kv = await backend.update(keyOf(i), value, revisions.get(i)!);
    revisions.set(i, kv.modRevision);
  }));
  rows.push(await measure(`${label} create, 1 caller`, 2000, 1, (i) => backend.create(`/registry/secrets/default/s-${i}`, value)));
  rows.push(await measure(`${label} get`, 50_000, 1, (i) => backend.get(keyOf((i * 7919) % keys))));
  rows.push(await measure(`${label} range limit 500 of ${keys}`, 200, 1, (i) =>
    backend.range('/registry/configmaps/', { limit: 500, startKey: keyOf((i * 97) % keys) })));
  return rows;
}

/** The time to open a file holding `keys` keys written once (the sqlite unit test's file). */
async function openRow(path: string, keys: number): Promise<BenchRow> {
  const store = openSqliteBackend(path);
  const pad = 'x'.repeat(200);
  await Promise.all(Array.from({ length: keys }, (_, i) => store.create(`/registry/things/ns/item-${i}`, Buffer.from(JSON.stringify({ i, pad })))));
  await store.close();
  const t = performance.now();
  const reopened = openSqliteBackend(path);
  const ms = performance.now() - t;
  await reopened.close();
  return { name: `sqlite open, ${keys.toLocaleString('en-US')} keys written once`, opsPerSec: 0, p50ms: round(ms), p99ms: 0 };
}

/** The raw store rows; `quick` writes 5,000 keys instead of 20,000. */
export async function benchStorage(quick = false): Promise<BenchRow[]> {
  const keys = quick ? 5_000 : 20_000;
  const dir = mkdtempSync(join(tmpdir(), 'bench-storage-'));
  try {
    const sqlite = openSqliteBackend(join(dir, 'store.db'));
    const rows = await measureBackend('sqlite', sqlite, keys);
    await sqlite.close();
    const t = performance.now();
    const reopened = openSqliteBackend(join(dir, 'store.db'));
    rows.push({ name: `sqlite open, ${(keys + 2_000).toLocaleString('en-US')} keys`, opsPerSec: 0, p50ms: round(performance.now() - t), p99ms: 0 });
    await reopened.close();
    rows.push(await openRow(join(dir, 'fresh.db'), 10_000));
    const memory = new MemoryBackend();
    rows.push(...(await measureBackend('memory', memory, keys)));
    await memory.close();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
