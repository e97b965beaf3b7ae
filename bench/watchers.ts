// Main-thread side of the watchers: a pool of worker threads that hold the
// watch streams, so that reading 1,000 streams does not share the main event
// loop (which sends the writes). Receipt times use a clock shared by threads.

import { WorkerRpc } from './worker-rpc.js';
import type { Credentials } from './child.js';
import { sharedNow, type SequenceReport, type WatchersReply, type WatchersRequest, type WatchMode } from './watchers-protocol.js';

type Body<T> = T extends unknown ? Omit<T, 'id'> : never;

class WatchersWorker {
  private readonly rpc: WorkerRpc<WatchersRequest, WatchersReply>;

  constructor(url: string, creds: Credentials) {
    this.rpc = new WorkerRpc(new URL('./watchers-worker.js', import.meta.url), { url, creds, perAgent: 100 }, 'watchers worker');
  }

  async call(body: Body<WatchersRequest>, timeoutMs: number): Promise<Extract<WatchersReply, { ok: true }>> {
    const reply = await this.rpc.call(body as Omit<WatchersRequest, 'id'>, timeoutMs, `watchers ${body.op}`);
    if (!reply.ok) throw new Error(`watchers ${body.op} failed: ${reply.error}`);
    return reply;
  }

  async terminate(): Promise<void> {
    await this.rpc.terminate();
  }
}

export interface Delivery {
  /** Milliseconds from just before the write was sent to each stream's receipt. */
  latencies: Float64Array;
  /** Streams that did not see the event in time. */
  missing: number;
}

export class WatcherPool {
  private readonly workers: WatchersWorker[];

  constructor(url: string, creds: Credentials, threads: number) {
    this.workers = Array.from({ length: threads }, () => new WatchersWorker(url, creds));
  }

  /** Opens `count` streams of `path`, spread evenly over the threads; resolves with the wall time it took. */
  async open(path: string, count: number, mode: WatchMode, timeoutMs = 120_000): Promise<number> {
    const t = performance.now();
    const n = this.workers.length;
    await Promise.all(this.workers.map((w, i) => {
      const share = Math.floor(count / n) + (i < count % n ? 1 : 0);
      return share > 0 ? w.call({ op: 'open', path, count: share, mode, parallel: 32 }, timeoutMs) : undefined;
    }));
    return performance.now() - t;
  }

  /**
   * Arms every stream for `marker`, runs `write` (timed from just before it
   * starts), and collects when each stream saw the marker.
   */
  async deliver(marker: string, write: () => Promise<void>, timeoutMs = 10_000): Promise<Delivery> {
    await Promise.all(this.workers.map((w) => w.call({ op: 'arm', marker }, timeoutMs)));
    const sentAt = sharedNow();
    await write();
    const replies = await Promise.all(this.workers.map((w) => w.call({ op: 'collect', timeoutMs }, timeoutMs + 5_000)));
    const all = replies.flatMap((r) => Array.from(r.times ?? [], (t) => t - sentAt));
    return { latencies: Float64Array.from(all), missing: replies.reduce((m, r) => m + (r.missing ?? 0), 0) };
  }

  /** Compares what every sequence-mode stream saw with `expected` (revisions in order). */
  async verify(expected: Float64Array, timeoutMs: number): Promise<SequenceReport> {
    const replies = await Promise.all(this.workers.map((w) => w.call({ op: 'verify', expected, timeoutMs }, timeoutMs + 5_000)));
    const sum: SequenceReport = { watchers: 0, exact: 0, lost: 0, reordered: 0, duplicated: 0, unexpected: 0, ended: 0, events: 0 };
    for (const r of replies) {
      for (const k of Object.keys(sum) as (keyof SequenceReport)[]) sum[k] += r.report![k];
    }
    return sum;
  }

  /** Closes every stream (the threads stay for the next open). */
  async closeStreams(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.call({ op: 'close' }, 10_000)));
  }

  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
