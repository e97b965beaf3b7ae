// The resource quota controller (upstream `resourcequota`): keeps each
// quota's status: `hard` mirrors `spec.hard`, `used` is the namespace's use
// recounted from the shared informers' caches. A quota is recounted when it
// is created or its caps change, when an object it counts is deleted or its
// usage changes (a pod finishes, a service changes type), and at every full
// resync (upstream's 5 minutes). The admission plugin charges writes as they
// come; this recount is what gives back what deletions free and corrects
// what a crash between a charge and its write left behind.
//
// The status is written by compare-and-swap on the quota as read from the
// cache: a charge admission made meanwhile makes the write fail, and the
// recount runs again on the newer quota.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import { namespaceIndex, objectKey, type InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import type { KubeObject } from '../api/kind.js';
import { countedResources, evaluatorFor, scopeRequirements, usageOf, type Evaluator } from '../api/quota/evaluators.js';
import { equals, mask, resourceList, toJson, type ResourceList } from '../api/quota/resources.js';
import { deepEqual } from '../machinery/equal.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

/** Upstream's --resource-quota-sync-period. */
export const quotaResyncMs = 5 * 60_000;

export interface ResourceQuotaControllerOptions {
  /** Tests shorten the full resync. */
  resyncMs?: number;
}

/** The objects of one counted resource, watched while some quota counts them. */
interface Monitor {
  evaluator: Evaluator;
  subscription: InformerSubscription;
  /** Its first list, started once. */
  synced: Promise<void>;
}

export class ResourceQuotaController extends BaseController {
  readonly name = 'resourcequota';
  private readonly queue: WorkQueue;
  private readonly quotas: InformerSubscription;
  private readonly quotaType: ResourceType;
  private readonly monitors = new Map<string, Monitor>();
  private stopResources?: () => void;
  private stopped = false;

  constructor(client: ApiClient, log: Log, kit: KitArgument, options: ResourceQuotaControllerOptions = {}) {
    super(client, log, kit);
    this.quotaType = this.resolve(resources.resourceQuotas);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'resourcequota_primary', failure: 'resource quota sync failed' });
    this.quotas = this.watch(this.quotaType, {
      onAdd: (q) => this.queue.add(objectKey(q)),
      onUpdate: (old, q) => {
        // A resync hands the same object: recount. Otherwise only a change of the caps or scopes does (status changes are this controller's and admission's).
        if (old === q || !deepEqual(old.spec, q.spec) || !deepEqual(q.spec?.hard ?? {}, q.status?.hard ?? {})) this.queue.add(objectKey(q));
      },
    }, { resyncMs: options.resyncMs ?? quotaResyncMs });
  }

  override async start(): Promise<void> {
    await super.start();
    // Custom resources come and go: a count of one not served before is watched once it is.
    this.stopResources = this.client.onResourcesChanged?.(() => { for (const q of this.quotas.list()) this.queue.add(objectKey(q)); });
  }

  override async stop(): Promise<void> {
    this.stopped = true;
    this.stopResources?.();
    for (const m of this.monitors.values()) m.subscription.stop();
    this.monitors.clear();
    await super.stop();
  }

  /** Every quota of a namespace, recounted. */
  private replenish(namespace: string | undefined): void {
    if (!namespace) return;
    for (const q of this.quotas.byIndex(namespaceIndex, namespace)) this.queue.add(objectKey(q));
  }

  /** The watched objects of a counted resource, watched from now on; undefined when the server does not serve it. */
  private async monitor(group: string, resource: string): Promise<Monitor | undefined> {
    const id = `${group}/${resource}`;
    let m = this.monitors.get(id);
    if (!m) {
      const evaluator = evaluatorFor(group, resource);
      const type = this.client.resources().find((r) => r.group === group && r.resource === resource && r.verbs.includes('list') && r.verbs.includes('watch'))
        ?? this.client.resources().find((r) => r.group === group && r.resource === resource);
      if (!evaluator || !type || this.stopped) return undefined;
      const changed = (old: ApiObject, obj: ApiObject) => {
        if (old === obj) return;
        const now = this.now();
        if (!equals(evaluator.usage(old as KubeObject, now), evaluator.usage(obj as KubeObject, now))) this.replenish(obj.metadata?.namespace);
      };
      const subscription = this.kit.informers.subscribe(type, {
        onUpdate: changed,
        onDelete: (obj) => this.replenish(obj.metadata?.namespace),
      });
      // A failed first list is tried again by the next sync.
      const synced = subscription.start().catch((e: unknown) => {
        this.monitors.delete(id);
        subscription.stop();
        throw e;
      });
      m = { evaluator, subscription, synced };
      this.monitors.set(id, m);
    }
    await m.synced;
    return m;
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const quota = this.quotas.get(key.slice(0, slash), key.slice(slash + 1)) as KubeObject | undefined;
    if (!quota) return;
    const namespace = quota.metadata!.namespace!;
    const hard = resourceList(quota.spec?.hard);
    const hardNames = [...hard.keys()];
    const scopes = scopeRequirements(quota);
    // What the quota said it used stays for names no evaluator recounts, as upstream.
    let used: ResourceList = resourceList(quota.status?.used);
    const now = this.now();
    for (const { group, resource } of countedResources(hardNames)) {
      const m = await this.monitor(group, resource);
      if (!m) continue;
      const objects = m.subscription.byIndex(namespaceIndex, namespace) as KubeObject[];
      for (const [name, q] of usageOf(m.evaluator, hardNames, scopes, objects, now)) used.set(name, q);
    }
    used = mask(used, hardNames);
    const statusHard = resourceList(quota.status?.hard);
    const dirty = !quota.status?.hard || !quota.status?.used || !equals(statusHard, hard) || !deepEqual(quota.status.hard, quota.spec?.hard ?? {}) || !equals(used, resourceList(quota.status.used));
    if (!dirty) return;
    try {
      await this.client.update(this.quotaType, namespace, { ...quota, status: { hard: toJson(hard), used: toJson(used) } }, 'status');
    } catch (e) {
      if (isNotFound(e)) return;
      // Admission charged the quota meanwhile: count again on the newer one.
      if (isConflict(e)) {
        this.queue.addAfter(key, 100);
        return;
      }
      throw e;
    }
  }
}
