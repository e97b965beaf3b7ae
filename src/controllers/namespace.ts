// The namespace controller: a namespace being deleted (Terminating, holding
// our finalizer in spec.finalizers) has every object inside deleted, of every
// namespaced kind; progress is reported in status.conditions as upstream
// does; when nothing is left, the finalizer is removed through the finalize
// sub-resource and the namespace disappears.

import { vocabulary } from '../machinery/vocabulary.js';
import { rfc3339Now } from '../machinery/time.js';
import { ApiClient, ApiObject, isConflict, isNotFound, ResourceType } from '../client/types.js';
import { InformerFactory, InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import type { Controller } from './controller.js';

const namespacesType = (client: ApiClient): ResourceType =>
  client.resources().find((r) => r.group === '' && r.resource === 'namespaces')!;

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

/** How long to wait before looking again at a namespace whose content is still going. */
const recheckMs = 1_000;

export class NamespaceController implements Controller {
  readonly name = 'namespace';
  private readonly queue: WorkQueue;
  private informer?: InformerSubscription;

  constructor(
    private readonly client: ApiClient,
    private readonly log: (msg: string, extra?: object) => void = () => undefined,
    /** Shared with the other controllers; whoever made it stops it. */
    private readonly informers: InformerFactory,
  ) {
    this.queue = new WorkQueue((name) => this.sync(name), (name, e) => this.log('namespace sync failed', { namespace: name, err: String(e) }));
  }

  async start(): Promise<void> {
    const enqueue = (ns: ApiObject) => { if (ns.metadata?.deletionTimestamp) this.queue.add(ns.metadata.name); };
    this.informer = this.informers.subscribe(namespacesType(this.client), { onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
    await this.informer.start();
  }

  stop(): void {
    this.informer?.stop();
    this.queue.stop();
  }

  private async sync(name: string): Promise<void> {
    const nsType = namespacesType(this.client);
    const ns = await this.client.get(nsType, undefined, name);
    if (!ns?.metadata?.deletionTimestamp) return;
    if (!(ns.spec?.finalizers ?? []).includes(vocabulary.namespaceFinalizer)) return;
    const { remaining, finalizers, failures } = await this.deleteContent(name);
    await this.reportConditions(ns, remaining, finalizers, failures);
    if (remaining.size > 0 || failures.length > 0) {
      this.queue.addAfter(name, recheckMs);
      return;
    }
    await this.finalize(name);
  }

  /** Deletes every object in the namespace; tells what is still there and which finalizers hold it. */
  private async deleteContent(namespace: string) {
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const failures: string[] = [];
    for (const type of this.client.resources()) {
      if (!type.namespaced || !type.verbs.includes('list') || !type.verbs.includes('delete')) continue;
      try {
        const { items } = await this.client.list(type, namespace);
        for (const item of items) {
          if (!item.metadata?.deletionTimestamp) await this.client.delete(type, namespace, item.metadata!.name, { propagationPolicy: 'Background' });
        }
        const left = items.length ? (await this.client.list(type, namespace)).items : [];
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
      await this.client.update(namespacesType(this.client), undefined, { ...ns, status: { ...ns.status, conditions } }, 'status');
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(ns.metadata!.name); // look again at the fresh object
    }
  }

  /** Removes our finalizer; with nothing else holding it, the namespace is then gone. */
  private async finalize(name: string): Promise<void> {
    const nsType = namespacesType(this.client);
    const ns = await this.client.get(nsType, undefined, name);
    if (!ns) return;
    const finalizers = (ns.spec?.finalizers ?? []).filter((f: string) => f !== vocabulary.namespaceFinalizer);
    try {
      await this.client.update(nsType, undefined, { ...ns, spec: { ...ns.spec, finalizers } }, 'finalize');
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }
}
