// The node side of cluster-sim, run in load-generator processes of their own
// (bench/cluster-sim-worker.ts) so that thousands of TLS connections and
// their watch streams are spread over several processes: each process takes
// a share of the nodes, starts their agents (list by spec.nodeName at
// resourceVersion=0, then a watch from that list) and renews their Leases.
// Times are on one clock shared by the processes of the machine
// (performance.timeOrigin + now), so a watch event's arrival here is
// compared with the write's answer in the main process.

import { Agent, request } from 'node:https';
import { sendJson } from './http.js';
import { fmtInt } from './stats.js';

export const leaseNamespace = 'sim-node-lease';
export const podNamespace = 'sim-pods';
export const requestTimeoutMs = 60_000;

/** Milliseconds on a clock every process of the machine shares. */
export const clock = (): number => performance.timeOrigin + performance.now();

/** Latencies of one call type, and its errors; sent between processes as it is. */
export interface CallsData {
  ms: number[];
  errors: number;
  lastError: string;
}

export class Calls implements CallsData {
  ms: number[] = [];
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

  /** Adds another process's figures of the same call type. */
  merge(other: CallsData): this {
    for (const ms of other.ms) this.ms.push(ms);
    this.errors += other.errors;
    if (other.errors) this.lastError = other.lastError;
    return this;
  }

  row(name: string): string {
    const sorted = [...this.ms].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
    const f = (v: number) => (Number.isNaN(v) ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
    return `| ${name} | ${fmtInt(sorted.length)} | ${f(at(0.5))} | ${f(at(0.99))} | ${f(sorted.at(-1) ?? NaN)} | ${this.errors}${this.errors ? ` (${this.lastError.slice(0, 60)})` : ''} |`;
  }

  data(): CallsData {
    return { ms: this.ms, errors: this.errors, lastError: this.lastError };
  }
}

export interface ServerAddress {
  port: number;
  creds: { ca: string; cert: string; key: string };
}

/** A node agent's watch: JSON lines of its pods' events, with the arrival time of each ("ADDED pod-1"). */
export class AgentWatch {
  /** Events not yet handed over by `drain`: [event key, arrival]. */
  private fresh: [string, number][] = [];
  ended = false;
  private buffered = '';
  private readonly request: ReturnType<typeof request>;

  constructor(readonly node: string, server: ServerAddress, agent: Agent, resourceVersion: string, onEnd: (why: string) => void) {
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

  close(): void {
    this.ended = true;
    this.request.destroy();
  }

  /** The events that arrived since the last call. */
  drain(): [string, number][] {
    const out = this.fresh;
    this.fresh = [];
    return out;
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
      this.fresh.push([`${event.type} ${event.object.metadata.name}`, clock()]);
    }
  }
}

export async function inBatches<T>(items: T[], width: number, each: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await each(items[i]!, i);
    }
  }));
}

/** Runs `tick` every `periodMs` (not waiting for it) until `stopping()`; resolves once the ticks in flight are done. */
export async function every(periodMs: number, stopping: () => boolean, tick: () => Promise<void>): Promise<void> {
  let due = performance.now();
  const pending: Promise<void>[] = [];
  while (!stopping()) {
    pending.push(tick().catch(() => undefined));
    if (pending.length > 512) await Promise.all(pending.splice(0));
    due += periodMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
}

export const renewTime = () => new Date().toISOString().replace('Z', '000Z');

/** One renewal of a node's Lease as a kubelet does it: a get, then a put of it with a new renewTime. */
export function renewLease(calls: Calls, send: (method: string, path: string, body?: unknown) => ReturnType<typeof sendJson>, node: string): Promise<unknown> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases/${node}`;
  return calls.time(async () => {
    const current = await send('GET', path);
    const body = JSON.parse(current.body.toString('utf8'));
    body.spec.renewTime = renewTime();
    return send('PUT', path, body);
  }, (r) => r.status === 200);
}
