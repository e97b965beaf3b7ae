// What the bounds against hostile input (issue 38) cost on the request path:
// this build beside the last commit before them (built in a temporary
// folder), both loaded in this one process and measured in alternated
// rounds, so the machine's load falls on both alike. Per round and build:
// raw store writes (creates, then updates of 2 KiB values with a watcher
// open, on SQLite and in memory: the stored-size check and the watch hub's
// byte bound are on this path), a label selector with a 5,000-value `in`
// set matched against 3,000 label sets (set-based values now in a Set), and
// an operator schema's validation with its 3 CEL rules and with 2 more on
// RE2 patterns (the runtime meter now charges calls by the size they make).
// Each cell is the median of the rounds' CPU per operation.
//
//   node dist/bench/bounds.js [--quick] [--baseline <commit>]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Backend } from '../src/storage/backend.js';
import type { CompiledSchema } from '../src/api/validation/index.js';
import type { Labels } from '../src/machinery/selectors.js';
import { buildBaseline } from './codec.js';
import { operatorObject, operatorSchema } from './schemavalidation.js';
import { runAlone } from './session.js';
import { Row } from './table.js';
import { fmtCpu, median } from './stats.js';

/** The last commit before the bounds of issue 38. */
export const boundsBaselineCommit = 'e6652da';

interface Build {
  name: string;
  openSqlite(path: string): Backend;
  openMemory(): Backend;
  parseLabelSelector(text: string): { matches(labels: Labels): boolean };
  schemas: { rules: CompiledSchema; regex: CompiledSchema };
}

/** The parts measured, loaded from a build's dist folder. */
async function loadBuild(name: string, distSrc: string): Promise<Build> {
  const load = async (file: string) => import(pathToFileURL(join(distSrc, file)).href);
  // The storage index, which exports both stores wherever a build keeps their files.
  const [storage, selectors, validation] = await Promise.all([
    load('storage/index.js'), load('machinery/selectors.js'), load('api/validation/index.js'),
  ]);
  return {
    name,
    openSqlite: (path) => storage.openSqliteBackend(path),
    openMemory: () => new storage.MemoryBackend(),
    parseLabelSelector: selectors.parseLabelSelector,
    schemas: { rules: validation.compileSchema(operatorSchema(true)), regex: validation.compileSchema(operatorSchema(true, true)) },
  };
}

const cpuMicros = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** CPU µs per write: `count` creates then `count` updates of 2 KiB values from 16 callers, with one watcher open. */
async function storeWrites(open: () => Backend, count: number): Promise<number> {
  const value = Buffer.from(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b'.repeat(2000) } }));
  const store = open();
  const watch = store.watch('/registry/', { afterRevision: 0, prevKv: true }, { onEvents() {}, onError() {} });
  const key = (i: number) => `/registry/configmaps/default/cm-${i}`;
  const t0 = process.cpuUsage();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < count) await store.create(key(next++), value); }));
  next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) {
      const i = next++;
      const kv = await store.get(key(i));
      await store.update(key(i), value, kv!.modRevision);
    }
  }));
  const micros = cpuMicros(t0) / (2 * count);
  watch.cancel();
  await store.close();
  return micros;
}

/** CPU µs per label set matched by a selector of 5,000 `in` values. */
function selectorMatches(build: Build): number {
  const values = Array.from({ length: 5_000 }, (_, i) => `value-${i}`);
  const selector = build.parseLabelSelector(`app in (${values.join(',')})`);
  const labelSets = Array.from({ length: 3_000 }, (_, i) => ({ app: `value-${(i * 7) % 10_000}`, tier: 'backend' }));
  const t0 = process.cpuUsage();
  let matched = 0;
  for (let r = 0; r < 5; r++) for (const labels of labelSets) if (selector.matches(labels)) matched++;
  if (matched !== 5 * labelSets.filter((l) => Number(l.app.slice(6)) < 5_000).length) throw new Error('selector bench: wrong matches');
  return cpuMicros(t0) / (5 * labelSets.length);
}

/** CPU µs per object validated and defaulted by `schema`. */
function validations(schema: CompiledSchema, count: number): number {
  const objects = Array.from({ length: count }, (_, i) => operatorObject(i));
  const t0 = process.cpuUsage();
  for (const o of objects) {
    schema.applyDefaults(o);
    if (schema.validate(o).length) throw new Error('bounds bench: the operator object is invalid');
  }
  return cpuMicros(t0) / count;
}

export async function benchBounds(opts: { quick: boolean; progress: (m: string) => void; baseline?: string }): Promise<Row[]> {
  const rounds = opts.quick ? 3 : 7;
  const writes = opts.quick ? 1_000 : 5_000;
  const objects = opts.quick ? 2_000 : 10_000;
  const baseline = buildBaseline(opts.baseline ?? boundsBaselineCommit, opts.progress);
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-bounds-'));
  try {
    const builds = [
      await loadBuild('baseline', join(baseline.dir, 'dist/src')),
      await loadBuild('this build', new URL('../src', import.meta.url).pathname),
    ];
    const cells = ['sqlite writes', 'memory writes', 'selector', 'schema + 3 CEL rules', 'schema + 2 regex rules'] as const;
    const figures = new Map(builds.map((b) => [b.name, new Map(cells.map((c) => [c, [] as number[]]))]));
    let db = 0;
    for (let round = 0; round < rounds; round++) {
      opts.progress(`bounds: round ${round + 1} of ${rounds}…`);
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const add = (cell: (typeof cells)[number], micros: number) => figures.get(build.name)!.get(cell)!.push(micros);
        add('sqlite writes', await storeWrites(() => build.openSqlite(join(dir, `store-${db++}.db`)), writes));
        add('memory writes', await storeWrites(() => build.openMemory(), writes));
        add('selector', selectorMatches(build));
        add('schema + 3 CEL rules', validations(build.schemas.rules, objects));
        add('schema + 2 regex rules', validations(build.schemas.regex, objects));
      }
    }
    const [base, current] = builds.map((b) => figures.get(b.name)!);
    const what: Record<(typeof cells)[number], string> = {
      'sqlite writes': `SQLite store: a create or update of 2 KiB with a watcher open (${writes} of each, 16 callers; the stored-size check and the watch hub's byte bound)`,
      'memory writes': `memory store: the same writes (the stored-size check)`,
      selector: 'label selector `app in (…5,000 values)` matched against one label set (3,000 sets × 5)',
      'schema + 3 CEL rules': 'validate + default an object of the operator schema with its 3 CEL rules (the runtime meter charging by size)',
      'schema + 2 regex rules': 'the same schema with 2 more rules on RE2 patterns (`matches`, `find`)',
    };
    return cells.map((cell) => {
      const ratio = median(current!.get(cell)!.map((x, i) => x / base!.get(cell)![i]!));
      return {
        metric: `bounds: ${what[cell]} (CPU per operation, median of ${rounds} alternated rounds)`,
        result: `${fmtCpu(median(current!.get(cell)!) / 1000)} · ${opts.baseline ?? boundsBaselineCommit}: ${fmtCpu(median(base!.get(cell)!) / 1000)} · ${ratio.toFixed(2)}× (median of the rounds' ratios)`,
        target: '—',
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    baseline.remove();
  }
}

// Alone: node dist/bench/bounds.js [--quick] [--baseline <commit>]
await runAlone(import.meta.url, (o) => {
  const at = process.argv.indexOf('--baseline');
  return benchBounds({ ...o, baseline: at > 0 ? process.argv[at + 1] : undefined });
});
