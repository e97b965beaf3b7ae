// A load-generator process of cluster-sim (forked by bench/cluster-sim.ts):
// the agents of its share of the nodes, each listing its pods and then
// watching them, and their Lease renewals in the steady state. It answers
// the main process over the fork's IPC channel (see WorkerMessage).

import { Agent } from 'node:https';
import {
  AgentWatch, Calls, CallsData, every, inBatches, renewLease, requestTimeoutMs, ServerAddress,
} from './cluster-sim-agents.js';
import { sendJson } from './http.js';

/** From the main process. */
export type ToWorker =
  | { type: 'agents'; server: ServerAddress; nodes: string[]; concurrency: number }
  | { type: 'leases'; periodMs: number }
  | { type: 'stop-leases' }
  | { type: 'collect' }
  | { type: 'exit' };

/** To the main process. */
export type WorkerMessage =
  | { type: 'watching'; count: number }
  | { type: 'agents-done'; lists: CallsData; watching: number }
  | { type: 'leases-stopped'; leases: CallsData }
  | { type: 'collected'; seen: [string, string, number][]; watchEnds: string[]; cpuMs: number };

const send = (m: WorkerMessage) => process.send!(m);

let server: ServerAddress | undefined;
let agent: Agent | undefined;
let nodes: string[] = [];
const watches: AgentWatch[] = [];
const watchEnds: string[] = [];
const leases = new Calls();
let stopLeases = false;
let leaseLoop: Promise<void> | undefined;

const call = (method: string, path: string, body?: unknown) => sendJson(agent!, server!.port, method, path, body, requestTimeoutMs);

async function startAgents(m: Extract<ToWorker, { type: 'agents' }>): Promise<void> {
  server = m.server;
  nodes = m.nodes;
  const { ca, cert, key } = server.creds;
  agent = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
  const watchAgent = new Agent({ keepAlive: false, maxSockets: Infinity, ca, cert, key });
  const lists = new Calls();
  await inBatches(nodes, m.concurrency, async (n) => {
    const r = await lists.time(() => call('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${n}`)}&resourceVersion=0`), (x) => x.status === 200);
    if (!r) return;
    const list = JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string } };
    watches.push(new AgentWatch(n, server!, watchAgent, list.metadata.resourceVersion, (why) => watchEnds.push(why)));
    if (watches.length % 100 === 0) send({ type: 'watching', count: watches.length });
  });
  send({ type: 'agents-done', lists: lists.data(), watching: watches.length });
}

process.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'agents':
      void startAgents(m);
      break;
    case 'leases': {
      // This process's nodes, each renewed once a period, spread evenly over it.
      let turn = 0;
      leaseLoop = every(m.periodMs / Math.max(1, nodes.length), () => stopLeases, () => renewLease(leases, call, nodes[turn++ % nodes.length]!).then(() => undefined));
      break;
    }
    case 'stop-leases':
      stopLeases = true;
      void (leaseLoop ?? Promise.resolve()).then(() => send({ type: 'leases-stopped', leases: leases.data() }));
      break;
    case 'collect': {
      const seen: [string, string, number][] = [];
      for (const w of watches) for (const [key, at] of w.drain()) seen.push([w.node, key, at]);
      const cpu = process.cpuUsage();
      send({ type: 'collected', seen, watchEnds, cpuMs: (cpu.user + cpu.system) / 1000 });
      break;
    }
    case 'exit':
      for (const w of watches) w.close();
      agent?.destroy();
      process.exit(0);
  }
});
