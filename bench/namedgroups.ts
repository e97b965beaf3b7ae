// The named-group kinds and the endpoints controllers, on one server (built
// CLI child, fresh sqlite data dir, every controller running):
// - Ingress creates and gets beside ConfigMap creates and gets of the same
//   stored size, in alternated rounds (median round by server CPU);
// - what the endpoints and endpoint-slice controllers cost: 100 pods of a
//   Service turn ready (100 status writes), timed from the first write until
//   the Endpoints and the EndpointSlices show all 100 ready, and charged the
//   server CPU until it settles; beside the same 100 status writes of pods no
//   Service selects, alternated round by round.

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { withBenchServer } from './session.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, fmtMs, median, summarise } from './stats.js';

const namespace = 'named-bench';
const TIMEOUT_MS = 60_000;
const CONCURRENCY = 8;
const networking = '/apis/networking.plat.io/v1';
const discovery = '/apis/discovery.plat.io/v1';

/** Runs `count` requests, `CONCURRENCY` at a time, timing each. */
async function drive(count: number, one: (i: number) => Promise<void>): Promise<ReturnType<typeof summarise>> {
  const latencies = new Float64Array(count);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < count; i = next++) {
      const s = performance.now();
      await one(i);
      latencies[i] = performance.now() - s;
    }
  }));
  return summarise(latencies, performance.now() - t0);
}

const name = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}`;

function ingress(n: string) {
  return {
    apiVersion: 'networking.plat.io/v1', kind: 'Ingress', metadata: { name: n, labels: { app: 'bench' } },
    spec: {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      rules: [{ host: 'shop.example.com', http: { paths: [
        { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
        { path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { name: 'http' } } } },
      ] } }],
    },
  };
}

export async function benchNamedGroups(opts: { quick: boolean; rounds?: number; progress: (m: string) => void }): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 1_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  const PODS = 100;
  return withBenchServer('plat-bench-named-', 1, async ({ server: s, agent: setup }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key });
    const send = async (method: string, path: string, body: unknown, want: number) => {
      const r = await sendJson(agent, s.port, method, path, body, TIMEOUT_MS);
      if (r.status !== want) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      return r;
    };
    try {
      await send('POST', '/api/v1/namespaces', { metadata: { name: namespace } }, 201);
      // ConfigMaps as large as a stored Ingress, measured on one.
      const probe = await send('POST', `${networking}/namespaces/${namespace}/ingresses`, ingress('probe'), 201);
      const bytes = probe.body.length;
      const configMap = (n: string) => ({ metadata: { name: n, labels: { app: 'bench' } }, data: { v: 'x'.repeat(Math.max(0, bytes - 250)) } });
      const measure = async (count: number, one: (i: number) => Promise<void>, write: boolean): Promise<Measured> => {
        const cpu0 = cpuMsPrecise(s.pid);
        const m = await drive(count, one);
        if (write) await settle(s.pid);
        return { ...m, notes: {}, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / m.requests };
      };
      const ingresses = `${networking}/namespaces/${namespace}/ingresses`;
      const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;
      const creates = { ing: [] as Measured[], cm: [] as Measured[] };
      const gets = { ing: [] as Measured[], cm: [] as Measured[] };
      progress(`named groups: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Ingress and ConfigMap creates, then gets…`);
      await settle(s.pid);
      for (let round = 0; round < ROUNDS; round++) {
        const ing = async () => { creates.ing.push(await measure(COUNT, (i) => send('POST', ingresses, ingress(name(`i${round}-`, i)), 201).then(() => undefined), true)); };
        const cm = async () => { creates.cm.push(await measure(COUNT, (i) => send('POST', configMaps, configMap(name(`c${round}-`, i)), 201).then(() => undefined), true)); };
        for (const run of round % 2 ? [cm, ing] : [ing, cm]) await run();
      }
      for (let round = 0; round < ROUNDS; round++) {
        const ing = async () => { gets.ing.push(await measure(COUNT * 2, (i) => send('GET', `${ingresses}/${name('i0-', (i * 7919) % COUNT)}`, undefined, 200).then(() => undefined), false)); };
        const cm = async () => { gets.cm.push(await measure(COUNT * 2, (i) => send('GET', `${configMaps}/${name('c0-', (i * 7919) % COUNT)}`, undefined, 200).then(() => undefined), false)); };
        for (const run of round % 2 ? [cm, ing] : [ing, cm]) await run();
      }

      // The endpoints controllers: per round a Service of its own and 100 pods, and 100 pods nobody selects.
      progress(`named groups: ${ROUNDS} alternated rounds of ${PODS} pods turning ready, selected by a Service and not…`);
      const settled = { selected: [] as number[], unselected: [] as number[] };
      const cpu = { selected: [] as number[], unselected: [] as number[] };
      const pods = `/api/v1/namespaces/${namespace}/pods`;
      const makePods = (prefix: string, app: string) => drive(PODS, (i) => send('POST', pods, {
        metadata: { name: name(prefix, i), labels: { app } }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
      }, 201).then(() => undefined));
      const turnReady = (prefix: string, round: number) => drive(PODS, async (i) => {
        const pod = JSON.parse((await send('GET', `${pods}/${name(prefix, i)}`, undefined, 200)).body.toString('utf8'));
        const ip = `10.${round + 10}.${prefix.startsWith('s') ? 1 : 2}.${i + 1}`;
        pod.status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] };
        await send('PUT', `${pods}/${name(prefix, i)}/status`, pod, 200);
      });
      const allReady = async (svc: string): Promise<boolean> => {
        const ep = await sendJson(agent, s.port, 'GET', `/api/v1/namespaces/${namespace}/endpoints/${svc}`, undefined, TIMEOUT_MS);
        if (ep.status !== 200) return false;
        const ready = (JSON.parse(ep.body.toString('utf8')).subsets ?? []).reduce((n: number, x: any) => n + (x.addresses ?? []).length, 0);
        if (ready !== PODS) return false;
        const sl = await send('GET', `${discovery}/namespaces/${namespace}/endpointslices?labelSelector=plat.io%2Fservice-name%3D${svc}`, undefined, 200);
        const items: any[] = JSON.parse(sl.body.toString('utf8')).items;
        return items.flatMap((x) => x.endpoints ?? []).filter((e: any) => e.conditions?.ready).length === PODS;
      };
      for (let round = 0; round < ROUNDS; round++) {
        const svc = `web${round}`;
        await send('POST', `/api/v1/namespaces/${namespace}/services`, { metadata: { name: svc }, spec: { selector: { app: svc }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } }, 201);
        await makePods(`s${round}-`, svc);
        await makePods(`u${round}-`, `nobody${round}`);
        await settle(s.pid);
        const selected = async () => {
          const cpu0 = cpuMsPrecise(s.pid);
          const t0 = performance.now();
          await turnReady(`s${round}-`, round);
          while (!(await allReady(svc))) await new Promise((r) => setTimeout(r, 5));
          settled.selected.push(performance.now() - t0);
          await settle(s.pid);
          cpu.selected.push(cpuMsPrecise(s.pid) - cpu0);
        };
        const unselected = async () => {
          const cpu0 = cpuMsPrecise(s.pid);
          const t0 = performance.now();
          await turnReady(`u${round}-`, round);
          settled.unselected.push(performance.now() - t0);
          await settle(s.pid);
          cpu.unselected.push(cpuMsPrecise(s.pid) - cpu0);
        };
        for (const run of round % 2 ? [unselected, selected] : [selected, unselected]) await run();
      }
      const row = (what: string, ing: Measured, cm: Measured, goal: number): Row[] => {
        const ratio = ing.perSec / cm.perSec;
        return [
          { metric: `${what} ConfigMap of ${fmtInt(bytes)} bytes as read (median of ${ROUNDS} rounds of ${fmtInt(cm.requests)}, ${CONCURRENCY} clients, alternating with the row below)`, result: rateCell(cm), target: '—' },
          { metric: `${what} Ingress of ${fmtInt(bytes)} bytes as read, two paths and TLS (median of ${ROUNDS} rounds)`, result: `${rateCell(ing)} · ${ratio.toFixed(2)}× the ConfigMap rate, ${(cm.serverCpuMs / ing.serverCpuMs).toFixed(2)}× by server CPU`, target: target(`at least ${goal}× the ConfigMap rate`, ratio >= goal) },
        ];
      };
      const extra = median(cpu.selected) - median(cpu.unselected);
      return [
        ...row('create', medianRound(creates.ing), medianRound(creates.cm), 0.5),
        ...row('get', medianRound(gets.ing), medianRound(gets.cm), 0.9),
        { metric: `${PODS} pods nobody selects turn ready: ${PODS} status writes (median of ${ROUNDS} rounds, alternating with the row below)`, result: `${fmtMs(median(settled.unselected))} · server CPU ${fmtCpu(median(cpu.unselected))} until settled`, target: '—' },
        {
          metric: `${PODS} pods of a Service turn ready: from the first status write until Endpoints and EndpointSlices show all ${PODS} ready (median of ${ROUNDS} rounds)`,
          result: `${fmtMs(median(settled.selected))} · server CPU ${fmtCpu(median(cpu.selected))} until settled, ${fmtCpu(extra)} more than the row above (${fmtCpu(extra / PODS)} per pod event)`,
          target: '—',
        },
      ];
    } finally {
      agent.destroy();
      void setup;
    }
  });
}
