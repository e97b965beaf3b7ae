// What the deprecation signals cost a request (bench/deprecated-server.ts):
// every request looks its REST object up for deprecation; one to a deprecated
// version also gets a Warning header, audit annotations and the gauge. The
// same random gets of 1,000 objects of two alike kinds, one at a current
// version and one at a deprecated version, go to one server (fresh sqlite data
// dir) in alternated rounds; the server CPU per get of each is the median of
// its rounds, as in bench/versions.ts.

import { sendJson } from './http.js';
import { withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianOfAlternating, rateCell } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';
import { productGroup } from '../src/machinery/vocabulary.js';

export interface DeprecationBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const namespace = 'deprecation';
const goalRatio = 1.1;
const group = productGroup('bench');

export async function benchDeprecation(opts: DeprecationBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 5_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 9);
  const POPULATION = quick ? 300 : 1_000;
  return withBenchServer('plat-bench-deprecation-', CONCURRENCY, async ({ server: s, agent: a, load: gen }) => {
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
    let seed = 1;
    const get = (collectionPath: string, count: number): PhaseSpec => ({ kind: 'get', namespace, prefix: 'w-', population: POPULATION, count, seed: seed++, collectionPath });
    progress(`deprecation: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} gets of each kind…`);
    const { current, deprecated } = await medianOfAlternating(gen, paths, get, { pid: s.pid, count: COUNT, rounds: ROUNDS, timeoutMs: PHASE_TIMEOUT_MS });
    const ratio = deprecated.serverCpuMs / current.serverCpuMs;
    return [
      { metric: `get an object at a current version (the deprecation lookup only; median of ${ROUNDS} × ${fmtInt(COUNT)} random GETs among ${fmtInt(POPULATION)}, alternating with the row below)`, result: rateCell(current), target: '—' },
      {
        metric: `get an alike object at a deprecated version (Warning header, audit annotations, gauge; median of ${ROUNDS} × ${fmtInt(COUNT)})`,
        result: `${rateCell(deprecated)} · ${ratio.toFixed(2)}× the current version's server CPU`,
        target: target(`within ${goalRatio}× the current version's server CPU`, ratio <= goalRatio),
      },
    ];
  }, { entry: new URL('./deprecated-server.js', import.meta.url).pathname });
}
