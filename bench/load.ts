// Main-thread side of the load generator: owns the worker_thread and runs one
// phase at a time on it, bounded by a deadline.

import type { LoadWorkerData, PhaseReply, PhaseRequest, PhaseSpec } from './load-protocol.js';
import { WorkerRpc } from './worker-rpc.js';
import { PhaseStats, summarise } from './stats.js';

export interface PhaseResult extends PhaseStats {
  notes: Record<string, number>;
  /** Per-phase figures other than latencies (the resourceVersions of paced writes). */
  values?: Float64Array;
}

export class LoadGenerator {
  private readonly rpc: WorkerRpc<PhaseRequest, PhaseReply>;

  constructor(data: LoadWorkerData) {
    this.rpc = new WorkerRpc(new URL('./load-worker.js', import.meta.url), data, 'load worker');
  }

  /** Runs one phase; rejects on the first failed request or after `timeoutMs`. */
  async run(spec: PhaseSpec, timeoutMs: number): Promise<PhaseResult> {
    const reply = await this.runRaw(spec, timeoutMs);
    return { ...summarise(reply.latencies, reply.elapsedMs), notes: reply.notes, values: reply.values };
  }

  /** Runs one phase and answers its latencies unsorted, for callers that merge phases. */
  async runRaw(spec: PhaseSpec, timeoutMs: number): Promise<{ latencies: Float64Array; elapsedMs: number; notes: Record<string, number>; values?: Float64Array }> {
    const reply = await this.rpc.call({ spec }, timeoutMs, `phase ${spec.kind}`);
    if (!reply.ok) throw new Error(`phase ${spec.kind} failed: ${reply.error}`);
    return reply;
  }

  async close(): Promise<void> {
    await this.rpc.terminate();
  }
}
