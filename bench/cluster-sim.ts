// A cluster simulated against one server, all on 127.0.0.1: nodes whose
// Leases are renewed every 10 s, pods bound to them, and one node agent per
// node that lists its pods (fieldSelector=spec.nodeName=<node>,
// resourceVersion=0) and watches from that list, as a kubelet does; then
// pods created and deleted on random nodes, single-object gets, and a paged
// cluster-wide pod list every 20 s. `--scale 1` is upstream's scalability
// envelope (5,000 nodes, 150,000 pods); the default, 0.2, one fifth of it.
//
//   node dist/bench/cluster-sim.js [--scale 0.2] [--duration 60] [--workers N]
//        [--baseline <commit> [--baseline-entry <built cli>]]
//
// The node agents and their Lease renewals run in N load-generator
// processes (bench/cluster-sim-worker.ts; by default one per 1,000 nodes,
// at least one per server),
// each with its share of the nodes, so that 5,000 TLS watch connections are
// held; this process sets up, churns pods, gets them and lists the cluster.
// Printed per call type: p50/p99/max; watch delivery latency (from a write's
// answer to its event at the node's agent), missed events, errors; server
// RSS and CPU, the RSS a pod costs, the agents' start time, and the load
// generators' CPU (every process) beside the server's.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBaseline } from './codec.js';
import { BenchServer, cpuMs, rssBytes, settle, startBenchServer } from './child.js';
import { Calls, clock, every, inBatches, leaseNamespace, podNamespace, renewTime, requestTimeoutMs } from './cluster-sim-agents.js';
import type { ToWorker, WorkerMessage } from './cluster-sim-worker.js';
import { sendJson } from './http.js';
import { fmtInt, fmtMB } from './stats.js';
import { storePods } from './stored-pod.js';
import { startEtcd } from '../test/support/etcd.js';
import { EtcdBackend } from '../src/storage/etcd/store.js';

interface Options {
  scale: number;
  durationS: number;
  baseline?: string;
  /** The CLI of a build made already (dist/src/cli/main.js), instead of building --baseline. */
  baselineEntry?: string;
  agentConcurrency: number;
  /** Load-generator processes for the agents; 0: one per 1,000 nodes. */
  workers: number;
  /** Write the pods straight into the store before the server starts (the envelope's 150,000 through the API take many minutes). */
  prefill: boolean;
  /** On one local etcd member instead of SQLite, with this many servers sharing the load (0: SQLite, one server). */
  etcdServers: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { scale: 0.2, durationS: 60, agentConcurrency: 100, workers: 0, prefill: false, etcdServers: 0 };
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
      case '--workers': o.workers = Number(value()); break;
      case '--prefill': o.prefill = true; break;
      case '--etcd-servers': o.etcdServers = Number(value()); break;
      default: throw new Error(`unknown argument ${argv[i]} (--scale, --duration, --workers, --prefill, --etcd-servers, --baseline, --baseline-entry, --agent-concurrency)`);
    }
  }
  if (!(o.scale > 0 && o.scale <= 1)) throw new Error('--scale is a fraction of the envelope, in (0, 1]');
  if (!(o.durationS > 0)) throw new Error('--duration is a number of seconds');
  if (!(Number.isInteger(o.workers) && o.workers >= 0)) throw new Error('--workers is a number of processes (0: one per 1,000 nodes)');
  return o;
}

const leasePeriodMs = 10_000;
const clusterListPeriodMs = 20_000;
const nodeName = (i: number) => `node-${String(i).padStart(5, '0')}`;

/** A load-generator process of its share of the nodes (bench/cluster-sim-worker.ts). */
class Worker {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<string, { resolve(m: WorkerMessage): void; reject(e: Error): void }>();
  private exited = false;

  constructor(onWatching: (m: Extract<WorkerMessage, { type: 'watching' }>) => void) {
    this.child = fork(new URL('./cluster-sim-worker.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: WorkerMessage) => {
      if (m.type === 'watching') onWatching(m);
      const waiter = this.waiting.get(m.type);
      this.waiting.delete(m.type);
      waiter?.resolve(m);
    });
    this.child.once('exit', (code) => {
      this.exited = true;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`a load-generator process exited (${code})`));
      this.waiting.clear();
    });
  }

  /** Sends `m` and waits for the answer of type `answer`. */
  ask<T extends WorkerMessage['type']>(m: ToWorker, answer: T): Promise<Extract<WorkerMessage, { type: T }>> {
    return new Promise((resolve, reject) => {
      if (this.exited) throw new Error('the load-generator process has exited');
      this.waiting.set(answer, { resolve: resolve as (m: WorkerMessage) => void, reject });
      this.child.send(m);
    });
  }

  tell(m: ToWorker): void {
    if (!this.exited) this.child.send(m);
  }

  async exit(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.send({ type: 'exit' } satisfies ToWorker);
    await gone;
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
  spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: renewTime() },
});

/** `prefilled`: the pods were written into the store before the server started; the RSS of the server before that, empty. */
async function simulate(name: string, servers: BenchServer[], o: Options, progress: (m: string) => void, prefilled?: { rssEmpty: number; ready: string }): Promise<string[]> {
  const server = servers[0]!;
  const serversCpuMs = () => servers.reduce((n, s) => n + cpuMs(s.pid), 0);
  const nodeCount = Math.round(5_000 * o.scale);
  const podCount = Math.round(150_000 * o.scale);
  const podsPerSecond = o.scale >= 1 ? 50 : 20;
  const getsPerSecond = o.scale >= 1 ? 200 : 100;
  const { ca, cert, key } = server.creds;
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
  const call = (method: string, path: string, body?: unknown) => sendJson(agent, server.port, method, path, body, requestTimeoutMs);
  // The steady state's calls of this process go to the servers in turn.
  // (Each server made its own certificates: one agent per server.)
  const agents = servers.map((s, i) => (i === 0 ? agent : new Agent({ keepAlive: true, maxSockets: 64, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key })));
  let turn = 0;
  const spread = (method: string, path: string, body?: unknown) => {
    const i = turn++ % servers.length;
    return sendJson(agents[i]!, servers[i]!.port, method, path, body, requestTimeoutMs);
  };
  const nodes = Array.from({ length: nodeCount }, (_, i) => nodeName(i));
  // At least one per server, so that every server has its share of the agents.
  const workerCount = Math.max(o.workers || Math.ceil(nodeCount / 1_000), servers.length);
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
  const rssBeforePods = prefilled?.rssEmpty ?? rssBytes(server.pid);
  const podNames = Array.from({ length: podCount }, (_, i) => `pod-${String(i).padStart(6, '0')}`);
  if (!prefilled) await inBatches(podNames, 32, async (p, i) => {
    await setupErrors.time(() => call('POST', `/api/v1/namespaces/${podNamespace}/pods`, pod(p, nodes[i % nodeCount]!)), (r) => r.status === 201);
    if (i % 10_000 === 9_999) progress(`${name}: ${fmtInt(i + 1)} pods`);
  });
  const setupS = (performance.now() - t0) / 1000;
  // The pod cache is started by the first read; then the server rests.
  await call('GET', `/api/v1/pods?limit=1&resourceVersion=0`);
  await settle(server.pid, 60_000);
  const rssWithPods = rssBytes(server.pid);
  progress(`${name}: ${fmtInt(nodeCount)} nodes and ${fmtInt(podCount)} pods in ${setupS.toFixed(1)} s; agents starting in ${workerCount} processes…`);

  // Agents: list then watch, in the load-generator processes, at most agentConcurrency starting at once in all.
  const watchingBy = new Array<number>(workerCount).fill(0);
  let reported = 0;
  const tAgents = performance.now();
  const workers = Array.from({ length: workerCount }, (_, w) => new Worker((m) => {
    watchingBy[w] = m.count;
    const total = watchingBy.reduce((a, b) => a + b, 0);
    if (total >= reported + 100) {
      reported = total - (total % 100);
      progress(`${name}: ${fmtInt(total)} agents watching after ${((performance.now() - tAgents) / 1000).toFixed(1)} s`);
    }
  }));
  const shares = workers.map((_, w) => nodes.filter((_n, i) => i % workerCount === w));
  const nodeLists = new Calls();
  const watchEnds: string[] = [];
  try {
    const cpuStart0 = serversCpuMs();
    const started = await Promise.all(workers.map((worker, w) => worker.ask({
      type: 'agents', server: { port: servers[w % servers.length]!.port, creds: servers[w % servers.length]!.creds }, nodes: shares[w]!, concurrency: Math.ceil(o.agentConcurrency / workerCount),
    }, 'agents-done')));
    for (const s of started) nodeLists.merge(s.lists);
    const watching = started.reduce((n, s) => n + s.watching, 0);
    const agentsS = (performance.now() - tAgents) / 1000;
    const agentCpuMs = serversCpuMs() - cpuStart0;
    progress(`${name}: ${fmtInt(watching)} agents listed and watching in ${agentsS.toFixed(1)} s; steady state for ${o.durationS} s…`);

    // Steady state: Leases renewed by the workers, the rest from here.
    const creates = new Calls();
    const deletes = new Calls();
    const gets = new Calls();
    const clusterLists = new Calls();
    const expected: { key: string; node: string; at: number }[] = [];
    const live: { name: string; node: string }[] = [];
    let serial = 0;
    let stopping = false;
    const isStopping = () => stopping;
    const cpu0 = serversCpuMs();
    let listPages = 0;
    const gen0 = process.cpuUsage();
    const workerCpu0 = (await Promise.all(workers.map((w) => w.ask({ type: 'collect' }, 'collected')))).reduce((n, c) => n + c.cpuMs, 0);
    const tSteady = performance.now();
    for (const worker of workers) worker.tell({ type: 'leases', periodMs: leasePeriodMs });
    const loops = [
      every(1000 / podsPerSecond, isStopping, async () => {
        if (live.length > 0 && Math.random() < 0.5) {
          const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0]!;
          const r = await deletes.time(() => spread('DELETE', `/api/v1/namespaces/${podNamespace}/pods/${victim.name}?gracePeriodSeconds=0`), (x) => x.status === 200);
          if (r) expected.push({ key: `DELETED ${victim.name}`, node: victim.node, at: clock() });
          return;
        }
        const p = `churn-${serial++}`;
        const n = nodes[Math.floor(Math.random() * nodeCount)]!;
        const r = await creates.time(() => spread('POST', `/api/v1/namespaces/${podNamespace}/pods`, pod(p, n)), (x) => x.status === 201);
        if (r) {
          expected.push({ key: `ADDED ${p}`, node: n, at: clock() });
          live.push({ name: p, node: n });
        }
      }),
      every(1000 / getsPerSecond, isStopping, async () => {
        const p = podNames[Math.floor(Math.random() * podCount)]!;
        await gets.time(() => spread('GET', `/api/v1/namespaces/${podNamespace}/pods/${p}`), (r) => r.status === 200);
      }),
      every(clusterListPeriodMs, isStopping, async () => {
        await clusterLists.time(async () => {
          let next = '';
          for (;;) {
            listPages++;
            const r = await spread('GET', `/api/v1/pods?limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`);
            if (r.status !== 200) return r;
            next = (JSON.parse(r.body.toString('utf8')) as { metadata: { continue?: string } }).metadata.continue ?? '';
            if (!next) return r;
          }
        }, (r) => r.status === 200);
      }),
    ];
    await new Promise((r) => setTimeout(r, o.durationS * 1000));
    stopping = true;
    const leases = new Calls();
    for (const stopped of await Promise.all(workers.map((w) => w.ask({ type: 'stop-leases' }, 'leases-stopped')))) leases.merge(stopped.leases);
    await Promise.all(loops);
    const steadyS = (performance.now() - tSteady) / 1000;
    const serverCpuS = (serversCpuMs() - cpu0) / 1000;
    const gen = process.cpuUsage(gen0);
    const rssEnd = servers.reduce((n, s) => n + rssBytes(s.pid), 0);

    // Every expected event, at most 30 s after the last write.
    const seen = new Map<string, number>();
    let workerCpuMs = 0;
    const collect = async () => {
      workerCpuMs = 0;
      watchEnds.length = 0;
      for (const c of await Promise.all(workers.map((w) => w.ask({ type: 'collect' }, 'collected')))) {
        for (const [node, key, at] of c.seen) seen.set(`${node} ${key}`, at);
        workerCpuMs += c.cpuMs;
        watchEnds.push(...c.watchEnds);
      }
    };
    await collect();
    const workerSteadyCpuS = (workerCpuMs - workerCpu0) / 1000;
    const arrived = () => expected.filter((e) => seen.has(`${e.node} ${e.key}`)).length;
    const deadline = performance.now() + 30_000;
    while (arrived() < expected.length && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      await collect();
    }
    const delivery = new Calls();
    let missed = 0;
    for (const e of expected) {
      const at = seen.get(`${e.node} ${e.key}`);
      if (at === undefined) missed++;
      else delivery.ms.push(Math.max(0, at - e.at));
    }
    for (const a of agents) a.destroy();
    const genAll = process.cpuUsage(genCpu0);
    const generatorS = (gen.user + gen.system) / 1e6 + workerSteadyCpuS;

    out.push(`### ${name}: ${fmtInt(nodeCount)} nodes, ${fmtInt(podCount)} pods, ${o.durationS} s steady state, ${workerCount} load-generator processes for the agents`, '');
    out.push(prefilled
      ? `Setup: the pods written into the store before the server started (${prefilled.ready}), then the nodes and Leases in ${setupS.toFixed(1)} s (${setupErrors.errors} errors). RSS ${fmtMB(rssBeforePods)} of the empty server, ${fmtMB(rssWithPods)} holding the pods (loaded at start) and the nodes: ${fmtInt((rssWithPods - rssBeforePods) / podCount)} bytes per pod, the nodes included; ${fmtMB(rssEnd)} at the end of the steady state.`
      : `Setup ${setupS.toFixed(1)} s (${fmtInt(podCount / setupS)} objects/s, ${setupErrors.errors} errors). RSS ${fmtMB(rssBeforePods)} before the pods, ${fmtMB(rssWithPods)} with them: ${fmtInt((rssWithPods - rssBeforePods) / podCount)} bytes per pod; ${fmtMB(rssEnd)} at the end of the steady state${servers.length > 1 ? ' (all servers)' : ''}.`);
    out.push(`Agents: ${fmtInt(watching)} of ${fmtInt(nodeCount)} listed and watching in ${agentsS.toFixed(1)} s (${o.agentConcurrency} starting at once), server CPU ${(agentCpuMs / 1000).toFixed(1)} s; watches ended early: ${watchEnds.length}${watchEnds.length ? ` (${watchEnds[0]})` : ''}.`);
    const requests = leases.ms.length * 2 + creates.ms.length + deletes.ms.length + gets.ms.length + listPages;
    out.push(`Steady state ${steadyS.toFixed(0)} s: ${servers.length > 1 ? `${servers.length} servers' ` : 'server '}CPU ${serverCpuS.toFixed(1)} s (${((serverCpuS / steadyS) * 100).toFixed(0)} % of a core; ${fmtInt(requests)} requests answered, ${((serverCpuS * 1000) / Math.max(1, requests)).toFixed(2)} ms of server CPU a request); load generators' CPU ${generatorS.toFixed(1)} s (${((generatorS / steadyS) * 100).toFixed(0)} % of a core: this process ${((gen.user + gen.system) / 1e6).toFixed(1)} s, the ${workerCount} agent processes ${workerSteadyCpuS.toFixed(1)} s; ${fmtInt((genAll.user + genAll.system) / 1e3 + workerCpuMs)} ms over the whole run).`);
    out.push(`Watch events: ${fmtInt(expected.length)} expected, ${missed} missed.`, '');
    out.push('| call | n | p50 | p99 | max | errors |', '|---|---|---|---|---|---|');
    out.push(nodeLists.row('agent list by node (rv=0)'), leases.row('lease renewal (get + put)'), creates.row('pod create'), deletes.row('pod delete'),
      gets.row('pod get'), clusterLists.row('paged cluster-wide pod list (500 a page)'), delivery.row('watch delivery (after the write\'s answer)'), '');
  } finally {
    await Promise.all(workers.map((w) => w.exit()));
  }
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
      const serverCount = Math.max(1, o.etcdServers);
      const dataDirs = Array.from({ length: serverCount }, () => mkdtempSync(join(tmpdir(), 'plat-bench-sim-')));
      const etcd = o.etcdServers > 0 ? await startEtcd(1, tmpdir()) : undefined;
      // No kubelets stand behind the nodes: the pod garbage collector and the controllers that would act on them stay off.
      const extraArgs = [
        '--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher,-pod-garbage-collector', '--max-requests-inflight', '2000',
        ...(etcd ? ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoints] : []),
      ];
      let prefilled: { rssEmpty: number; ready: string } | undefined;
      let creds: BenchServer['creds'] | undefined;
      const servers: BenchServer[] = [];
      try {
        if (o.prefill) {
          const first = await startBenchServer({ dataDir: dataDirs[0]!, entry: side.entry, timeoutMs: 60_000, extraArgs });
          const rssEmpty = await settle(first.pid).then(() => rssBytes(first.pid));
          const admin = new Agent({ keepAlive: true, ...first.creds });
          for (const ns of [leaseNamespace, podNamespace]) await sendJson(admin, first.port, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, requestTimeoutMs);
          admin.destroy();
          await first.stop();
          creds = first.creds;
          const pods = Math.round(150_000 * o.scale);
          progress(`${side.name}: writing ${fmtInt(pods)} pods into the store…`);
          const store = etcd ? new EtcdBackend({ endpoints: etcd.endpoints.split(','), requestTimeoutMs: 60_000 }) : dataDirs[0]!;
          try {
            await storePods(store, pods, Math.round(5_000 * o.scale), nodeName, podNamespace, progress);
          } finally {
            if (typeof store !== 'string') await store.close();
          }
          prefilled = { rssEmpty, ready: '' };
        }
        for (const [i, dataDir] of dataDirs.entries()) {
          servers.push(await startBenchServer({ dataDir, creds: i === 0 ? creds : undefined, entry: side.entry, timeoutMs: 600_000, extraArgs }));
        }
        if (prefilled) {
          prefilled.ready = `ready ${(servers[0]!.readyMs / 1000).toFixed(1)} s after the spawn holding them`;
          progress(`${side.name}: ${prefilled.ready}`);
        }
        const label = etcd ? `${side.name}, ${serverCount} server${serverCount > 1 ? 's' : ''} on one etcd` : side.name;
        report.push(...await simulate(label, servers, o, progress, prefilled));
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
        await etcd?.stop();
        for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
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
