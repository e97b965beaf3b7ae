// The TypeScript client beside @kubernetes/client-node (1.x on Node 20; 2.x
// needs Node 22 or later): client CPU per get and per watch event against
// the same server. Each library runs in a forked process of its own
// (bench/client-child.ts) and reports only its own CPU; gets alternate
// between the two round by round, and both watch the same writes at once.
// The median of the rounds counts.

import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sendJson } from './http.js';
import { withBenchServer } from './session.js';
import type { Answer, Command, Which } from './client-child.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, median } from './stats.js';

export interface ClientBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const namespace = 'client-bench';
const goalRatio = 1.1;
const childPath = new URL('./client-child.js', import.meta.url).pathname;

class Child {
  private readonly process: ChildProcess;
  private waiting?: { resolve: (a: Answer) => void; reject: (e: Error) => void };

  constructor() {
    this.process = fork(childPath, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.process.on('message', (a: Answer) => {
      const w = this.waiting;
      this.waiting = undefined;
      if (a.op === 'error') w?.reject(new Error(a.message));
      else w?.resolve(a);
    });
    this.process.on('exit', (code) => this.waiting?.reject(new Error(`the client process ended (${code})`)));
  }

  /** Sends `c`; resolves with the next answer. */
  ask(c: Command): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.process.send(c);
    });
  }

  /** The answer after the current one. */
  next(): Promise<Answer> {
    return new Promise((resolve, reject) => { this.waiting = { resolve, reject }; });
  }

  kill(): void {
    this.process.kill();
  }
}

const perOp = (a: Answer) => (a.op === 'done' ? a.cpuMs / a.n : NaN);

export async function benchClient(opts: ClientBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const POPULATION = quick ? 200 : 1_000;
  const GETS = quick ? 1_000 : 5_000;
  const EVENTS = quick ? 500 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 5 : 7);
  return withBenchServer('plat-bench-client-', 1, async ({ server: s, agent }) => {
    const post = async (path: string, body: unknown) => {
      const r = await sendJson(agent, s.port, 'POST', path, body, 10_000);
      if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    };
    progress(`client: ${fmtInt(POPULATION)} ConfigMaps…`);
    await post('/api/v1/namespaces', { metadata: { name: namespace } });
    const data = { text: 'x'.repeat(512) };
    for (let i = 0; i < POPULATION; i++) await post(`/api/v1/namespaces/${namespace}/configmaps`, { metadata: { name: `cm-${String(i).padStart(5, '0')}`, labels: { app: 'bench' } }, data });

    const children: Record<Which, Child> = { plat: new Child(), 'client-node': new Child() };
    try {
      for (const [which, child] of Object.entries(children) as [Which, Child][]) {
        await child.ask({ op: 'init', which, server: s.url, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key, namespace });
      }
      const gets: Record<Which, number[]> = { plat: [], 'client-node': [] };
      const events: Record<Which, number[]> = { plat: [], 'client-node': [] };
      progress(`client: ${ROUNDS} alternated rounds of ${fmtInt(GETS)} gets per library…`);
      // An untimed round first: JIT and connections.
      for (const child of Object.values(children)) await child.ask({ op: 'gets', count: GETS / 5, population: POPULATION, concurrency: 8, seed: 7 });
      for (let round = 0; round < ROUNDS; round++) {
        const order: Which[] = round % 2 ? ['client-node', 'plat'] : ['plat', 'client-node'];
        for (const which of order) gets[which].push(perOp(await children[which].ask({ op: 'gets', count: GETS, population: POPULATION, concurrency: 8, seed: round + 1 })));
      }
      progress(`client: ${ROUNDS} rounds of ${fmtInt(EVENTS)} watch events, both libraries watching…`);
      let serial = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const child of Object.values(children)) await child.ask({ op: 'watch', count: EVENTS });
        const done = Object.values(children).map((c) => c.next());
        for (let i = 0; i < EVENTS; i++) await post(`/api/v1/namespaces/${namespace}/configmaps`, { metadata: { name: `ev-${serial++}` }, data });
        const [plat, node] = await Promise.all(done);
        events.plat.push(perOp(plat!));
        events['client-node'].push(perOp(node!));
      }
      const rows: Row[] = [];
      for (const [what, figures] of [['get', gets], ['watch event', events]] as const) {
        const ours = median(figures.plat);
        const theirs = median(figures['client-node']);
        const ratio = ours / theirs;
        rows.push({
          metric: `client CPU per ${what}: this package's client beside @kubernetes/client-node ${clientNodeVersion()} (Node ${process.versions.node}; each in its own process; median of ${ROUNDS} rounds of ${fmtInt(what === 'get' ? GETS : EVENTS)})`,
          result: `${fmtCpu(ours)} vs ${fmtCpu(theirs)} · ${ratio.toFixed(2)}×`,
          target: target(`no more than ${goalRatio}× client-node's`, ratio <= goalRatio),
        });
      }
      return rows;
    } finally {
      for (const c of Object.values(children)) c.kill();
    }
  });
}

function clientNodeVersion(): string {
  try {
    return String((JSON.parse(readFileSync(new URL('../../node_modules/@kubernetes/client-node/package.json', import.meta.url), 'utf8')) as { version: string }).version);
  } catch {
    return '';
  }
}
