// What the deprecation signals cost a request (bench/deprecated-server.ts):
// every request looks its REST object up for deprecation; one to a deprecated
// version also gets a Warning header, audit annotations and the gauge. The
// same random gets of 1,000 objects of two alike kinds, one at a current
// version and one at a deprecated version, go to one server (fresh sqlite data
// dir) in alternated rounds; the server CPU per get of each is the median of
// its rounds, as in bench/versions.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { BenchServer, cpuMsPrecise, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';
import { productGroup } from '../src/machinery/vocabulary.js';

export interface DeprecationBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const POPULATION = 1_000;
const namespace = 'deprecation';
const goalRatio = 1.1;
const group = productGroup('bench');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchDeprecation(opts: DeprecationBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 1_000 : 5_000;
  const ROUNDS = quick ? 5 : 9;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-deprecation-'));
  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  let agent: Agent | undefined;
  try {
    server = await startBenchServer({ dataDir, entry: new URL('./deprecated-server.js', import.meta.url).pathname });
    const s = server;
    agent = new Agent({ keepAlive: true, maxSockets: 1, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key });
    const a = agent;
    const send = async (method: string, path: string, body: unknown) => {
      const r = await sendJson(a, s.port, method, path, body, 10_000);
      if (r.status !== 201) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    };
    const paths = { current: `/apis/${group}/v1/namespaces/${namespace}/widgets`, deprecated: `/apis/${group}/v1beta1/namespaces/${namespace}/oldwidgets` };
    progress(`deprecation: ${fmtInt(POPULATION)} objects of each kind…`);
    await send('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    for (const [key, path] of Object.entries(paths)) {
      const [apiVersion, kind] = key === 'current' ? [`${group}/v1`, 'Widget'] : [`${group}/v1beta1`, 'OldWidget'];
      for (let i = 0; i < POPULATION; i++) {
        await send('POST', path, { apiVersion, kind, metadata: { name: `w-${String(i).padStart(5, '0')}` }, spec: { size: i, color: 'blue' } });
      }
    }
    load = new LoadGenerator({ url: s.url, creds: s.creds, concurrency: CONCURRENCY });
    const gen = load;
    let seed = 1;
    const get = (collectionPath: string, count: number): PhaseSpec => ({ kind: 'get', namespace, prefix: 'w-', population: POPULATION, count, seed: seed++, collectionPath });
    for (const path of Object.values(paths)) await gen.run(get(path, COUNT / 5), PHASE_TIMEOUT_MS);
    const rounds: Record<keyof typeof paths, Measured[]> = { current: [], deprecated: [] };
    progress(`deprecation: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} gets of each kind…`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const k of Object.keys(paths) as (keyof typeof paths)[]) {
        const cpu0 = cpuMsPrecise(s.pid);
        const r = await gen.run(get(paths[k], COUNT), PHASE_TIMEOUT_MS);
        rounds[k].push({ ...r, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / r.requests });
      }
    }
    const typical = (xs: Measured[]): Measured => {
      const cpu = median(xs.map((x) => x.serverCpuMs));
      return { ...xs.find((x) => x.serverCpuMs === cpu)!, perSec: median(xs.map((x) => x.perSec)) };
    };
    const current = typical(rounds.current);
    const deprecated = typical(rounds.deprecated);
    const ratio = deprecated.serverCpuMs / current.serverCpuMs;
    return [
      { metric: `get an object at a current version (the deprecation lookup only; median of ${ROUNDS} × ${fmtInt(COUNT)} random GETs among ${fmtInt(POPULATION)}, alternating with the row below)`, result: rateCell(current), target: '—' },
      {
        metric: `get an alike object at a deprecated version (Warning header, audit annotations, gauge; median of ${ROUNDS} × ${fmtInt(COUNT)})`,
        result: `${rateCell(deprecated)} · ${ratio.toFixed(2)}× the current version's server CPU`,
        target: target(`within ${goalRatio}× the current version's server CPU`, ratio <= goalRatio),
      },
    ];
  } finally {
    agent?.destroy();
    await load?.close().catch(() => {});
    await server?.stop(2000).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Alone: node dist/bench/deprecation.js [--quick]
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const rows = await benchDeprecation({ quick, progress: (m) => process.stderr.write(`${m}\n`) });
  for (const r of rows) process.stdout.write(`| ${r.metric} | ${r.result} | ${r.target} |\n`);
}
