// The benches' targets as data: the goals each suite's rows are held to, read
// by the suites that check them, and the summary `npm run bench` prints after
// its table (every row with a target, met or missed). A goal changes here,
// not in the suite's code. bench/README.md lists them beside each suite.

import type { Row } from './table.js';

export const targets = {
  /** bench/run.ts: the foundation rows of `npm run bench`. */
  foundation: { restartMs: 500, idleRssMB: 100, createPerSec: 1_500, getPerSec: 5_000, listPerSec: 350, createRatio: 0.7, replaceRatio: 0.5 },
  /** bench/etcd.ts: the same load on a local etcd (`--backend etcd3`). */
  etcd: { createPerSec: 1_500, getPerSec: 5_000 },
  /** bench/reads.ts: lists of 10,000 ConfigMaps, the 1,000-watcher fan-out, RSS with them cached. */
  reads: { listMs: 300, fanOutP99Ms: 100, cachedRssMB: 300 },
  /** bench/memory.ts: RSS 30 s after each load, the restart holding 100,000 objects. */
  memory: { configMapsMB: 200, serviceAccountsMB: 400, bigMB: 500, restartMs: 1_000, bigListMs: 2_000 },
  /** bench/selectors.ts: filtered watchers beside unfiltered ones. */
  selectors: { cpuRatio: 1.5, latencyRatio: 1.2 },
} as const;

/** What a target cell says (table.ts writes `goal (met)` or `goal (MISSED)`). */
function verdict(cell: string): 'met' | 'missed' | undefined {
  if (cell.endsWith('(met)')) return 'met';
  if (cell.endsWith('(MISSED)')) return 'missed';
  return undefined;
}

/** The lines printed after the table: how many rows met their target, and each one that missed it. */
export function targetSummary(rows: readonly Row[]): string {
  const judged = rows.map((row) => ({ row, verdict: verdict(row.target) })).filter((r) => r.verdict !== undefined);
  const missed = judged.filter((r) => r.verdict === 'missed');
  const lines = [`targets: ${judged.length - missed.length} of ${judged.length} met${missed.length ? `, ${missed.length} missed:` : ''}`];
  for (const { row } of missed) lines.push(`  MISSED ${row.metric}: ${row.result} (target ${row.target.replace(/ \(MISSED\)$/, '')})`);
  return lines.join('\n') + '\n';
}
