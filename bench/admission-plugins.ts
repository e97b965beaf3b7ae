// What the default admission plugins cost a Pod create: two servers (built
// CLI children, fresh sqlite data dirs), one with the default plugin set and
// one with every default plugin turned off, each with one LimitRange in the
// namespace (defaults the pods lack, bounds they meet) and no quota, the
// same realistic pods (bodies.ts) created on each in alternated rounds. Each
// row is the round of median server CPU per create; the target's share is the
// median of the rounds' shares, each round's two servers taken as a pair
// (drift on a shared machine moves a pair together, not the two medians). A third row runs the same
// default chain in this process, on an in-memory registry with the same
// LimitRange, and reports the plugins' own CPU per pod: what of the gap is
// the plugins, and what is the bigger pod they make (its token volume,
// mounts, tolerations and defaults stored and answered).

import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { runAlone, withBenchServer, type BenchSession } from './session.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { defaultOnPlugins } from '../src/admission/plugin-names.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';
import { pod as realisticPod } from './bodies.js';
import { AdmissionListers, buildAdmission } from '../src/admission/index.js';
import { builtinKinds } from '../src/api/catalog.js';
import { pods } from '../src/api/core/v1/index.js';
import { InformerFactory } from '../src/client/informer.js';
import { resources, resourceType } from '../src/client/resources.js';
import { Registry } from '../src/registry/registry.js';
import { InProcessClient } from '../src/apiserver/inprocess.js';
import { CacheSet } from '../src/storage/cache/index.js';
import { MemoryBackend } from '../src/storage/memory/store.js';
import type { AdmissionRequest } from '../src/admission/types.js';
import { AdmissionMetrics } from '../src/admission/metrics.js';
import { Registry as MetricsRegistry } from 'prom-client';

export interface AdmissionPluginsBenchOptions {
  quick: boolean;
  /** Alternated rounds (default 7; 3 quick). */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const namespace = 'adm-pods';
const goalPct = 15;

const limitRange = {
  apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits' },
  spec: { limits: [
    { type: 'Container', default: { 'ephemeral-storage': '1Gi' }, defaultRequest: { 'ephemeral-storage': '512Mi' }, max: { cpu: '2', memory: '2Gi' }, min: { cpu: '10m' } },
    { type: 'Pod', max: { cpu: '4', memory: '4Gi' } },
  ] },
};

async function prepare(session: BenchSession): Promise<void> {
  const send = async (method: string, path: string, body?: unknown) => {
    const r = await sendJson(session.agent, session.server.port, method, path, body, 10_000);
    if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    return JSON.parse(r.body.toString('utf8'));
  };
  await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await send('POST', `/api/v1/namespaces/${namespace}/limitranges`, limitRange);
  // The ServiceAccount plugin waits for the namespace's default account: let the controller make it first.
  for (let i = 0; i < 200; i++) {
    const r = await sendJson(session.agent, session.server.port, 'GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`, undefined, 10_000);
    if (r.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the default service account never appeared');
}

/**
 * The default chain's own CPU per pod create, in this process: the plugins
 * built as the server builds them, reading through informer-fed listers of
 * an in-memory registry that holds the namespace, its default account and
 * the LimitRange, observed in admission metrics as the server's are; each
 * request a fresh copy of the realistic pod. Median of
 * rounds of microseconds of this process's CPU per mutate-and-validate.
 */
export async function pluginsOwnCpuUs(count: number, rounds: number): Promise<number> {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  const client = new InProcessClient(registry, 'bench-admission');
  const informers = new InformerFactory(client);
  const listers = new AdmissionListers();
  const built = await buildAdmission({ enable: [], disable: [] }, {
    getNamespace: (name) => registry.findNamespace(name),
    createNamespace: async () => { throw new Error('not in this bench'); },
    log: { warn: () => undefined, info: () => undefined },
    listers,
    // As the server: every phase and plugin observed.
    metrics: new AdmissionMetrics(new MetricsRegistry()),
  });
  try {
    const create = (resource: Parameters<typeof resourceType>[1], namespaced: boolean, body: Record<string, unknown>) =>
      client.create(resourceType(client, resource), namespaced ? namespace : undefined, body);
    await create(resources.namespaces, false, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await create(resources.serviceAccounts, true, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } });
    await create(resources.limitRanges, true, { ...limitRange, metadata: { name: 'limits', namespace } });
    await listers.start(informers, client);
    const request = (i: number): AdmissionRequest => {
      const body = realisticPod(`p-${i}`);
      body.metadata.namespace = namespace;
      return {
        uid: `uid-${i}`, operation: 'CREATE', kind: pods, name: body.metadata.name, namespace, object: body, dryRun: false,
        options: { kind: 'CreateOptions', apiVersion: 'meta.plat.io/v1' },
      };
    };
    const perRound: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      const requests = Array.from({ length: count }, (_, i) => request(round * count + i));
      const cpu0 = process.cpuUsage();
      for (const r of requests) {
        await built.chain.mutate(r);
        await built.chain.validate(r);
      }
      const cpu = process.cpuUsage(cpu0);
      // The first round warms the code up.
      if (round > 0) perRound.push((cpu.user + cpu.system) / count);
    }
    return perRound.sort((a, b) => a - b)[Math.floor(perRound.length / 2)]!;
  } finally {
    built.close();
    listers.stop();
    informers.stopAll();
    await caches.stopAll();
    await backend.close();
  }
}

export async function benchAdmissionPlugins(opts: AdmissionPluginsBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const count = quick ? 300 : 2_000;
  const rounds = opts.rounds ?? (quick ? 3 : 7);
  const off = [...defaultOnPlugins].sort();
  return withBenchServer('plat-bench-admplugins-on-', CONCURRENCY, (on) => withBenchServer('plat-bench-admplugins-off-', CONCURRENCY, async (bare) => {
    await prepare(on);
    await prepare(bare);
    const sessions = { on, off: bare };
    const results: Record<'on' | 'off', Measured[]> = { on: [], off: [] };
    let phase = 0;
    const creates = async (which: 'on' | 'off', n: number): Promise<Measured> => {
      const s = sessions[which];
      await settle(s.server.pid);
      const cpu0 = cpuMsPrecise(s.server.pid);
      const r = await s.load.run({ kind: 'create-pod', namespace, prefix: `p${phase++}-`, count: n }, PHASE_TIMEOUT_MS);
      return { ...r, serverCpuMs: (cpuMsPrecise(s.server.pid) - cpu0) / r.requests };
    };
    // A server's pod road is still warming after a thousand creates (its first rounds cost up to twice the later ones): two rounds' worth first.
    progress(`admission plugins: warming both servers (${fmtInt(count * 2)} pod creates each)…`);
    await creates('on', count * 2);
    await creates('off', count * 2);
    for (let round = 0; round < rounds; round++) {
      progress(`admission plugins: round ${round + 1}/${rounds}, ${fmtInt(count)} pod creates on each server…`);
      // Alternate which goes first, so that drift on the shared machine favours neither.
      const order: ('on' | 'off')[] = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const which of order) results[which].push(await creates(which, count));
    }
    const withPlugins = medianRound(results.on);
    const without = medianRound(results.off);
    progress(`server CPU per create by round, ms: default set ${results.on.map((r) => r.serverCpuMs.toFixed(3)).join(" ")} / every plugin off ${results.off.map((r) => r.serverCpuMs.toFixed(3)).join(" ")}`);
    const shares = results.on.map((on, i) => ((on.serverCpuMs - results.off[i]!.serverCpuMs) / on.serverCpuMs) * 100).sort((a, b) => a - b);
    const pct = shares[Math.floor(shares.length / 2)]!;
    progress('admission plugins: the default chain alone, in this process…');
    const ownUs = await pluginsOwnCpuUs(count, rounds);
    const ownPct = (ownUs / 1000 / withPlugins.serverCpuMs) * 100;
    return [
      { metric: `admission plugins: create Pod, every default plugin off (${off.length} disabled; ${rounds} × ${fmtInt(count)} POSTs, ${CONCURRENCY} clients, median round)`, result: rateCell(without), target: '—' },
      {
        metric: `admission plugins: create Pod, default plugin set, one LimitRange, no quota (${rounds} × ${fmtInt(count)} POSTs, median round)`,
        result: `${rateCell(withPlugins)} (the plugins: ${pct.toFixed(1)} % of the create's server CPU, median of the rounds' pairs; ${shares[0]!.toFixed(1)} to ${shares[shares.length - 1]!.toFixed(1)} %)`,
        target: target(`< ${goalPct} % of the create's server CPU`, pct < goalPct),
      },
      {
        metric: `admission plugins: the default chain's own CPU per Pod create, in process (${rounds} × ${fmtInt(count)} pods, median round)`,
        result: `${ownUs.toFixed(1)} µs (${ownPct.toFixed(1)} % of the create's server CPU above; the rest of the gap is outside the chain: the bigger pod they make, stored and answered, and the plugins' metrics)`,
        target: '—',
      },
    ];
  }, { extraArgs: [`--disable-admission-plugins=${off.join(',')}`] }));
}

await runAlone(import.meta.url, benchAdmissionPlugins);
