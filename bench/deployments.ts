// What a Deployment costs beside a ConfigMap: creates, gets and lists of 500
// of Deployments whose template is the pods bench's Pod (defaulted and
// validated with the pod template's rules), beside ConfigMaps of the same
// stored size, on one server, in alternated rounds; each row is the median
// of its rounds, by server CPU per request (bench/alternate.ts).

import { sendJson } from './http.js';
import { settle } from './child.js';
import { withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianOfAlternating, rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';
import type { PodsBenchOptions } from './pods.js';

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const namespace = 'deployments-bench';
const deployments = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

export async function benchDeployments(opts: PodsBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  return withBenchServer('plat-bench-deployments-', CONCURRENCY, async ({ server: s, agent, load: gen }) => {
    for (const ns of [namespace, 'deployments-list', 'cms-list']) {
      const made = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: ns } }, 10_000);
      if (made.status !== 201) throw new Error(`namespace ${ns}: HTTP ${made.status}`);
    }
    // The ConfigMaps are made as large as a stored Deployment is (managedFields and defaults included), measured on one.
    await gen.run({ kind: 'create-deployment', namespace, prefix: 'probe-', count: 1 }, PHASE_TIMEOUT_MS);
    const bytes = (await sendJson(agent, s.port, 'GET', `${deployments(namespace)}/probe-00000`, undefined, 10_000)).body.length;
    const o = { pid: s.pid, count: COUNT, rounds: ROUNDS, timeoutMs: PHASE_TIMEOUT_MS };
    const kinds = { deployment: 'deployment', cm: 'cm' };

    progress(`deployments: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Deployment and ConfigMap creates…`);
    let batch = 0;
    const create = (kind: string, count: number): PhaseSpec => (kind === 'deployment'
      ? { kind: 'create-deployment', namespace, prefix: `d${batch++}-`, count }
      : { kind: 'create-cm', namespace, prefix: `c${batch++}-`, count, bytes });
    await settle(s.pid);
    const creates = await medianOfAlternating(gen, kinds, create, o);

    // Gets of the warm-up batches (d0-, c1-), checked by their names' bytes (the client does not parse them).
    progress(`deployments: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Deployment and ConfigMap gets…`);
    await settle(s.pid);
    let seed = 1;
    const get = (collectionPath: string, count: number): PhaseSpec => ({
      kind: 'get', namespace, prefix: collectionPath.endsWith('deployments') ? 'd0-' : 'c1-', population: COUNT / 5, count, seed: seed++, collectionPath, unparsed: true,
    });
    const gets = await medianOfAlternating(gen, { deployment: deployments(namespace), cm: configMaps(namespace) }, get, o);

    const LISTS = quick ? 20 : 200;
    await gen.run({ kind: 'create-deployment', namespace: 'deployments-list', prefix: 'l-', count: 500 }, PHASE_TIMEOUT_MS);
    await gen.run({ kind: 'create-cm', namespace: 'cms-list', prefix: 'l-', count: 500, bytes }, PHASE_TIMEOUT_MS);
    await settle(s.pid);
    progress(`deployments: ${ROUNDS} alternated rounds of ${LISTS} lists of 500 Deployments and of 500 ConfigMaps…`);
    const list = (collectionPath: string, count: number): PhaseSpec => ({
      kind: 'list-cm', namespace: collectionPath.includes('deployments-list') ? 'deployments-list' : 'cms-list', prefix: 'l-', count: Math.max(1, Math.round(count)), expectItems: 500, concurrency: 4, checkEvery: 10, collectionPath,
    });
    const lists = await medianOfAlternating(gen, { deployment: deployments('deployments-list'), cm: configMaps('cms-list') }, list, { ...o, count: LISTS });

    const row = (what: string, m: Record<'deployment' | 'cm', Measured>, goal: number): Row[] => {
      const ratio = m.deployment.perSec / m.cm.perSec;
      const cpuRatio = m.cm.serverCpuMs / m.deployment.serverCpuMs;
      return [
        { metric: `${what} ConfigMap of ${fmtInt(bytes)} bytes as read (median of ${ROUNDS} rounds of ${fmtInt(m.cm.requests)}, alternating with the row below)`, result: rateCell(m.cm), target: '—' },
        { metric: `${what} Deployment of ${fmtInt(bytes)} bytes as read, a two-container template (median of ${ROUNDS} rounds)`, result: `${rateCell(m.deployment)} · ${ratio.toFixed(2)}× the ConfigMap rate, ${cpuRatio.toFixed(2)}× by server CPU`, target: target(`at least ${goal}× the ConfigMap rate`, ratio >= goal) },
      ];
    };
    // Status writes of a Deployment (validated as upstream's ValidateDeploymentStatusUpdate) beside label updates
    // of the same Deployments through the main resource (the spec's validation, no status checks).
    progress(`deployments: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Deployment status writes and label updates…`);
    await settle(s.pid);
    let round = 0;
    const update = (kind: string, count: number): PhaseSpec => ({
      kind: 'update', namespace, prefix: 'd0-', population: COUNT / 5, count, round: round++, collectionPath: deployments(namespace),
      ...(kind === 'status' ? { status: true, statusCount: 'observedGeneration' } : {}),
    });
    const writes = await medianOfAlternating(gen, { status: 'status', labels: 'labels' }, update, o);
    const statusRatio = writes.status.perSec / writes.labels.perSec;
    const statusRows: Row[] = [
      { metric: `update (labels) of a Deployment of ${fmtInt(bytes)} bytes as read (median of ${ROUNDS} rounds of ${fmtInt(writes.labels.requests)}, alternating with the row below)`, result: rateCell(writes.labels), target: '—' },
      { metric: `status write (observedGeneration) of the same Deployments, status validated as upstream (median of ${ROUNDS} rounds)`,
        result: `${rateCell(writes.status)} · ${statusRatio.toFixed(2)}× the label update rate, ${(writes.labels.serverCpuMs / writes.status.serverCpuMs).toFixed(2)}× by server CPU`, target: '—' },
    ];
    return [...row('create', creates, 0.5), ...row('get', gets, 0.9), ...row('list of 500: each', lists, 0.9), ...statusRows];
  });
}
