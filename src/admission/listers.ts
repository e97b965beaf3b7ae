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
import type { ApiClient } from '../client/types.js';

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

export class AdmissionListers {
  private readonly wanted = new Map<string, Wanted>();
  private started = false;
  private client?: ApiClient;

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

  /** Subscribes every lister asked for and resolves once each has listed. */
  async start(informers: InformerFactory, client: ApiClient): Promise<void> {
    this.started = true;
    this.client = client;
    await Promise.all([...this.wanted.values()].map((wanted) => {
      const changed = () => { for (const listener of wanted.listeners) listener(); };
      wanted.subscription = informers.subscribe(resourceType(client, wanted.handle), { onAdd: changed, onUpdate: changed, onDelete: changed }, { indexers: wanted.indexers });
      return wanted.subscription.start();
    }));
  }

  /** The server's own client the listers read through, for plugins that write what they keep (quota's use); throws before start. */
  writer(): ApiClient {
    if (!this.client) throw new Error('admission listers not started');
    return this.client;
  }

  stop(): void {
    for (const wanted of this.wanted.values()) wanted.subscription?.stop();
  }
}
