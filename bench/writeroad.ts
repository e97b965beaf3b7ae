// What the write road in upstream's order costs (managed fields before
// mutating admission, one road for every write, empty collections dropped):
// this build and the commit before it (extracted with git archive into a
// temporary folder and built there), started side by side on fresh SQLite
// data dirs and driven by the same load in alternated rounds. Per round and
// build: ConfigMap and Deployment creates (POST), server-side applies that
// create, and server-side applies that change a label. Each cell is the
// median of the rounds' server CPU per request.
// Both builds run the same admission plugins: the target is about the write
// steps, and e6652da predates most plugins (issue 41 measures those against
// every plugin off). Each build is started with the default plugins it would
// run beyond e6652da's turned off (the names it knows; a name it has never
// heard of is a plugin it never ran), so a Deployment's pods meet
// NamespaceLifecycle, the certificate plugins and the webhook plugins on both.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { buildBaseline } from './codec.js';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BenchServer, cpuMsPrecise, settle, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { Row, target } from './table.js';
import { fmtInt, median } from './stats.js';
import { defaultOnPlugins } from '../src/admission/plugin-names.js';

/** The last commit before the reordered write road (issue 40). */
export const writeRoadBaselineCommit = 'e6652da';

/**
 * The admission plugins e6652da ran by default: its default set less the
 * names it had no implementation of (its admission/index.ts factories).
 */
export const baselineRunningPlugins: readonly string[] = [
  'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction',
  'MutatingAdmissionWebhook', 'NamespaceLifecycle', 'ValidatingAdmissionWebhook',
];

/** The plugins a build whose names are `known` turns off to run only the baseline's: this build's defaults beyond them. */
export function pluginsOffFor(known: ReadonlySet<string>): string[] {
  return [...defaultOnPlugins].filter((name) => !baselineRunningPlugins.includes(name) && known.has(name)).sort();
}

/** The plugin names a build knows, read from its built admission/plugin-names.js. */
async function knownPluginNames(cliPath: string | undefined): Promise<Set<string>> {
  const file = cliPath === undefined ? '../src/admission/plugin-names.js' : pathToFileURL(join(dirname(cliPath), '../admission/plugin-names.js')).href;
  const names = (await import(file) as { orderedPluginNames: readonly string[] }).orderedPluginNames;
  return new Set(names);
}

export interface WriteRoadBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
  baseline?: string;
  /**
   * A folder where the baseline is already built (git archive, its own
   * `npm ci`, tsc): used as it is and kept. A baseline built here links this
   * tree's node_modules, which fails once its dependencies differ (e6652da
   * still needs etcd3).
   */
  baselineDir?: string;
  /** Alternated rounds (medians steady with more where the machine is loaded); 3 quick, 7 otherwise. */
  rounds?: number;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const BYTES = 1024;


type RowName = 'createCm' | 'createDeployment' | 'applyCm' | 'applyDeployment' | 'reapplyCm' | 'reapplyDeployment';

interface Side {
  name: string;
  server: BenchServer;
  load: LoadGenerator;
  cpu: Record<RowName, number[]>;
}

export async function benchWriteRoad(opts: WriteRoadBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 1_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 7);
  const commit = opts.baseline ?? writeRoadBaselineCommit;
  const baseline = opts.baselineDir ? preparedBaseline(opts.baselineDir) : buildBaseline(commit, progress);
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    for (const [name, cliPath] of [['this build', undefined], [commit, baseline.cliPath]] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-writeroad-data-'));
      dirs.push(dataDir);
      const off = pluginsOffFor(await knownPluginNames(cliPath));
      progress(`${name}: --disable-admission-plugins=${off.join(',')}`);
      const server = await startBenchServer({ dataDir, entry: cliPath, extraArgs: [`--disable-admission-plugins=${off.join(',')}`] });
      const load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: CONCURRENCY });
      sides.push({ name, server, load, cpu: { createCm: [], createDeployment: [], applyCm: [], applyDeployment: [], reapplyCm: [], reapplyDeployment: [] } });
      await load.run({ kind: 'namespaces', names: ['road'] }, PHASE_TIMEOUT_MS);
    }
    const phases = (round: number): Record<RowName, PhaseSpec> => ({
      createCm: { kind: 'create-cm', namespace: 'road', prefix: `c${round}-`, count: COUNT, bytes: BYTES },
      createDeployment: { kind: 'create-deployment', namespace: 'road', prefix: `d${round}-`, count: COUNT },
      applyCm: { kind: 'apply', what: 'cm', namespace: 'road', prefix: `ac${round}-`, count: COUNT, bytes: BYTES, round },
      applyDeployment: { kind: 'apply', what: 'deployment', namespace: 'road', prefix: `ad${round}-`, count: COUNT, bytes: BYTES, round },
      reapplyCm: { kind: 'apply', what: 'cm', namespace: 'road', prefix: `ac${round}-`, count: COUNT, bytes: BYTES, round: round + 1000 },
      reapplyDeployment: { kind: 'apply', what: 'deployment', namespace: 'road', prefix: `ad${round}-`, count: COUNT, bytes: BYTES, round: round + 1000 },
    });
    // An untimed round first (JIT, sockets, caches).
    for (const s of sides) for (const spec of Object.values(phases(-1))) await s.load.run(spec, PHASE_TIMEOUT_MS);
    progress(`admission plugins on both builds: ${baselineRunningPlugins.join(', ')}`);
    progress(`write road: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} creates, applies and re-applies of ConfigMaps and Deployments on both builds…`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [row, spec] of Object.entries(phases(round)) as [RowName, PhaseSpec][]) {
        // Alternate which build goes first, so neither always meets the other's leftovers.
        for (const s of round % 2 ? [...sides].reverse() : sides) {
          await settle(s.server.pid);
          const cpu0 = cpuMsPrecise(s.server.pid);
          const r = await s.load.run(spec, PHASE_TIMEOUT_MS);
          // Writes are charged the controller and watch work they leave (a Deployment's ReplicaSet).
          await settle(s.server.pid);
          s.cpu[row].push((cpuMsPrecise(s.server.pid) - cpu0) / r.requests);
        }
      }
    }
    const [now, before] = sides as [Side, Side];
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    const row = (metric: string, name: RowName): Row => {
      const [a, b] = [median(now.cpu[name]), median(before.cpu[name])];
      return {
        metric: `write road: ${metric}, ${fmtInt(COUNT)} per round (median of ${ROUNDS} alternated rounds, server CPU per request, both with ${writeRoadBaselineCommit}'s admission plugins)`,
        result: `${ms(a)} this build · ${ms(b)} ${commit} · ${(a / b).toFixed(2)}×`,
        target: target(`within 5 % of ${commit}`, a <= b * 1.05),
      };
    };
    return [
      row('create ConfigMap of 1 KiB (POST)', 'createCm'),
      row('create Deployment (POST)', 'createDeployment'),
      row('server-side apply creating a ConfigMap of 1 KiB', 'applyCm'),
      row('server-side apply creating a Deployment', 'applyDeployment'),
      row('server-side apply changing a ConfigMap\'s label', 'reapplyCm'),
      row('server-side apply changing a Deployment\'s label', 'reapplyDeployment'),
    ];
  } finally {
    for (const s of sides) {
      await s.load.close().catch(() => {});
      await s.server.stop(2000).catch(() => {});
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    baseline.remove();
  }
}

/** A baseline built beforehand in `dir`: its CLI, left in place afterwards. */
function preparedBaseline(dir: string): { cliPath: string; remove: () => void } {
  const cliPath = join(resolve(dir), 'dist/src/cli/main.js');
  if (!existsSync(cliPath)) throw new Error(`${dir} holds no build (${cliPath} is missing): run npm ci and tsc there first`);
  return { cliPath, remove: () => {} };
}

// Alone: node dist/bench/writeroad.js [--quick] [--rounds <n>] [--baseline <commit>] [--baseline-dir <built folder>]
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const arg = (flag: string) => {
    const at = process.argv.indexOf(flag);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const rounds = arg('--rounds') === undefined ? undefined : Number(arg('--rounds'));
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds takes a positive whole number');
  const rows = await benchWriteRoad({ quick, rounds, baseline: arg('--baseline'), baselineDir: arg('--baseline-dir'), progress: (m) => process.stderr.write(`${m}\n`) });
  for (const r of rows) process.stdout.write(`| ${r.metric} | ${r.result} | ${r.target} |\n`);
}
