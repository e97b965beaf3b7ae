// The namespace controller: a namespace being deleted (Terminating, holding
// our finalizer in spec.finalizers) has every object inside deleted, of every
// namespaced kind; progress is reported in status.conditions as upstream
// does; when nothing is left, the finalizer is removed through the finalize
// sub-resource and the namespace disappears.

import { vocabulary } from '../machinery/vocabulary.js';
import { rfc3339Now } from '../machinery/time.js';
import { ApiClient, ApiObject, isConflict, isNotFound, ResourceType } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

/** How long to wait before looking again at a namespace whose content is still going. */
const recheckMs = 1_000;
/** Deletes one namespace sync has in flight at once. */
const deletesInFlight = 8;
/** Namespaces deleted at once (upstream's --concurrent-namespace-syncs). */
const namespaceWorkers = 10;

export class NamespaceController extends BaseController {
  readonly name = 'namespace';
  private readonly queue: WorkQueue;
  private readonly namespacesType: ResourceType;
  private readonly namespaces: InformerSubscription;

  constructor(client: ApiClient, log: Log = () => undefined, kit: KitArgument) {
    super(client, log, kit);
    this.namespacesType = this.resolve(resources.namespaces);
    // As upstream's namespace controller: several namespaces at once, and a namespace is retried for as long as it takes.
    this.queue = this.workQueue((name) => this.sync(name), { name: 'namespace', workers: namespaceWorkers, maxRetries: Infinity, failure: 'namespace sync failed' });
    const enqueue = (ns: ApiObject) => { if (ns.metadata?.deletionTimestamp) this.queue.add(ns.metadata.name); };
    this.namespaces = this.watch(this.namespacesType, { onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
  }

  private async sync(name: string): Promise<void> {
    const ns = this.namespaces.get(undefined, name);
    if (!ns?.metadata?.deletionTimestamp) return;
    if (!(ns.spec?.finalizers ?? []).includes(vocabulary.namespaceFinalizer)) return;
    const { remaining, finalizers, failures } = await this.deleteContent(name);
    await this.reportConditions(ns, remaining, finalizers, failures);
    if (remaining.size > 0 || failures.length > 0) {
      this.queue.addAfter(name, recheckMs);
      return;
    }
    await this.finalize(ns);
  }

  /** Deletes every object in the namespace; tells what is still there and which finalizers hold it. */
  private async deleteContent(namespace: string) {
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const failures: string[] = [];
    for (const type of this.client.resources()) {
      if (!type.namespaced || !type.verbs.includes('list') || !type.verbs.includes('delete')) continue;
      try {
        // Read live: no informer holds every kind, and what is left must be counted as stored.
        const { items } = await this.client.list(type, namespace, { metadataOnly: true });
        const going = items.filter((item) => !item.metadata?.deletionTimestamp);
        // A few deletes in flight at once: the store commits them together instead of one after another.
        let next = 0;
        await Promise.all(Array.from({ length: Math.min(deletesInFlight, going.length) }, async () => {
          for (let i = next++; i < going.length; i = next++) {
            await this.client.delete(type, namespace, going[i]!.metadata!.name, { propagationPolicy: 'Background' });
          }
        }));
        const left = items.length ? (await this.client.list(type, namespace, { metadataOnly: true })).items : [];
        if (left.length) remaining.set(type.group ? `${type.resource}.${type.group}` : type.resource, left.length);
        for (const item of left) for (const f of item.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
      } catch (e) {
        failures.push(`${type.resource}: ${(e as Error).message}`);
      }
    }
    return { remaining, finalizers, failures };
  }

  private async reportConditions(ns: ApiObject, remaining: Map<string, number>, finalizers: Map<string, number>, failures: string[]): Promise<void> {
    const describe = (m: Map<string, number>) => [...m].sort().map(([k, n]) => `${k} has ${n} resource instances`).join(', ');
    const describeFinalizers = (m: Map<string, number>) => [...m].sort().map(([k, n]) => `${k} in ${n} resource instances`).join(', ');
    const wanted: Condition[] = [
      { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
      { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
      failures.length
        ? { type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${failures.length} remaining: ${failures.join(', ')}` }
        : { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      remaining.size
        ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${describe(remaining)}` }
        : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
      finalizers.size
        ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${describeFinalizers(finalizers)}` }
        : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
    ];
    const current: Condition[] = ns.status?.conditions ?? [];
    const now = rfc3339Now();
    let changed = false;
    const conditions = wanted.map((w) => {
      const old = current.find((c) => c.type === w.type);
      if (old && old.status === w.status && old.reason === w.reason && old.message === w.message) return old;
      changed = true;
      return { ...w, lastTransitionTime: old && old.status === w.status ? old.lastTransitionTime : now };
    });
    if (!changed) return;
    try {
      await this.client.update(this.namespacesType, undefined, { ...ns, status: { ...ns.status, conditions } }, 'status');
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(ns.metadata!.name); // look again at the fresh object
    }
  }

  /** Removes our finalizer; with nothing else holding it, the namespace is then gone. */
  private async finalize(cached: ApiObject): Promise<void> {
    // The namespace as stored now: a finalizer another party added since our cache saw it must not be dropped.
    const ns = await this.client.get(this.namespacesType, undefined, cached.metadata!.name);
    if (!ns) return;
    const finalizers = (ns.spec?.finalizers ?? []).filter((f: string) => f !== vocabulary.namespaceFinalizer);
    try {
      await this.client.update(this.namespacesType, undefined, { ...ns, spec: { ...ns.spec, finalizers } }, 'finalize');
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }
}
