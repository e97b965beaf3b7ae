// The pod garbage collector (upstream `pod-garbage-collector`). Pods are
// deleted gracefully (registry/graceful.ts) and only a node agent finishes
// the deletion of a pod it runs; none runs here, as none runs for a node
// that is gone upstream. Like upstream's, this controller removes at once
// (grace 0): pods bound to a node that does not exist, once the node has
// been missing for a quarantine (40 s) and a fresh read confirms it, after
// marking them Failed with a DisruptionTarget condition; and pods being
// deleted that no node runs. A pod bound to a node that exists is left
// Terminating, as upstream leaves it until its node agent is done, unless
// that node is not ready and tainted out-of-service: then its terminating
// pods go too. And finished pods (Succeeded, Failed) beyond upstream's
// threshold (12,500; its --terminated-pod-gc-threshold is a controller
// manager flag, kept here as an option) go oldest first, evicted ones first.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { rfc3339Now } from '../machinery/time.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

/** How long a node must be missing before its pods go, as upstream. */
export const quarantineMs = 40_000;
/** Finished pods kept before the oldest go, as upstream's default. */
export const terminatedPodThreshold = 12_500;

export interface PodGcOptions {
  /** Tests shorten the quarantine. */
  quarantineMs?: number;
  /** Finished pods kept; 0 keeps them all (upstream's --terminated-pod-gc-threshold). */
  terminatedPodThreshold?: number;
}

const podKey = (pod: ApiObject) => `${pod.metadata!.namespace}/${pod.metadata!.name}`;
/** The queue key of the count of finished pods (every pod key has a slash; this one has none). */
const finishedPodsKey = 'finished-pods';
const finished = (pod: ApiObject) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Upstream's order of removal: evicted pods first, then the oldest, then by name. */
function removalOrder(a: ApiObject, b: ApiObject): number {
  const evicted = (p: ApiObject) => p.status?.phase === 'Failed' && p.status?.reason === 'Evicted';
  if (evicted(a) !== evicted(b)) return evicted(a) ? -1 : 1;
  const [ta, tb] = [Date.parse(a.metadata?.creationTimestamp ?? ''), Date.parse(b.metadata?.creationTimestamp ?? '')];
  if (ta !== tb) return ta - tb;
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
}

/** Whether a node is down for good, as its admin says: not ready, and tainted out-of-service. */
function outOfService(node: ApiObject): boolean {
  const ready = ((node.status?.conditions ?? []) as ApiObject[]).find((c) => c.type === 'Ready');
  return ready?.status !== 'True' && ((node.spec?.taints ?? []) as ApiObject[]).some((t) => t.key === vocabulary.outOfServiceTaint);
}

export class PodGarbageCollector extends BaseController {
  readonly name = 'pod-garbage-collector';
  private readonly queue: WorkQueue;
  private readonly pods: InformerSubscription;
  private readonly nodes: InformerSubscription;
  private readonly podType: ResourceType;
  private readonly nodeType: ResourceType;
  private readonly quarantineMs: number;
  private readonly terminatedPodThreshold: number;

  constructor(client: ApiClient, log: Log, kit: KitArgument, options: PodGcOptions = {}) {
    super(client, log, kit);
    this.quarantineMs = options.quarantineMs ?? quarantineMs;
    this.terminatedPodThreshold = options.terminatedPodThreshold ?? terminatedPodThreshold;
    this.podType = this.resolve(resources.pods);
    this.nodeType = this.resolve(resources.nodes);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'pod-garbage-collector', failure: 'pod garbage collection failed' });
    this.nodes = this.watch(this.nodeType, {
      onDelete: (node) => this.offerPodsOf(node),
      onUpdate: (_old, node) => { if (outOfService(node)) this.offerPodsOf(node); },
    });
    this.pods = this.watch(this.podType, { onAdd: (pod) => this.offer(pod), onUpdate: (_old, pod) => this.offer(pod) });
  }

  override async start(): Promise<void> {
    await this.nodes.start();
    await this.pods.start();
  }

  private offerPodsOf(node: ApiObject): void {
    for (const pod of this.pods.list()) if (pod.spec?.nodeName === node.metadata?.name) this.offer(pod);
  }

  private offer(pod: ApiObject): void {
    const node: string | undefined = pod.spec?.nodeName;
    if (finished(pod) && this.terminatedPodThreshold > 0) this.queue.add(finishedPodsKey);
    if (!node) {
      if (pod.metadata?.deletionTimestamp) this.queue.add(podKey(pod));
      return;
    }
    const bound = this.nodes.get(undefined, node);
    if (!bound) this.queue.addAfter(podKey(pod), this.quarantineMs);
    else if (pod.metadata?.deletionTimestamp && outOfService(bound)) this.queue.add(podKey(pod));
  }

  private async sync(key: string): Promise<void> {
    if (key === finishedPodsKey) return this.removeFinishedBeyondThreshold();
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.pods.get(namespace, name);
    if (!pod) return;
    const node: string | undefined = pod.spec?.nodeName;
    if (node) {
      const bound = this.nodes.get(undefined, node) ?? (await this.client.get(this.nodeType, undefined, node));
      if (!bound) await this.markFailed(pod, { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
      else if (pod.metadata?.deletionTimestamp && outOfService(bound)) await this.markFailed(pod);
      else return;
    } else if (!pod.metadata?.deletionTimestamp) {
      return;
    }
    await this.forceDelete(pod);
  }

  /** As upstream's gcTerminated: finished pods beyond the threshold go, in removal order. */
  private async removeFinishedBeyondThreshold(): Promise<void> {
    const done = this.pods.list().filter(finished);
    const excess = done.length - this.terminatedPodThreshold;
    if (excess <= 0) return;
    for (const pod of done.sort(removalOrder).slice(0, excess)) await this.forceDelete(pod);
  }

  private async forceDelete(pod: ApiObject): Promise<void> {
    try {
      await this.client.delete(this.podType, pod.metadata!.namespace, pod.metadata!.name!, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  /** As upstream: the pod is Failed (unless done already), with the DisruptionTarget condition when a reason is given. */
  private async markFailed(pod: ApiObject, disruption?: { reason: string; message: string }): Promise<void> {
    if (finished(pod)) return;
    const status = { ...(pod.status ?? {}), phase: 'Failed' };
    if (disruption) {
      const conditions = ((status.conditions ?? []) as ApiObject[]).filter((c) => c.type !== 'DisruptionTarget');
      conditions.push({ type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339Now(), ...disruption });
      status.conditions = conditions;
    }
    try {
      await this.client.update(this.podType, pod.metadata!.namespace, { ...pod, status }, 'status');
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
