// A cluster simulated against one server, all on 127.0.0.1: nodes whose
// Leases are renewed every 10 s, pods bound to them, and one node agent per
// node that lists its pods (fieldSelector=spec.nodeName=<node>,
// resourceVersion=0) and watches from that list, as a kubelet does; then
// pods created and deleted on random nodes, single-object gets, and a paged
// cluster-wide pod list every 20 s. `--scale 1` is upstream's scalability
// envelope (5,000 nodes, 150,000 pods); the default, 0.2, one fifth of it.
//
//   node dist/bench/cluster-sim.js [--scale 0.2] [--duration 60] [--baseline <commit> [--baseline-entry <built cli>]]
//
// Printed per call type: p50/p99/max; watch delivery latency (from a write's
// answer to its event at the node's agent), missed events, errors; server
// RSS and CPU, the RSS a pod costs, the agents' start time, and the load
// generator's own CPU beside the server's.

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBaseline } from './codec.js';
import { BenchServer, cpuMs, rssBytes, settle, startBenchServer } from './child.js';
import { sendJson } from './http.js';
import { fmtInt, fmtMB } from './stats.js';

interface Options {
  scale: number;
  durationS: number;
  baseline?: string;
  /** The CLI of a build made already (dist/src/cli/main.js), instead of building --baseline. */
  baselineEntry?: string;
  agentConcurrency: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { scale: 0.2, durationS: 60, agentConcurrency: 100 };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${argv[i - 1]} needs a value`);
      return v;
    };
    switch (argv[i]) {
      case '--scale': o.scale = Number(value()); break;
      case '--duration': o.durationS = Number(value()); break;
      case '--baseline': o.baseline = value(); break;
      case '--baseline-entry': o.baselineEntry = value(); break;
      case '--agent-concurrency': o.agentConcurrency = Number(value()); break;
      default: throw new Error(`unknown argument ${argv[i]} (--scale, --duration, --baseline, --baseline-entry, --agent-concurrency)`);
    }
  }
  if (!(o.scale > 0 && o.scale <= 1)) throw new Error('--scale is a fraction of the envelope, in (0, 1]');
  if (!(o.durationS > 0)) throw new Error('--duration is a number of seconds');
  return o;
}

const leaseNamespace = 'sim-node-lease';
const podNamespace = 'sim-pods';
const leasePeriodMs = 10_000;
const clusterListPeriodMs = 20_000;
const requestTimeoutMs = 60_000;
const nodeName = (i: number) => `node-${String(i).padStart(5, '0')}`;

/** Latencies of one call type, and its errors. */
class Calls {
  readonly ms: number[] = [];
  errors = 0;
  lastError = '';

  async time<T>(what: () => Promise<T>, ok: (r: T) => boolean): Promise<T | undefined> {
    const t0 = performance.now();
    try {
      const r = await what();
      if (!ok(r)) {
        this.errors++;
        this.lastError = String((r as { status?: number }).status ?? r);
        return undefined;
      }
      this.ms.push(performance.now() - t0);
      return r;
    } catch (e) {
      this.errors++;
      this.lastError = String(e);
      return undefined;
    }
  }

  row(name: string): string {
    const sorted = [...this.ms].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
    const f = (v: number) => (Number.isNaN(v) ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
    return `| ${name} | ${fmtInt(sorted.length)} | ${f(at(0.5))} | ${f(at(0.99))} | ${f(sorted.at(-1) ?? NaN)} | ${this.errors}${this.errors ? ` (${this.lastError.slice(0, 60)})` : ''} |`;
  }
}

/** A node agent's watch: JSON lines of its pods' events, with the arrival time of each by name. */
class AgentWatch {
  readonly seen = new Map<string, number>();
  ended = false;
  private buffered = '';

  constructor(private readonly node: string, server: BenchServer, agent: Agent, resourceVersion: string, onEnd: (why: string) => void) {
    const path = `/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${resourceVersion}&fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`;
    const req = request({ host: '127.0.0.1', port: server.port, path, agent, headers: { Accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) {
        this.ended = true;
        onEnd(`watch of ${node}: HTTP ${res.statusCode}`);
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.take(chunk));
      res.on('end', () => { this.ended = true; onEnd(`watch of ${node} ended`); });
      res.on('error', () => undefined);
    });
    req.on('error', (e) => { if (!this.ended) { this.ended = true; onEnd(`watch of ${node}: ${e.message}`); } });
    req.end();
    this.request = req;
  }

  private request: ReturnType<typeof request>;

  close(): void {
    this.ended = true;
    this.request.destroy();
  }

  private take(chunk: string): void {
    this.buffered += chunk;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      if (!line) continue;
      const event = JSON.parse(line) as { type: string; object: { metadata: { name: string }; spec?: { nodeName?: string } } };
      if (event.type === 'BOOKMARK') continue;
      if (event.object.spec?.nodeName !== this.node) throw new Error(`agent of ${this.node} got a pod of ${event.object.spec?.nodeName}`);
      this.seen.set(`${event.type} ${event.object.metadata.name}`, performance.now());
    }
  }
}

const pod = (name: string, node: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, labels: { app: 'sim', tier: name.length % 2 ? 'web' : 'db' } },
  spec: {
    nodeName: node,
    containers: [{ name: 'main', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }], resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
  },
});

const lease = (node: string) => ({
  apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
  metadata: { name: node },
  spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') },
});

async function inBatches<T>(items: T[], width: number, each: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await each(items[i]!, i);
    }
  }));
}

async function simulate(name: string, server: BenchServer, o: Options, progress: (m: string) => void): Promise<string[]> {
  const nodeCount = Math.round(5_000 * o.scale);
  const podCount = Math.round(150_000 * o.scale);
  const podsPerSecond = o.scale >= 1 ? 50 : 20;
  const getsPerSecond = o.scale >= 1 ? 200 : 100;
  const { ca, cert, key } = server.creds;
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
  const watchAgent = new Agent({ keepAlive: false, maxSockets: Infinity, ca, cert, key });
  const call = (method: string, path: string, body?: unknown) => sendJson(agent, server.port, method, path, body, requestTimeoutMs);
  const nodes = Array.from({ length: nodeCount }, (_, i) => nodeName(i));
  const out: string[] = [];
  const genCpu0 = process.cpuUsage();

  // Setup: namespaces, Nodes, Leases, pods bound round-robin.
  const t0 = performance.now();
  for (const ns of [leaseNamespace, podNamespace]) await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const setupErrors = new Calls();
  await inBatches(nodes, 32, async (n) => {
    await setupErrors.time(() => call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n, labels: { 'sim/node': n } } }), (r) => r.status === 201);
    await setupErrors.time(() => call('POST', `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases`, lease(n)), (r) => r.status === 201);
  });
  await settle(server.pid);
  const rssBeforePods = rssBytes(server.pid);
  const podNames = Array.from({ length: podCount }, (_, i) => `pod-${String(i).padStart(6, '0')}`);
  await inBatches(podNames, 32, async (p, i) => {
    await setupErrors.time(() => call('POST', `/api/v1/namespaces/${podNamespace}/pods`, pod(p, nodes[i % nodeCount]!)), (r) => r.status === 201);
    if (i % 10_000 === 9_999) progress(`${name}: ${fmtInt(i + 1)} pods`);
  });
  const setupS = (performance.now() - t0) / 1000;
  // The pod cache is started by the first read; then the server rests.
  await call('GET', `/api/v1/pods?limit=1&resourceVersion=0`);
  await settle(server.pid, 60_000);
  const rssWithPods = rssBytes(server.pid);
  progress(`${name}: ${fmtInt(nodeCount)} nodes and ${fmtInt(podCount)} pods in ${setupS.toFixed(1)} s; agents starting…`);

  // Agents: list then watch, at most agentConcurrency starting at once.
  const nodeLists = new Calls();
  const watches = new Map<string, AgentWatch>();
  const watchEnds: string[] = [];
  const cpuStart0 = cpuMs(server.pid);
  const tAgents = performance.now();
  await inBatches(nodes, o.agentConcurrency, async (n) => {
    const r = await nodeLists.time(() => call('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${n}`)}&resourceVersion=0`), (x) => x.status === 200);
    if (!r) return;
    const list = JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string }; items: unknown[] };
    watches.set(n, new AgentWatch(n, server, watchAgent, list.metadata.resourceVersion, (why) => watchEnds.push(why)));
    if (watches.size % 100 === 0) progress(`${name}: ${fmtInt(watches.size)} agents watching after ${((performance.now() - tAgents) / 1000).toFixed(1)} s`);
  });
  const agentsS = (performance.now() - tAgents) / 1000;
  const agentCpuMs = cpuMs(server.pid) - cpuStart0;
  progress(`${name}: ${fmtInt(watches.size)} agents listed and watching in ${agentsS.toFixed(1)} s; steady state for ${o.durationS} s…`);

  // Steady state.
  const leases = new Calls();
  const creates = new Calls();
  const deletes = new Calls();
  const gets = new Calls();
  const clusterLists = new Calls();
  const expected: { key: string; node: string; at: number }[] = [];
  const live: { name: string; node: string }[] = [];
  let serial = 0;
  let stopping = false;
  const cpu0 = cpuMs(server.pid);
  const gen0 = process.cpuUsage();
  const tSteady = performance.now();
  const loops: Promise<void>[] = [];
  const every = (periodMs: number, tick: () => Promise<void>) => {
    loops.push((async () => {
      let due = performance.now();
      const pending: Promise<void>[] = [];
      while (!stopping) {
        pending.push(tick().catch(() => undefined));
        if (pending.length > 512) await Promise.all(pending.splice(0));
        due += periodMs;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await Promise.all(pending);
    })());
  };
  let leaseTurn = 0;
  every(leasePeriodMs / nodeCount, async () => {
    const n = nodes[leaseTurn++ % nodeCount]!;
    const path = `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases/${n}`;
    await leases.time(async () => {
      const current = await call('GET', path);
      const body = JSON.parse(current.body.toString('utf8'));
      body.spec.renewTime = new Date().toISOString().replace('Z', '000Z');
      return call('PUT', path, body);
    }, (r) => r.status === 200);
  });
  every(1000 / podsPerSecond, async () => {
    if (live.length > 0 && Math.random() < 0.5) {
      const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0]!;
      const r = await deletes.time(() => call('DELETE', `/api/v1/namespaces/${podNamespace}/pods/${victim.name}?gracePeriodSeconds=0`), (x) => x.status === 200);
      if (r) expected.push({ key: `DELETED ${victim.name}`, node: victim.node, at: performance.now() });
      return;
    }
    const p = `churn-${serial++}`;
    const n = nodes[Math.floor(Math.random() * nodeCount)]!;
    const r = await creates.time(() => call('POST', `/api/v1/namespaces/${podNamespace}/pods`, pod(p, n)), (x) => x.status === 201);
    if (r) {
      expected.push({ key: `ADDED ${p}`, node: n, at: performance.now() });
      live.push({ name: p, node: n });
    }
  });
  every(1000 / getsPerSecond, async () => {
    const p = podNames[Math.floor(Math.random() * podCount)]!;
    await gets.time(() => call('GET', `/api/v1/namespaces/${podNamespace}/pods/${p}`), (r) => r.status === 200);
  });
  every(clusterListPeriodMs, async () => {
    await clusterLists.time(async () => {
      let next = '';
      for (;;) {
        const r = await call('GET', `/api/v1/pods?limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`);
        if (r.status !== 200) return r;
        next = (JSON.parse(r.body.toString('utf8')) as { metadata: { continue?: string } }).metadata.continue ?? '';
        if (!next) return r;
      }
    }, (r) => r.status === 200);
  });
  await new Promise((r) => setTimeout(r, o.durationS * 1000));
  stopping = true;
  await Promise.all(loops);
  const steadyS = (performance.now() - tSteady) / 1000;
  const serverCpuS = (cpuMs(server.pid) - cpu0) / 1000;
  const gen = process.cpuUsage(gen0);
  const rssEnd = rssBytes(server.pid);

  // Every expected event, at most 30 s after the last write.
  const deadline = performance.now() + 30_000;
  const arrived = () => expected.filter((e) => watches.get(e.node)?.seen.has(e.key)).length;
  while (arrived() < expected.length && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const delivery = new Calls();
  let missed = 0;
  for (const e of expected) {
    const at = watches.get(e.node)?.seen.get(e.key);
    if (at === undefined) missed++;
    else delivery.ms.push(Math.max(0, at - e.at));
  }
  for (const w of watches.values()) w.close();
  agent.destroy();
  watchAgent.destroy();
  const genAll = process.cpuUsage(genCpu0);

  out.push(`### ${name}: ${fmtInt(nodeCount)} nodes, ${fmtInt(podCount)} pods, ${o.durationS} s steady state`, '');
  out.push(`Setup ${setupS.toFixed(1)} s (${fmtInt(podCount / setupS)} objects/s, ${setupErrors.errors} errors). RSS ${fmtMB(rssBeforePods)} before the pods, ${fmtMB(rssWithPods)} with them: ${fmtInt((rssWithPods - rssBeforePods) / podCount)} bytes per pod; ${fmtMB(rssEnd)} at the end of the steady state.`);
  out.push(`Agents: ${fmtInt(watches.size)} of ${fmtInt(nodeCount)} listed and watching in ${agentsS.toFixed(1)} s (${o.agentConcurrency} starting at once), server CPU ${(agentCpuMs / 1000).toFixed(1)} s; watches ended early: ${watchEnds.length}${watchEnds.length ? ` (${watchEnds[0]})` : ''}.`);
  out.push(`Steady state ${steadyS.toFixed(0)} s: server CPU ${serverCpuS.toFixed(1)} s (${((serverCpuS / steadyS) * 100).toFixed(0)} % of a core); load generator CPU ${((gen.user + gen.system) / 1e6).toFixed(1)} s (${fmtInt((genAll.user + genAll.system) / 1e3)} ms over the whole run).`);
  out.push(`Watch events: ${fmtInt(expected.length)} expected, ${missed} missed.`, '');
  out.push('| call | n | p50 | p99 | max | errors |', '|---|---|---|---|---|---|');
  out.push(nodeLists.row('agent list by node (rv=0)'), leases.row('lease renewal (get + put)'), creates.row('pod create'), deletes.row('pod delete'),
    gets.row('pod get'), clusterLists.row('paged cluster-wide pod list (500 a page)'), delivery.row('watch delivery (after the write\'s answer)'), '');
  return out;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const progress = (m: string) => process.stderr.write(`${m}\n`);
  const sides: { name: string; entry?: string }[] = [{ name: 'this build' }];
  const baseline = o.baseline && !o.baselineEntry ? buildBaseline(o.baseline, progress) : undefined;
  if (o.baselineEntry) sides.push({ name: o.baseline ?? o.baselineEntry, entry: o.baselineEntry });
  else if (baseline) sides.push({ name: o.baseline!, entry: baseline.cliPath });
  const report: string[] = [];
  try {
    for (const side of sides) {
      const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-sim-'));
      // No kubelets stand behind the nodes: the pod garbage collector and the controllers that would act on them stay off.
      const server = await startBenchServer({
        dataDir, entry: side.entry, timeoutMs: 60_000,
        extraArgs: ['--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher,-pod-garbage-collector', '--max-requests-inflight', '2000'],
      });
      try {
        report.push(...await simulate(side.name, server, o, progress));
      } finally {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
      process.stdout.write(`${report.join('\n')}\n`);
      report.length = 0;
    }
  } finally {
    baseline?.remove();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
