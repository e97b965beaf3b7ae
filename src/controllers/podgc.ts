// The pod garbage collector (upstream `pod-garbage-collector`). Pods are
// deleted gracefully (registry/graceful.ts) and only a node agent finishes
// the deletion of a pod it runs; none runs here, as none runs for a node
// that is gone upstream. Like upstream's, this controller removes at once
// (grace 0): pods bound to a node that does not exist, once the node has
// been missing for a quarantine (40 s) and a fresh read confirms it, after
// marking them Failed with a DisruptionTarget condition; and pods being
// deleted that no node runs. A pod bound to a node that exists is left
// Terminating, as upstream leaves it until its node agent is done.
// Not done: upstream's cap on terminated pods (--terminated-pod-gc-threshold,
// 12,500) and the pods of nodes tainted out-of-service.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { rfc3339Now } from '../machinery/time.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

/** How long a node must be missing before its pods go, as upstream. */
export const quarantineMs = 40_000;

export interface PodGcOptions {
  /** Tests shorten the quarantine. */
  quarantineMs?: number;
}

const podKey = (pod: ApiObject) => `${pod.metadata!.namespace}/${pod.metadata!.name}`;

export class PodGarbageCollector extends BaseController {
  readonly name = 'pod-garbage-collector';
  private readonly queue: WorkQueue;
  private readonly pods: InformerSubscription;
  private readonly nodes: InformerSubscription;
  private readonly podType: ResourceType;
  private readonly nodeType: ResourceType;
  private readonly quarantineMs: number;

  constructor(client: ApiClient, log: Log, kit: KitArgument, options: PodGcOptions = {}) {
    super(client, log, kit);
    this.quarantineMs = options.quarantineMs ?? quarantineMs;
    this.podType = this.resolve(resources.pods);
    this.nodeType = this.resolve(resources.nodes);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'pod-garbage-collector', failure: 'pod garbage collection failed' });
    this.nodes = this.watch(this.nodeType, {
      onDelete: (node) => { for (const pod of this.pods.list()) if (pod.spec?.nodeName === node.metadata?.name) this.offer(pod); },
    });
    this.pods = this.watch(this.podType, { onAdd: (pod) => this.offer(pod), onUpdate: (_old, pod) => this.offer(pod) });
  }

  override async start(): Promise<void> {
    await this.nodes.start();
    await this.pods.start();
  }

  private offer(pod: ApiObject): void {
    const node: string | undefined = pod.spec?.nodeName;
    if (!node) {
      if (pod.metadata?.deletionTimestamp) this.queue.add(podKey(pod));
    } else if (!this.nodes.get(undefined, node)) {
      this.queue.addAfter(podKey(pod), this.quarantineMs);
    }
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.pods.get(namespace, name);
    if (!pod) return;
    const node: string | undefined = pod.spec?.nodeName;
    if (node) {
      if (this.nodes.get(undefined, node) || (await this.client.get(this.nodeType, undefined, node))) return;
      await this.markFailed(pod);
    } else if (!pod.metadata?.deletionTimestamp) {
      return;
    }
    try {
      await this.client.delete(this.podType, namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  /** As upstream: the pod is Failed (unless done already), disrupted because its node is gone. */
  private async markFailed(pod: ApiObject): Promise<void> {
    const status = { ...(pod.status ?? {}) };
    if (status.phase !== 'Succeeded' && status.phase !== 'Failed') status.phase = 'Failed';
    const conditions = ((status.conditions ?? []) as ApiObject[]).filter((c) => c.type !== 'DisruptionTarget');
    conditions.push({ type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339Now(), reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
    status.conditions = conditions;
    try {
      await this.client.update(this.podType, pod.metadata!.namespace, { ...pod, status }, 'status');
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
