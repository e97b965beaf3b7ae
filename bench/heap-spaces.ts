// Where a server's memory sits after a write load, to compare Node lines:
// RSS beside V8's own figures (each heap space's committed size, external
// memory) read from the server's /metrics, after the ConfigMap creates of
// the reads bench. What V8 commits but the objects do not use is V8's heap
// sizing; what the objects use is ours.
// Usage: node dist/bench/heap-spaces.js [count]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminGet, rssBytes, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import { fmtMB } from './stats.js';

const count = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'bench-heap-'));
const server = await startBenchServer({ dataDir: dir });
const load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: 16 });
try {
  await load.run({ kind: 'namespaces', names: ['bench-cm'] }, 60_000);
  await load.run({ kind: 'create-cm', namespace: 'bench-cm', prefix: 'cm-', count, bytes: 2048 }, 600_000);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rss = rssBytes(server.pid);
  const metrics = (await adminGet(server, '/metrics')).text;
  const sample = (name: string, space?: string): number => {
    const label = space ? `\\{space="${space}"\\}` : '';
    const m = new RegExp(`^${name}${label} (\\S+)$`, 'm').exec(metrics);
    return m ? Number(m[1]) : NaN;
  };
  const spaces = [...metrics.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\}/gm)].map((m) => m[1]!);
  const lines = [`Node ${process.version}, after ${count} ConfigMap creates of 2 KiB:`, `  RSS ${fmtMB(rss)}`];
  lines.push(`  V8 heap committed ${fmtMB(sample('nodejs_heap_size_total_bytes'))}, used ${fmtMB(sample('nodejs_heap_size_used_bytes'))}`);
  for (const space of spaces) {
    lines.push(`    ${space}: committed ${fmtMB(sample('nodejs_heap_space_size_total_bytes', space))}, used ${fmtMB(sample('nodejs_heap_space_size_used_bytes', space))}`);
  }
  lines.push(`  external ${fmtMB(sample('nodejs_external_memory_bytes'))}`);
  console.log(lines.join('\n'));
} finally {
  await load.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
