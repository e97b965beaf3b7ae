// Informers: list a resource, then watch from the list's version, keeping a
// local copy and telling handlers what changed. When the watch ends (history
// expired, server restarted the stream) the informer lists again and reports
// the difference, so handlers never miss a change.
//
// One InformerFactory per process shares them: every controller and every
// in-process index (RBAC, webhook configurations) that asks for the same
// resource with the same namespace and selectors gets the same informer, so
// a kind is listed and watched once however many readers it has. An informer
// lives while someone subscribes to it.

import { type Clock, type TimerHandle, realClock } from './clock.js';
import type { ApiClient, ApiObject, ResourceType } from './types.js';

export interface InformerHandlers {
  onAdd?(obj: ApiObject): void;
  /** Also called with the same object twice at each resync. */
  onUpdate?(old: ApiObject, obj: ApiObject): void;
  onDelete?(obj: ApiObject): void;
}

/** An index function: the values `obj` is filed under. */
export type IndexFunc = (obj: ApiObject) => readonly string[];

export function objectKey(obj: ApiObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : String(m.name);
}

/** Every informer has this index: objects by namespace. */
export const namespaceIndex = 'namespace';
const byNamespace: IndexFunc = (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []);

const maxBackoffMs = 5_000;
const sliceSize = 256;

export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What selects an informer's objects beyond its resource type. */
export interface InformerScope {
  /** Only this namespace's objects. */
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Only apiVersion, kind and metadata of each object (as upstream's metadata informers): much less to hold. */
  metadataOnly?: boolean;
}

export class Informer {
  private readonly store = new Map<string, ApiObject>();
  private readonly indexers = new Map<string, IndexFunc>([[namespaceIndex, byNamespace]]);
  /** index name → value → keys of the objects filed under it. */
  private readonly indices = new Map<string, Map<string, Set<string>>>([[namespaceIndex, new Map()]]);
  private watch?: { stop(): void };
  private stopped = false;
  private synced = false;
  private backoffMs = 100;
  private retryTimer?: TimerHandle;
  private syncedOnce?: Promise<void>;

  constructor(
    private readonly client: ApiClient,
    readonly type: ResourceType,
    private readonly handlers: InformerHandlers,
    private readonly scope: InformerScope = {},
    private readonly clock: Clock = realClock,
  ) {}

  /** Resolves after the first list has been delivered to the handlers. */
  start(): Promise<void> {
    this.syncedOnce ??= this.relist();
    return this.syncedOnce;
  }

  /** Whether the first list has been delivered. */
  hasSynced(): boolean {
    return this.synced;
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    this.watch?.stop();
  }

  get(namespace: string | undefined, name: string): ApiObject | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): ApiObject[] {
    return [...this.store.values()];
  }

  /** Adds indexes; those already known keep their function. */
  addIndexers(indexers: Record<string, IndexFunc>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexers.has(name)) continue;
      this.indexers.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.store) file(index, fn(obj), key);
    }
  }

  /** The objects `index` files under `value`. */
  byIndex(index: string, value: string): ApiObject[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`informer of ${this.type.resource} has no index ${JSON.stringify(index)}`);
    const out: ApiObject[] = [];
    for (const key of idx.get(value) ?? []) {
      const obj = this.store.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.watch?.stop();
    const { namespace, ...options } = this.scope;
    const { items, resourceVersion } = await this.client.list(this.type, namespace, options);
    if (this.stopped) return;
    const seen = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      const key = objectKey(items[i]);
      seen.add(key);
      this.apply('put', key, items[i]);
      // Long lists are delivered in slices, so the server keeps answering requests meanwhile.
      if (i % sliceSize === sliceSize - 1) await yieldToEventLoop();
    }
    for (const [key, obj] of [...this.store]) {
      if (!seen.has(key)) this.apply('delete', key, obj);
    }
    this.synced = true;
    this.watch = await this.client.watch(this.type, namespace, resourceVersion, {
      onEvents: (events) => {
        this.backoffMs = 100;
        for (const e of events) this.apply(e.type === 'DELETED' ? 'delete' : 'put', objectKey(e.object), e.object);
      },
      onEnd: () => this.scheduleRelist(),
    }, options);
  }

  private scheduleRelist(): void {
    if (this.stopped) return;
    this.retryTimer = this.clock.setTimeout(() => {
      this.relist().catch(() => this.scheduleRelist());
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, maxBackoffMs);
  }

  private apply(op: 'put' | 'delete', key: string, obj: ApiObject): void {
    const old = this.store.get(key);
    if (op === 'delete') {
      if (!old) return;
      this.store.delete(key);
      this.reindex(key, old, undefined);
      this.handlers.onDelete?.(obj);
      return;
    }
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.store.set(key, obj);
    this.reindex(key, old, obj);
    if (old) this.handlers.onUpdate?.(old, obj);
    else this.handlers.onAdd?.(obj);
  }

  private reindex(key: string, old: ApiObject | undefined, obj: ApiObject | undefined): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      if (old) unfile(index, fn(old), key);
      if (obj) file(index, fn(obj), key);
    }
  }
}

function file(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const v of values) {
    let keys = index.get(v);
    if (!keys) index.set(v, (keys = new Set()));
    keys.add(key);
  }
}

function unfile(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const v of values) {
    const keys = index.get(v);
    if (!keys) continue;
    keys.delete(key);
    if (keys.size === 0) index.delete(v);
  }
}

export interface SubscribeOptions extends InformerScope {
  /** Indexes this subscriber reads with byIndex (shared: the first function given a name wins). */
  indexers?: Record<string, IndexFunc>;
  /** Every this many ms, onUpdate(obj, obj) for every object held, so that a controller looks again at what no event brings back. */
  resyncMs?: number;
}

/** One reader's view of a shared informer: its own handlers, the shared cache. */
export interface InformerSubscription {
  readonly type: ResourceType;
  /** Resolves once the shared informer listed and this subscriber saw every object. */
  start(): Promise<void>;
  /** Detaches this subscriber's handlers; the informer goes on while others subscribe. */
  stop(): void;
  hasSynced(): boolean;
  get(namespace: string | undefined, name: string): ApiObject | undefined;
  list(): ApiObject[];
  byIndex(index: string, value: string): ApiObject[];
}

interface Shared {
  informer: Informer;
  fanOut: Set<InformerHandlers>;
  /** Subscriptions not stopped yet, started or not. */
  refs: number;
}

/**
 * Shared informers: one list and one watch per resource type, namespace and
 * selectors for every reader of the process, as upstream's shared informer
 * factory.
 */
export class InformerFactory {
  private readonly informers = new Map<string, Shared>();

  constructor(private readonly client: ApiClient, private readonly clock: Clock = realClock) {}

  /** Informers running now (for tests and diagnostics). */
  get size(): number {
    return this.informers.size;
  }

  subscribe(type: ResourceType, handlers: InformerHandlers, options: SubscribeOptions = {}): InformerSubscription {
    const { indexers, resyncMs, ...scope } = options;
    const id = JSON.stringify([type.group, type.version, type.resource, scope.namespace ?? '', scope.fieldSelector ?? '', scope.labelSelector ?? '', !!scope.metadataOnly]);
    const shared = (): Shared => {
      let entry = this.informers.get(id);
      if (!entry) {
        const fanOut = new Set<InformerHandlers>();
        const informer = new Informer(this.client, type, {
          onAdd: (obj) => { for (const h of fanOut) h.onAdd?.(obj); },
          onUpdate: (old, obj) => { for (const h of fanOut) h.onUpdate?.(old, obj); },
          onDelete: (obj) => { for (const h of fanOut) h.onDelete?.(obj); },
        }, scope, this.clock);
        entry = { informer, fanOut, refs: 0 };
        this.informers.set(id, entry);
      }
      entry.refs++;
      return entry;
    };
    // The informer is made (and its indexes) at once, so a subscription can be read before it starts.
    let entry: Shared | undefined = shared();
    if (indexers) entry.informer.addIndexers(indexers);
    let resyncTimer: TimerHandle | undefined;
    let stopped = false;
    const resync = () => {
      resyncTimer = this.clock.setTimeout(() => {
        if (stopped || !entry) return;
        for (const obj of entry.informer.list()) handlers.onUpdate?.(obj, obj);
        resync();
      }, resyncMs!);
    };
    // Started once: a second start answers the first's promise (it would replay every object and add a resync timer).
    let started: Promise<void> | undefined;
    const begin = async () => {
      entry ??= shared();
      // A late subscriber first hears of what the informer holds already, then of every change.
      for (const obj of entry.informer.list()) handlers.onAdd?.(obj);
      entry.fanOut.add(handlers);
      if (resyncMs && resyncMs > 0) resync();
      await entry.informer.start();
    };
    return {
      type,
      start: () => {
        if (stopped) return Promise.resolve();
        return started ??= begin();
      },
      stop: () => {
        stopped = true;
        if (resyncTimer) this.clock.clearTimeout(resyncTimer);
        if (!entry) return;
        entry.fanOut.delete(handlers);
        // The last reader gone, so is the informer (a controller that stops when its server loses the lease).
        if (--entry.refs === 0 && this.informers.get(id) === entry) {
          entry.informer.stop();
          this.informers.delete(id);
        }
        entry = undefined;
      },
      hasSynced: () => entry?.informer.hasSynced() ?? false,
      get: (namespace, name) => entry?.informer.get(namespace, name),
      list: () => entry?.informer.list() ?? [],
      byIndex: (index, value) => entry?.informer.byIndex(index, value) ?? [],
    };
  }

  stopAll(): void {
    for (const { informer } of this.informers.values()) informer.stop();
    this.informers.clear();
  }
}
