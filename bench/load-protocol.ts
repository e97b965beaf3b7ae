// Messages between the benchmark's main thread and its load-generator worker.

import type { Credentials } from './child.js';

export interface LoadWorkerData {
  url: string;
  /** The no-work server (bench/nowork-server.ts) that `nowork` phases drive, on the same agent. */
  noWorkUrl?: string;
  creds: Credentials;
  /** Concurrent keep-alive clients (= the agent's maxSockets). */
  concurrency: number;
  /** Sent as `Authorization: Bearer` on every request; the agent then presents no client certificate. */
  bearerToken?: string;
}

export type PhaseSpec =
  | { kind: 'namespaces'; names: string[] }
  /** POST `count` ServiceAccounts named <prefix>00000… (from <prefix><first> when given). */
  | { kind: 'create'; namespace: string; prefix: string; count: number; remember: boolean; first?: number }
  /**
   * `count` GETs of names picked at random (seeded) among the first `population`; `anyVersion`: with resourceVersion=0;
   * `collectionPath`: the collection read (default: the namespace's ServiceAccounts); `unparsed`: each answer is
   * checked by its name's bytes instead of parsed and kept for later updates (so that a kind whose JSON costs the
   * client more to parse, a pod's, is not charged the client's work on the cores it shares with the server).
   */
  | { kind: 'get'; namespace: string; prefix: string; population: number; count: number; seed: number; anyVersion?: boolean; collectionPath?: string; unparsed?: boolean }
  /**
   * `count` PUTs of the freshest copy seen, with a label change; a 409 refetches and retries. `collectionPath`: the
   * collection written (default: the namespace's ServiceAccounts); `status`: PUTs through the status sub-resource,
   * changing status.message instead (a pod's status, as a node agent writes it); `statusCount`: the status field
   * set instead, to a number that grows with every write (a workload's status.observedGeneration, as its controller writes it).
   */
  | { kind: 'update'; namespace: string; prefix: string; population: number; count: number; round: number; collectionPath?: string; status?: boolean; statusCount?: string }
  /**
   * `count` unconditional PUTs (no resourceVersion, as `kubectl replace` sends) of
   * ServiceAccounts among the first `population`, each with labels of its own;
   * the i-th replaces number (first + i) % population.
   */
  | { kind: 'replace'; namespace: string; prefix: string; population: number; count: number; round: number; first?: number }
  /**
   * Against the no-work server (`noWorkUrl`): `count` requests shaped as the create ('POST'),
   * replace ('PUT') or get ('GET') phase sends them, each reply parsed; with `configMapBytes`,
   * shaped as the ConfigMap creates and replaces of that size instead.
   */
  | { kind: 'nowork'; method: 'POST' | 'PUT' | 'GET'; namespace: string; prefix: string; population: number; count: number; configMapBytes?: number }
  /** `count` unpaged lists of a namespace holding `expectItems` ServiceAccounts. */
  | { kind: 'list'; namespace: string; count: number; expectItems: number }
  /** POST `count` Pods named <prefix>00000… of realistic size (two containers, probes, mounts; about 4 KiB stored). */
  | { kind: 'create-pod'; namespace: string; prefix: string; count: number }
  /** POST `count` Deployments named <prefix>00000… whose template is that Pod (two replicas, a selector). */
  | { kind: 'create-deployment'; namespace: string; prefix: string; count: number }
  /**
   * Server-side applies (PATCH application/apply-patch+yaml, fieldManager
   * bench, force) of `count` ConfigMaps of about `bytes` or Deployments named
   * <prefix>00000…, labelled with `round`: creates when they are new, updates
   * of the label when they exist.
   */
  | { kind: 'apply'; what: 'cm' | 'deployment'; namespace: string; prefix: string; count: number; bytes: number; round: number }
  /** POST `count` ConfigMaps named <prefix>00000… (from <prefix><first> when given) whose stored JSON is about `bytes` long. */
  | { kind: 'create-cm'; namespace: string; prefix: string; count: number; bytes: number; concurrency?: number; first?: number }
  /** `count` unconditional PUTs of ConfigMaps of about `bytes` among the first `population`, each with labels of its own; the i-th replaces number (first + i) % population. */
  | { kind: 'replace-cm'; namespace: string; prefix: string; population: number; count: number; bytes: number; round: number; first?: number }
  /**
   * `count` unpaged lists of the ConfigMaps of a namespace holding `expectItems` named
   * <prefix>…, from `concurrency` clients; every `checkEvery`-th reply is parsed and counted.
   * `collectionPath`: another collection listed the same way (a namespace's pods).
   */
  | { kind: 'list-cm'; namespace: string; prefix: string; count: number; expectItems: number; concurrency: number; checkEvery: number; collectionPath?: string }
  /** `count` full walks (one after another) of a namespace's ConfigMaps in pages of `limit`, following continue tokens; `expectItems` of them named <prefix>…. */
  | { kind: 'walk-cm'; namespace: string; prefix: string; count: number; limit: number; expectItems: number }
  /**
   * Writes paced at `perSecond` for `durationMs`: the first `pool` create ConfigMaps
   * <prefix>00000…, the rest replace them in turn (unconditional PUTs). The reply's
   * `values` holds the resourceVersion of every write.
   */
  | { kind: 'paced-writes'; namespace: string; prefix: string; perSecond: number; durationMs: number; pool: number };

export interface PhaseRequest {
  id: number;
  spec: PhaseSpec;
}

export type PhaseReply =
  | { id: number; ok: true; latencies: Float64Array; elapsedMs: number; notes: Record<string, number>; values?: Float64Array }
  | { id: number; ok: false; error: string };
