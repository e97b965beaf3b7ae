// What reading a kind at a version other than the stored one costs: core v1
// Events are stored as they are, and served again in the events group's
// shape, converted on every read. The same random gets of the same 1,000
// Events go through both paths on one server (built CLI child, fresh sqlite
// data dir), in alternated rounds; the server CPU per get of each is the
// median of its rounds (steadier than req/s on a shared machine).

import { vocabulary } from '../src/machinery/vocabulary.js';
import { sendJson } from './http.js';
import { withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianOfAlternating, rateCell } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';

export interface VersionsBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const POPULATION = 1_000;
const namespace = 'versions';
const goalRatio = 2;

export async function benchVersions(opts: VersionsBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 5_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 9);
  return withBenchServer('plat-bench-versions-', CONCURRENCY, async ({ server: s, agent: a, load: gen }) => {
    const send = async (method: string, path: string, body: unknown) => {
      const r = await sendJson(a, s.port, method, path, body, 10_000);
      if (r.status !== 201) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    };
    progress(`versions: ${fmtInt(POPULATION)} Events…`);
    await send('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    const core = `/api/v1/namespaces/${namespace}/events`;
    for (let i = 0; i < POPULATION; i++) {
      await send('POST', core, {
        metadata: { name: `ev-${String(i).padStart(5, '0')}` }, involvedObject: { kind: 'Namespace', name: namespace, apiVersion: 'v1' },
        reason: 'Measured', message: `event number ${i}`, type: 'Normal', source: { component: 'bench' }, count: 1,
      });
    }
    const paths = { stored: core, converted: `/apis/${vocabulary.eventsGroup}/v1/namespaces/${namespace}/events` };
    let seed = 1;
    const get = (collectionPath: string, count: number): PhaseSpec => ({ kind: 'get', namespace, prefix: 'ev-', population: POPULATION, count, seed: seed++, collectionPath });
    progress(`versions: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} gets at each version…`);
    const { stored, converted } = await medianOfAlternating(gen, paths, get, { pid: s.pid, count: COUNT, rounds: ROUNDS, timeoutMs: PHASE_TIMEOUT_MS });
    const ratio = converted.serverCpuMs / stored.serverCpuMs;
    return [
      { metric: `get Event at its stored version, core v1 (median of ${ROUNDS} × ${fmtInt(COUNT)} random GETs among ${fmtInt(POPULATION)}, alternating with the row below)`, result: rateCell(stored), target: '—' },
      {
        metric: `get the same Event converted to ${vocabulary.eventsGroup}/v1 (median of ${ROUNDS} × ${fmtInt(COUNT)})`,
        result: `${rateCell(converted)} · ${ratio.toFixed(2)}× the stored version's server CPU`,
        target: target(`within ${goalRatio}× the stored version's server CPU`, ratio <= goalRatio),
      },
    ];
  });
}
