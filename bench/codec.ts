// What versioned kinds and the one codec cost at the stored version: this
// build and the last commit before them (built from git archive in a temporary folder),
// started side by side on fresh SQLite data dirs and driven by the same load
// in alternated rounds. Per round and build: random gets and unpaged lists of
// ConfigMaps, creates in a namespace nobody watches, and creates in one that
// 100 watchers watch (the difference, per event and watcher, is what a watch
// event costs). Each cell is the median of the rounds' server CPU per request.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchServer, cpuMsPrecise, settle, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { WatcherPool } from './watchers.js';
import { Row, target } from './table.js';
import { fmtInt, median } from './stats.js';

/** The last commit before versioned kinds (bf4bdb5 began them). */
export const codecBaselineCommit = 'b967566';

export interface CodecBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
  /** The commit to compare with (default: codecBaselineCommit). */
  baseline?: string;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const POPULATION = 1_000;
const LIST_ITEMS = 100;
const WATCHERS = 100;
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `commit`'s tree built in a temporary folder (extracted with git archive, so
 * no worktree stays registered if a run is killed); its folder, its CLI and a
 * clean-up. Every bench that compares with an earlier build uses this one.
 */
export function buildBaseline(commit: string, progress: (m: string) => void): { dir: string; cliPath: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-baseline-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  progress(`building ${commit} in ${dir}…`);
  try {
    execFileSync('sh', ['-c', `git -C "${repoRoot}" archive ${commit} | tar -x -C "${dir}"`], { stdio: 'ignore' });
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], { stdio: 'ignore' });
  } catch (e) {
    remove();
    throw e;
  }
  return { dir, cliPath: join(dir, 'dist/src/cli/main.js'), remove };
}

interface Side {
  name: string;
  server: BenchServer;
  load: LoadGenerator;
  watchers: WatcherPool;
  /** Server CPU ms per request, per round, by row. */
  cpu: Record<'get' | 'list' | 'create' | 'watchedCreate', number[]>;
}

export async function benchCodec(opts: CodecBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 1_000 : 4_000;
  const LISTS = quick ? 50 : 200;
  const CREATES = quick ? 300 : 1_000;
  const ROUNDS = opts.rounds ?? (quick ? 5 : 9);
  const commit = opts.baseline ?? codecBaselineCommit;
  const baseline = buildBaseline(commit, progress);
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    for (const [name, cliPath] of [['this build', undefined], [commit, baseline.cliPath]] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-codec-'));
      dirs.push(dataDir);
      const server = await startBenchServer({ dataDir, entry: cliPath });
      const load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: CONCURRENCY });
      sides.push({ name, server, load, watchers: new WatcherPool(server.url, server.creds, 2), cpu: { get: [], list: [], create: [], watchedCreate: [] } });
    }
    for (const s of sides) {
      progress(`codec: ${s.name}: ${fmtInt(POPULATION)} + ${LIST_ITEMS} ConfigMaps, ${WATCHERS} watchers…`);
      await s.load.run({ kind: 'namespaces', names: ['reads', 'lists', 'plain', 'watched'] }, PHASE_TIMEOUT_MS);
      await s.load.run({ kind: 'create-cm', namespace: 'reads', prefix: 'cm-', count: POPULATION, bytes: 1024 }, PHASE_TIMEOUT_MS);
      await s.load.run({ kind: 'create-cm', namespace: 'lists', prefix: 'cm-', count: LIST_ITEMS, bytes: 1024 }, PHASE_TIMEOUT_MS);
      await s.watchers.open('/api/v1/namespaces/watched/configmaps?watch=true', WATCHERS, 'marker');
      await settle(s.server.pid);
    }
    let seed = 1;
    const phases = (round: number): Record<keyof Side['cpu'], PhaseSpec> => ({
      get: { kind: 'get', namespace: 'reads', prefix: 'cm-', population: POPULATION, count: COUNT, seed: seed++, collectionPath: '/api/v1/namespaces/reads/configmaps' },
      list: { kind: 'list-cm', namespace: 'lists', prefix: 'cm-', count: LISTS, expectItems: LIST_ITEMS, concurrency: CONCURRENCY, checkEvery: 10 },
      create: { kind: 'create-cm', namespace: 'plain', prefix: `r${round}-`, count: CREATES, bytes: 1024 },
      watchedCreate: { kind: 'create-cm', namespace: 'watched', prefix: `r${round}-`, count: CREATES, bytes: 1024 },
    });
    // An untimed round first (JIT, sockets, caches).
    for (const s of sides) for (const spec of Object.values(phases(-1))) await s.load.run(spec.kind === 'get' ? { ...spec, count: COUNT / 4 } : spec, PHASE_TIMEOUT_MS);
    progress(`codec: ${ROUNDS} alternated rounds of gets, lists, creates and watched creates on both builds…`);
    for (let round = 0; round < ROUNDS; round++) {
      const specs = phases(round);
      for (const [row, spec] of Object.entries(specs) as [keyof Side['cpu'], PhaseSpec][]) {
        // Alternate which build goes first, so neither always meets the other's leftovers.
        for (const s of round % 2 ? [...sides].reverse() : sides) {
          const cpu0 = cpuMsPrecise(s.server.pid);
          const r = await s.load.run(spec, PHASE_TIMEOUT_MS);
          // Writes are charged the controller and watch work they leave.
          if (row === 'create' || row === 'watchedCreate') await settle(s.server.pid);
          s.cpu[row].push((cpuMsPrecise(s.server.pid) - cpu0) / r.requests);
        }
      }
    }
    const [now, before] = sides as [Side, Side];
    const us = (ms: number) => `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 0)} µs`;
    // Per round: what a create cost with watchers beyond one without, each round's pair measured back to back.
    const perEvent = (s: Side) => median(s.cpu.watchedCreate.map((w, i) => w - s.cpu.create[i]!)) / WATCHERS;
    const row = (metric: string, a: number, b: number, goal: number): Row => ({
      metric: `${metric} (median of ${ROUNDS} alternated rounds, server CPU per ${metric.startsWith('watch') ? 'event and watcher' : 'request'})`,
      result: `${us(a)} this build · ${us(b)} ${commit} · ${(a / b).toFixed(2)}×`,
      target: target(`within ${Math.round((goal - 1) * 100)} % of ${commit}`, a <= b * goal),
    });
    return [
      row(`get ConfigMap at its stored version, ${fmtInt(COUNT)} random among ${fmtInt(POPULATION)}`, median(now.cpu.get), median(before.cpu.get), 1.05),
      row(`list ${LIST_ITEMS} ConfigMaps at their stored version, ${LISTS} unpaged lists`, median(now.cpu.list), median(before.cpu.list), 1.05),
      row(`watch event of a ConfigMap create at its stored version, ${WATCHERS} watchers`, perEvent(now), perEvent(before), 1.05),
      row(`create ConfigMap of 1 KiB, ${fmtInt(CREATES)} per round`, median(now.cpu.create), median(before.cpu.create), 1.10),
    ];
  } finally {
    for (const s of sides) {
      await s.watchers.closeStreams().catch(() => {});
      await s.watchers.terminate().catch(() => {});
      await s.load.close().catch(() => {});
      await s.server.stop(2000).catch(() => {});
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    baseline.remove();
  }
}
