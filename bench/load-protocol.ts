// Messages between the benchmark's main thread and its load-generator worker.

import type { Credentials } from './child.js';

export interface LoadWorkerData {
  url: string;
  creds: Credentials;
  /** Concurrent keep-alive clients (= the agent's maxSockets). */
  concurrency: number;
}

export type PhaseSpec =
  | { kind: 'namespaces'; names: string[] }
  /** POST `count` ServiceAccounts named <prefix>00000… */
  | { kind: 'create'; namespace: string; prefix: string; count: number; remember: boolean }
  /** `count` GETs of names picked at random (seeded) among the first `population`. */
  | { kind: 'get'; namespace: string; prefix: string; population: number; count: number; seed: number }
  /** `count` PUTs of the freshest copy seen, with a label change; a 409 refetches and retries. */
  | { kind: 'update'; namespace: string; prefix: string; population: number; count: number; round: number }
  /** `count` unpaged lists of a namespace holding `expectItems` ServiceAccounts. */
  | { kind: 'list'; namespace: string; count: number; expectItems: number };

export interface PhaseRequest {
  id: number;
  spec: PhaseSpec;
}

export type PhaseReply =
  | { id: number; ok: true; latencies: Float64Array; elapsedMs: number; notes: Record<string, number> }
  | { id: number; ok: false; error: string };
