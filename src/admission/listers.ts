// What admission plugins read per request (the LimitRanges of a namespace,
// the default StorageClass, a PriorityClass, the webhook configurations),
// read as upstream's plugins read it: from informer-fed caches in memory,
// never from storage per request.
//
// The chain is built before the registry it guards exists, so a plugin asks
// for its listers when it is made, and the server starts them all, once the
// registry and the shared informers are up, before it serves its first
// request. A lister read before that is empty.

import type { KubeObject } from '../api/kind.js';
import type { InformerFactory, InformerSubscription, IndexFunc } from '../client/informer.js';
import { namespaceIndex } from '../client/informer.js';
import { resourceType, type ResourceHandle } from '../client/resources.js';
import type { ApiClient, ResourceType } from '../client/types.js';
import { discoveredUpstreamGroup, productGroupForUpstream } from '../machinery/vocabulary.js';

/** The objects of one resource as the shared informer holds them (read them, never change them). */
export interface Lister {
  list(): readonly KubeObject[];
  /** The objects of one namespace. */
  inNamespace(namespace: string): readonly KubeObject[];
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  /** The objects an index given when the lister was asked for files under `value`. */
  byIndex(index: string, value: string): readonly KubeObject[];
  /** Calls `listener` after every change (plugins that keep something compiled drop it). */
  onChange(listener: () => void): void;
  hasSynced(): boolean;
}

interface Wanted {
  handle: ResourceHandle;
  indexers: Record<string, IndexFunc>;
  listeners: Set<() => void>;
  subscription?: InformerSubscription;
}

/** A lister found by kind once the server runs (a policy's parameters); `synced` resolves once it has listed. */
export interface KindLister {
  lister: Lister;
  /** The resource listed: for a live read of an object the lister misses. */
  type: ResourceType;
  namespaced: boolean;
  synced: Promise<void>;
}

export class AdmissionListers {
  private readonly wanted = new Map<string, Wanted>();
  private started = false;
  private shared?: { informers: InformerFactory; client: ApiClient };
  private readonly byKind = new Map<string, { type: ResourceType; found: KindLister; subscription: InformerSubscription }>();

  /** The lister of `handle`'s resource; asked for before `start`, it fills when the server starts the listers. */
  lister(handle: ResourceHandle, indexers: Record<string, IndexFunc> = {}): Lister {
    if (this.started) throw new Error(`admission lister of ${handle.resource} asked for after the listers started`);
    const id = `${handle.group}/${handle.resource}`;
    let wanted = this.wanted.get(id);
    if (!wanted) this.wanted.set(id, wanted = { handle, indexers: {}, listeners: new Set() });
    Object.assign(wanted.indexers, indexers);
    const entry = wanted;
    const objects = (list: unknown[] | undefined) => (list ?? []) as KubeObject[];
    return {
      list: () => objects(entry.subscription?.list()),
      inNamespace: (namespace) => objects(entry.subscription?.byIndex(namespaceIndex, namespace)),
      get: (namespace, name) => entry.subscription?.get(namespace, name) as KubeObject | undefined,
      byIndex: (index, value) => objects(entry.subscription?.byIndex(index, value)),
      onChange: (listener) => entry.listeners.add(listener),
      hasSynced: () => entry.subscription?.hasSynced() ?? false,
    };
  }

  /**
   * The lister of the resource of `kind` at `apiVersion`, whatever the server
   * serves then (custom resources included), from the shared informers; one
   * subscription per resource, kept until the listers stop. Undefined before
   * the listers start or when no such kind is served.
   */
  ofKind(apiVersion: string, kind: string): KindLister | undefined {
    if (!this.shared) return undefined;
    const slash = apiVersion.indexOf('/');
    const named = slash < 0 ? '' : apiVersion.slice(0, slash);
    // Our groups answer to their upstream names too (`rbac.authorization.k8s.io/v1`).
    const ours = productGroupForUpstream(named);
    const group = ours !== undefined && discoveredUpstreamGroup(ours) !== undefined ? ours : named;
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const type = this.shared.client.resources().find((r) => r.group === group && r.version === version && r.kind === kind && !r.resource.includes('/'));
    const id = `${group}/${version}/${kind}`;
    const known = this.byKind.get(id);
    if (known && type && known.type.resource === type.resource) return known.found;
    known?.subscription.stop();
    this.byKind.delete(id);
    if (!type) return undefined;
    const subscription = this.shared.informers.subscribe(type, {});
    const objects = (list: unknown[]) => list as KubeObject[];
    const found: KindLister = {
      type,
      namespaced: type.namespaced,
      synced: subscription.start(),
      lister: {
        list: () => objects(subscription.list()),
        inNamespace: (namespace) => objects(subscription.byIndex(namespaceIndex, namespace)),
        get: (namespace, name) => subscription.get(namespace, name) as KubeObject | undefined,
        byIndex: (index, value) => objects(subscription.byIndex(index, value)),
        onChange: () => undefined,
        hasSynced: () => subscription.hasSynced(),
      },
    };
    // A failed first list shows as a lister that never syncs; the caller's wait decides.
    found.synced.catch(() => undefined);
    this.byKind.set(id, { type, found, subscription });
    return found;
  }

  /** Subscribes every lister asked for and resolves once each has listed. */
  async start(informers: InformerFactory, client: ApiClient): Promise<void> {
    this.started = true;
    this.shared = { informers, client };
    await Promise.all([...this.wanted.values()].map((wanted) => {
      const changed = () => { for (const listener of wanted.listeners) listener(); };
      wanted.subscription = informers.subscribe(resourceType(client, wanted.handle), { onAdd: changed, onUpdate: changed, onDelete: changed }, { indexers: wanted.indexers });
      return wanted.subscription.start();
    }));
  }

  /** The server's own client the listers read through, for plugins that write what they keep (quota's use); throws before start. */
  writer(): ApiClient {
    if (!this.shared) throw new Error('admission listers not started');
    return this.shared.client;
  }

  stop(): void {
    for (const wanted of this.wanted.values()) wanted.subscription?.stop();
    for (const { subscription } of this.byKind.values()) subscription.stop();
    this.byKind.clear();
  }
}
