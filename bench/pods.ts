// What a Pod costs beside a ConfigMap: creates and gets of Pods of realistic
// size (two containers with ports, environment, resources, probes, mounts;
// about 4 KiB stored, defaulted and validated by upstream's rules) and of
// ConfigMaps of the same stored size, on one server (built CLI child, fresh
// sqlite data dir), in alternated rounds; each row is the median of its
// rounds, by server CPU per request.

import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { runAlone, withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';

export interface PodsBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

/** A kind measured beside ConfigMaps of its stored size: how the load makes one, where it lives, how rows name it. */
export interface WorkloadKind {
  /** `Pod`, `Deployment`. */
  label: string;
  /** What one object is, for the rows. */
  shape: string;
  create: 'create-pod' | 'create-deployment';
  /** Its collection in a namespace. */
  collection(namespace: string): string;
}

const podKind: WorkloadKind = { label: 'Pod', shape: 'two containers', create: 'create-pod', collection: (ns) => `/api/v1/namespaces/${ns}/pods` };

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const namespace = 'pods-bench';

export function benchPods(opts: PodsBenchOptions): Promise<Row[]> {
  return benchBesideConfigMap(podKind, opts);
}

/** Creates, gets and lists of `kind` beside ConfigMaps of the same stored size, in alternated rounds on one server. */
export async function benchBesideConfigMap(kind: WorkloadKind, opts: PodsBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const what = kind.label.toLowerCase();
  const COUNT = quick ? 500 : 2_000;
  const ROUNDS = quick ? 3 : 5;
  return withBenchServer('plat-bench-pods-', CONCURRENCY, async ({ server: s, agent, load: gen }) => {
    const r = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } }, 10_000);
    if (r.status !== 201) throw new Error(`namespace: HTTP ${r.status}`);
    // The ConfigMaps are made as large as a stored Pod is (managedFields and defaults included), measured on one.
    await gen.run({ kind: kind.create, namespace, prefix: 'probe-', count: 1 }, PHASE_TIMEOUT_MS);
    const probe = await sendJson(agent, s.port, 'GET', `${kind.collection(namespace)}/probe-00000`, undefined, 10_000);
    const podBytes = probe.body.length;
    // A write phase is charged the controller and watch work it leaves (the server settles before the CPU is read).
    const measure = async (spec: PhaseSpec): Promise<Measured> => {
      const cpu0 = cpuMsPrecise(s.pid);
      const m = await gen.run(spec, PHASE_TIMEOUT_MS);
      if (spec.kind !== 'get') await settle(s.pid);
      return { ...m, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / m.requests };
    };
    const creates = { pod: [] as Measured[], cm: [] as Measured[] };
    progress(`${what}s: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} ${kind.label} and ConfigMap creates…`);
    await settle(s.pid);
    for (let round = 0; round < ROUNDS; round++) {
      // Which kind goes first alternates, so neither always meets the other's leftovers.
      const pod = () => measure({ kind: kind.create, namespace, prefix: `po${round}-`, count: COUNT }).then((m) => creates.pod.push(m));
      const cm = () => measure({ kind: 'create-cm', namespace, prefix: `cm${round}-`, count: COUNT, bytes: podBytes }).then((m) => creates.cm.push(m));
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
    }
    const gets = { pod: [] as Measured[], cm: [] as Measured[] };
    let seed = 1;
    const get = (prefix: string, collectionPath: string): PhaseSpec => ({
      kind: 'get', namespace, prefix, population: COUNT, count: COUNT * 2, seed: seed++, collectionPath,
    });
    progress(`${what}s: ${ROUNDS} alternated rounds of ${fmtInt(COUNT * 2)} ${kind.label} and ConfigMap gets…`);
    for (let round = 0; round < ROUNDS; round++) {
      const pod = async () => { gets.pod.push(await measure(get('po0-', kind.collection(namespace)))); };
      const cm = async () => { gets.cm.push(await measure(get('cm0-', `/api/v1/namespaces/${namespace}/configmaps`))); };
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
    }
    // Lists of 500 of each, from a namespace of their own each.
    const LISTS = quick ? 40 : 200;
    for (const listNs of ['pods-list', 'cms-list']) {
      const made = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: listNs } }, 10_000);
      if (made.status !== 201) throw new Error(`namespace ${listNs}: HTTP ${made.status}`);
    }
    await gen.run({ kind: kind.create, namespace: 'pods-list', prefix: 'l-', count: 500 }, PHASE_TIMEOUT_MS);
    await gen.run({ kind: 'create-cm', namespace: 'cms-list', prefix: 'l-', count: 500, bytes: podBytes }, PHASE_TIMEOUT_MS);
    await settle(s.pid);
    const lists = { pod: [] as Measured[], cm: [] as Measured[] };
    const list = (ns: string, collectionPath: string): PhaseSpec => ({
      kind: 'list-cm', namespace: ns, prefix: 'l-', count: LISTS, expectItems: 500, concurrency: 4, checkEvery: 10, collectionPath,
    });
    progress(`${what}s: ${ROUNDS} alternated rounds of ${LISTS} lists of 500 ${kind.label}s and of 500 ConfigMaps…`);
    for (let round = 0; round < ROUNDS; round++) {
      const pod = async () => { lists.pod.push(await measure(list('pods-list', kind.collection('pods-list')))); };
      const cm = async () => { lists.cm.push(await measure(list('cms-list', '/api/v1/namespaces/cms-list/configmaps'))); };
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
    }
    const row = (row: string, pod: Measured, cm: Measured, goal: number): Row[] => {
      const ratio = pod.perSec / cm.perSec;
      const cpuRatio = cm.serverCpuMs / pod.serverCpuMs;
      return [
        { metric: `${row} ConfigMap of ${fmtInt(podBytes)} bytes as read (median of ${ROUNDS} rounds of ${fmtInt(pod.requests)}, alternating with the row below)`, result: rateCell(cm), target: '—' },
        { metric: `${row} ${kind.label} of ${fmtInt(podBytes)} bytes as read, ${kind.shape} (median of ${ROUNDS} rounds)`, result: `${rateCell(pod)} · ${ratio.toFixed(2)}× the ConfigMap rate, ${cpuRatio.toFixed(2)}× by server CPU`, target: target(`at least ${goal}× the ConfigMap rate`, ratio >= goal) },
      ];
    };
    return [
      ...row('create', medianRound(creates.pod), medianRound(creates.cm), 0.5),
      ...row('get', medianRound(gets.pod), medianRound(gets.cm), 0.9),
      ...row('list of 500: each', medianRound(lists.pod), medianRound(lists.cm), 0.9),
    ];
  });
}

// Alone: node dist/bench/pods.js [--quick]
await runAlone(import.meta.url, benchPods);
