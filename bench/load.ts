// Main-thread side of the load generator: owns the worker_thread and runs one
// phase at a time on it, bounded by a deadline.

import { Worker } from 'node:worker_threads';
import type { LoadWorkerData, PhaseReply, PhaseSpec } from './load-protocol.js';
import { PhaseStats, summarise } from './stats.js';

export interface PhaseResult extends PhaseStats {
  notes: Record<string, number>;
  /** Per-phase figures other than latencies (the resourceVersions of paced writes). */
  values?: Float64Array;
}

export class LoadGenerator {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: PhaseReply) => void; reject: (e: Error) => void }>();

  constructor(data: LoadWorkerData) {
    this.worker = new Worker(new URL('./load-worker.js', import.meta.url), { workerData: data });
    this.worker.on('message', (reply: PhaseReply) => {
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      p?.resolve(reply);
    });
    const failAll = (e: Error) => {
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on('error', failAll);
    this.worker.on('exit', (code) => failAll(new Error(`load worker exited (${code})`)));
  }

  /** Runs one phase; rejects on the first failed request or after `timeoutMs`. */
  async run(spec: PhaseSpec, timeoutMs: number): Promise<PhaseResult> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const reply = await Promise.race([
      new Promise<PhaseReply>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ id, spec });
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`phase ${spec.kind} did not finish within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!reply.ok) throw new Error(`phase ${spec.kind} failed: ${reply.error}`);
    return { ...summarise(reply.latencies, reply.elapsedMs), notes: reply.notes, values: reply.values };
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
