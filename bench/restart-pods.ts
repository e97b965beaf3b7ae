// A restart holding the envelope's pods: 150,000 pods bound to 5,000 nodes
// in a SQLite data dir, the server started on it again and again. Per start:
// /readyz 200 from the spawn, then the first node agent's list
// (fieldSelector=spec.nodeName, resourceVersion=0, served by the pod watch
// cache and its index, so it waits for the cache's load), the server's main
// thread CPU to each, and RSS. The data dir is filled once, straight into
// the store (the pods as the server stores them, bench/stored-pod.ts), and
// kept: pass the same --data-dir again to compare starts, not loads.
//
//   node dist/bench/restart-pods.js --data-dir DIR [--pods 150000] [--nodes 5000] [--rounds 3]
//        [--base OTHER/dist/src/cli/main.js] [--node-arg=--cpu-prof ...] [--server-arg=... ...]

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { readCredentials, rssBytes, startBenchServer, type Credentials } from './child.js';
import { sendJson } from './http.js';
import { fmtInt, fmtMB, fmtMs, median } from './stats.js';
import { storePods } from './stored-pod.js';

const namespace = 'sim-pods';
const nodeName = (i: number) => `node-${String(i).padStart(5, '0')}`;
/** As cluster-sim runs the server: no kubelets stand behind the nodes. */
const serverArgs = ['--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher,-pod-garbage-collector'];

async function fill(dataDir: string, pods: number, nodes: number, progress: (m: string) => void): Promise<Credentials> {
  const server = await startBenchServer({ dataDir, extraArgs: serverArgs, timeoutMs: 60_000 });
  const agent = new Agent({ keepAlive: true, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  try {
    const r = await sendJson(agent, server.port, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, 30_000);
    if (r.status !== 201) throw new Error(`namespace: HTTP ${r.status}`);
  } finally {
    agent.destroy();
    await server.stop();
  }
  await storePods(dataDir, pods, nodes, nodeName, namespace, progress);
  return server.creds;
}

interface Sample {
  readyMs: number;
  /** From the spawn to the first node agent's list answered from the indexed cache. */
  nodeListMs: number;
  mainCpuAtReadyMs: number;
  mainCpuAtListMs: number;
  rss: number;
  load1: number;
}

/** CPU time of a process's main thread (its thread id is the process id), in ms. */
function mainThreadCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

async function restart(dataDir: string, creds: Credentials, entry: string | undefined, nodeArgs: string[], extraArgs: string[], podsPerNode: number): Promise<Sample> {
  const load1 = loadavg()[0]!;
  const t0 = performance.now();
  const server = await startBenchServer({ dataDir, creds, entry, nodeArgs, extraArgs: [...serverArgs, ...extraArgs], timeoutMs: 120_000 });
  const mainCpuAtReadyMs = mainThreadCpuMs(server.pid);
  const agent = new Agent({ keepAlive: true, ca: creds.ca, cert: creds.cert, key: creds.key });
  try {
    const path = `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName(7)}`)}&resourceVersion=0`;
    const r = await sendJson(agent, server.port, 'GET', path, undefined, 120_000);
    const nodeListMs = performance.now() - t0;
    if (r.status !== 200) throw new Error(`node list after restart: HTTP ${r.status}`);
    const items = (JSON.parse(r.body.toString('utf8')) as { items: unknown[] }).items.length;
    if (items !== podsPerNode) throw new Error(`node list after restart: ${items} pods, expected ${podsPerNode}`);
    return { readyMs: server.readyMs, nodeListMs, mainCpuAtReadyMs, mainCpuAtListMs: mainThreadCpuMs(server.pid), rss: rssBytes(server.pid), load1 };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

const cell = (s: Sample) =>
  `ready ${fmtMs(s.readyMs)} (main thread CPU ${fmtMs(s.mainCpuAtReadyMs)}) · first node list ${fmtMs(s.nodeListMs)} (CPU ${fmtMs(s.mainCpuAtListMs)}) · RSS ${fmtMB(s.rss)} (load ${s.load1.toFixed(1)})`;

async function main(): Promise<void> {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const dataDir = arg('--data-dir');
  if (!dataDir) throw new Error('--data-dir DIR is required (filled on first use, kept after)');
  const pods = Number(arg('--pods') ?? 150_000);
  const nodes = Number(arg('--nodes') ?? 5_000);
  const rounds = Number(arg('--rounds') ?? 3);
  const base = arg('--base');
  if (!(pods > 0 && nodes > 0 && pods % nodes === 0)) throw new Error('--pods must be a positive multiple of --nodes');
  const nodeArgs = process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length));
  const extraArgs = process.argv.filter((a) => a.startsWith('--server-arg=')).map((a) => a.slice('--server-arg='.length));
  const t0 = performance.now();
  const progress = (m: string) => process.stderr.write(`[restart-pods ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${m}\n`);
  mkdirSync(dataDir, { recursive: true });
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  if (!existsSync(kubeconfig)) progress(`filling ${dataDir} with ${fmtInt(pods)} pods on ${fmtInt(nodes)} nodes…`);
  const creds = existsSync(kubeconfig) ? readCredentials(kubeconfig) : await fill(dataDir, pods, nodes, progress);
  const builds: Record<string, string | undefined> = { this: undefined, ...(base ? { base } : {}) };
  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(builds).map((k) => [k, []]));
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(builds);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      const s = await restart(dataDir, creds, builds[name], nodeArgs, extraArgs, pods / nodes);
      samples[name]!.push(s);
      progress(`round ${round + 1} ${name.padEnd(4)}: ${cell(s)}`);
    }
  }
  for (const [name, xs] of Object.entries(samples)) {
    const m = (f: (s: Sample) => number) => fmtMs(median(xs.map(f)));
    process.stdout.write(`${name}: median of ${xs.length} starts holding ${fmtInt(pods)} pods: ready ${m((s) => s.readyMs)} (main thread CPU ${m((s) => s.mainCpuAtReadyMs)}), first node list ${m((s) => s.nodeListMs)} (CPU ${m((s) => s.mainCpuAtListMs)}), RSS ${fmtMB(median(xs.map((s) => s.rss)))}\n`);
  }
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
