// What a Pod costs beside a ConfigMap: creates, gets, lists of 500 and the
// watch fan-out of Pods of realistic size (two containers with ports,
// environment, resources, probes, mounts; about 4 KiB stored, defaulted and
// validated by upstream's rules) and of ConfigMaps of the same stored size,
// on one server (built CLI child, fresh sqlite data dir), in alternated
// rounds; each row is the median of its rounds, by server CPU per request.
// The fan-out sends one create at a time to the same number of watchers of
// each kind and times each watcher's receipt, with the server CPU per event.

import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, fmtMs, percentile } from './stats.js';
import { WatcherPool } from './watchers.js';
import { configMap, pod } from './bodies.js';
import type { Agent } from 'node:https';
import type { BenchServer } from './child.js';

export interface PodsBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const namespace = 'pods-bench';

export async function benchPods(opts: PodsBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  return withBenchServer('plat-bench-pods-', CONCURRENCY, async ({ server: s, agent, load: gen }) => {
    const r = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } }, 10_000);
    if (r.status !== 201) throw new Error(`namespace: HTTP ${r.status}`);
    // The ConfigMaps are made as large as a stored Pod is (managedFields and defaults included), measured on one.
    await gen.run({ kind: 'create-pod', namespace, prefix: 'probe-', count: 1 }, PHASE_TIMEOUT_MS);
    const probe = await sendJson(agent, s.port, 'GET', `/api/v1/namespaces/${namespace}/pods/probe-00000`, undefined, 10_000);
    const podBytes = probe.body.length;
    // A write phase is charged the controller and watch work it leaves (the server settles before the CPU is read).
    const measure = async (spec: PhaseSpec): Promise<Measured> => {
      const cpu0 = cpuMsPrecise(s.pid);
      const m = await gen.run(spec, PHASE_TIMEOUT_MS);
      if (spec.kind !== 'get') await settle(s.pid);
      return { ...m, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / m.requests };
    };
    const creates = { pod: [] as Measured[], cm: [] as Measured[] };
    progress(`pods: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Pod and ConfigMap creates…`);
    await settle(s.pid);
    for (let round = 0; round < ROUNDS; round++) {
      // Which kind goes first alternates, so neither always meets the other's leftovers.
      const pod = () => measure({ kind: 'create-pod', namespace, prefix: `po${round}-`, count: COUNT }).then((m) => creates.pod.push(m));
      const cm = () => measure({ kind: 'create-cm', namespace, prefix: `cm${round}-`, count: COUNT, bytes: podBytes }).then((m) => creates.cm.push(m));
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
      progress(`pods: create round ${round}: Pod ${creates.pod.at(-1)!.serverCpuMs.toFixed(2)} ms, ConfigMap ${creates.cm.at(-1)!.serverCpuMs.toFixed(2)} ms of server CPU each`);
    }
    const gets = { pod: [] as Measured[], cm: [] as Measured[] };
    let seed = 1;
    const get = (prefix: string, collection: string): PhaseSpec => ({
      kind: 'get', namespace, prefix, population: COUNT, count: COUNT * 2, seed: seed++, collectionPath: `/api/v1/namespaces/${namespace}/${collection}`, unparsed: true,
    });
    progress(`pods: ${ROUNDS} alternated rounds of ${fmtInt(COUNT * 2)} Pod and ConfigMap gets…`);
    for (let round = 0; round < ROUNDS; round++) {
      const pod = async () => { gets.pod.push(await measure(get('po0-', 'pods'))); };
      const cm = async () => { gets.cm.push(await measure(get('cm0-', 'configmaps'))); };
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
    }
    // Status writes of Pods (what a node agent sends; validated as upstream's ValidatePodStatusUpdate) beside label updates of the same Pods.
    const UPDATES = quick ? 300 : 1_000;
    const writes = { status: [] as Measured[], labels: [] as Measured[] };
    const podsPath = `/api/v1/namespaces/${namespace}/pods`;
    progress(`pods: ${ROUNDS} alternated rounds of ${fmtInt(UPDATES)} Pod status writes and label updates…`);
    for (let round = 0; round < ROUNDS; round++) {
      const update = (status: boolean): PhaseSpec => ({ kind: 'update', namespace, prefix: 'po0-', population: COUNT, count: UPDATES, round, collectionPath: podsPath, status });
      const status = async () => { writes.status.push(await measure(update(true))); };
      const labels = async () => { writes.labels.push(await measure(update(false))); };
      for (const run of round % 2 ? [labels, status] : [status, labels]) await run();
    }
    // Lists of 500 of each, from a namespace of their own each.
    const LISTS = quick ? 20 : 200;
    for (const listNs of ['pods-list', 'cms-list']) {
      const made = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: listNs } }, 10_000);
      if (made.status !== 201) throw new Error(`namespace ${listNs}: HTTP ${made.status}`);
    }
    await gen.run({ kind: 'create-pod', namespace: 'pods-list', prefix: 'l-', count: 500 }, PHASE_TIMEOUT_MS);
    await gen.run({ kind: 'create-cm', namespace: 'cms-list', prefix: 'l-', count: 500, bytes: podBytes }, PHASE_TIMEOUT_MS);
    await settle(s.pid);
    const lists = { pod: [] as Measured[], cm: [] as Measured[] };
    const list = (ns: string, collection: string): PhaseSpec => ({
      kind: 'list-cm', namespace: ns, prefix: 'l-', count: LISTS, expectItems: 500, concurrency: 4, checkEvery: 10, collectionPath: `/api/v1/namespaces/${ns}/${collection}`,
    });
    progress(`pods: ${ROUNDS} alternated rounds of ${LISTS} lists of 500 Pods and of 500 ConfigMaps…`);
    for (let round = 0; round < ROUNDS; round++) {
      const pod = async () => { lists.pod.push(await measure(list('pods-list', 'pods'))); };
      const cm = async () => { lists.cm.push(await measure(list('cms-list', 'configmaps'))); };
      for (const run of round % 2 ? [cm, pod] : [pod, cm]) await run();
    }
    // One create at a time to the same number of watchers of each kind, in alternated rounds.
    const fan = await watchFanOut(s, agent, podBytes, quick, progress);
    const row = (what: string, pod: Measured, cm: Measured, goal: number): Row[] => {
      const ratio = pod.perSec / cm.perSec;
      const cpuRatio = cm.serverCpuMs / pod.serverCpuMs;
      return [
        { metric: `${what} ConfigMap of ${fmtInt(podBytes)} bytes as read (median of ${ROUNDS} rounds of ${fmtInt(pod.requests)}, alternating with the row below)`, result: rateCell(cm), target: '—' },
        { metric: `${what} Pod of ${fmtInt(podBytes)} bytes as read, two containers (median of ${ROUNDS} rounds)`, result: `${rateCell(pod)} · ${ratio.toFixed(2)}× the ConfigMap rate, ${cpuRatio.toFixed(2)}× by server CPU`, target: target(`at least ${goal}× the ConfigMap rate`, ratio >= goal) },
      ];
    };
    return [
      ...row('create', medianRound(creates.pod), medianRound(creates.cm), 0.5),
      ...row('get', medianRound(gets.pod), medianRound(gets.cm), 0.9),
      ...row('list of 500: each', medianRound(lists.pod), medianRound(lists.cm), 0.9),
      ...fan,
      ...statusRows(medianRound(writes.status), medianRound(writes.labels), ROUNDS),
    ];
  });
}

/** The status write beside the label update of the same Pods. */
function statusRows(status: Measured, labels: Measured, rounds: number): Row[] {
  return [
    { metric: `update of a Pod: a label changed, the whole pod validated (median of ${rounds} rounds of ${fmtInt(labels.requests)}, alternating with the row below)`, result: rateCell(labels), target: '—' },
    {
      metric: `status write of a Pod: status.message changed through pods/status, the status validated as upstream (median of ${rounds} rounds)`,
      result: `${rateCell(status)} · ${(status.perSec / labels.perSec).toFixed(2)}× the label update's rate, ${(labels.serverCpuMs / status.serverCpuMs).toFixed(2)}× by server CPU`,
      target: '—',
    },
  ];
}

interface FanRound {
  /** Milliseconds from just before each POST to each watcher's receipt, sorted. */
  latencies: Float64Array;
  cpuPerEventMs: number;
  missing: number;
}

/**
 * Watch fan-out of Pods beside ConfigMaps of the same stored size: each round
 * opens the watchers on one kind's collection, creates one object at a time
 * (a few untimed first) and notes when every watcher saw it.
 */
async function watchFanOut(s: BenchServer, agent: Agent, podBytes: number, quick: boolean, progress: (msg: string) => void): Promise<Row[]> {
  const WATCHERS = quick ? 100 : 500;
  const EVENTS = quick ? 10 : 40;
  const WARMUP = 3;
  const ROUNDS = quick ? 2 : 4;
  const collections = { pod: ['pods-fan', 'pods'], cm: ['cms-fan', 'configmaps'] } as const;
  for (const [ns] of Object.values(collections)) {
    const made = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: ns } }, 10_000);
    if (made.status !== 201) throw new Error(`namespace ${ns}: HTTP ${made.status}`);
  }
  const pool = new WatcherPool(s.url, s.creds, 2);
  const rounds = { pod: [] as FanRound[], cm: [] as FanRound[] };
  try {
    const fanRound = async (which: 'pod' | 'cm', round: number): Promise<void> => {
      const [ns, collection] = collections[which];
      const path = `/api/v1/namespaces/${ns}/${collection}`;
      const list = await sendJson(agent, s.port, 'GET', path, undefined, 30_000);
      if (list.status !== 200) throw new Error(`list ${path}: HTTP ${list.status}`);
      await pool.open(`${path}?watch=1&resourceVersion=${JSON.parse(list.body.toString()).metadata.resourceVersion}`, WATCHERS, 'marker');
      await settle(s.pid);
      const latencies: Float64Array[] = [];
      let cpu = 0;
      let missing = 0;
      for (let e = 0; e < WARMUP + EVENTS; e++) {
        const name = `${which}-${round}-${String(e).padStart(3, '0')}`;
        const body = which === 'pod' ? pod(name) : configMap(name, podBytes);
        const cpu0 = cpuMsPrecise(s.pid);
        const d = await pool.deliver(`"name":"${name}"`, async () => {
          const r = await sendJson(agent, s.port, 'POST', path, body, 10_000);
          if (r.status !== 201) throw new Error(`POST ${name}: HTTP ${r.status}`);
        });
        if (e < WARMUP) continue;
        cpu += cpuMsPrecise(s.pid) - cpu0;
        missing += d.missing;
        latencies.push(d.latencies);
      }
      await pool.closeStreams();
      const all = new Float64Array(latencies.reduce((n, l) => n + l.length, 0));
      let at = 0;
      for (const l of latencies) { all.set(l, at); at += l.length; }
      rounds[which].push({ latencies: all.sort(), cpuPerEventMs: cpu / EVENTS, missing });
    };
    progress(`pods: ${ROUNDS} alternated rounds of ${EVENTS} Pod and ConfigMap creates to ${fmtInt(WATCHERS)} watchers each…`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 ? (['cm', 'pod'] as const) : (['pod', 'cm'] as const)) await fanRound(which, round);
    }
  } finally {
    await pool.terminate();
  }
  // The round of median CPU per event stands for each kind.
  const medianOf = (xs: FanRound[]) => [...xs].sort((a, b) => a.cpuPerEventMs - b.cpuPerEventMs)[Math.floor(xs.length / 2)]!;
  const pod_ = medianOf(rounds.pod);
  const cm = medianOf(rounds.cm);
  const cell = (r: FanRound) => `p50 ${fmtMs(percentile(r.latencies, 0.5))} · p99 ${fmtMs(percentile(r.latencies, 0.99))} · server CPU ${fmtCpu(r.cpuPerEventMs)}/event` +
    (r.missing ? ` · ${fmtInt(r.missing)} deliveries MISSING` : '');
  return [
    { metric: `watch fan-out: one ConfigMap of ${fmtInt(podBytes)} bytes to ${fmtInt(WATCHERS)} watchers, from just before the POST to each receipt (median of ${ROUNDS} rounds of ${EVENTS} events, alternating with the row below)`, result: cell(cm), target: '—' },
    {
      metric: `watch fan-out: one Pod of ${fmtInt(podBytes)} bytes to ${fmtInt(WATCHERS)} watchers (median of ${ROUNDS} rounds)`,
      result: `${cell(pod_)} · ${(cm.cpuPerEventMs / pod_.cpuPerEventMs).toFixed(2)}× the ConfigMap by server CPU, p99 ${(percentile(pod_.latencies, 0.99) / percentile(cm.latencies, 0.99)).toFixed(2)}× the ConfigMap's`,
      target: target('no delivery missing', pod_.missing === 0 && cm.missing === 0),
    },
  ];
}
