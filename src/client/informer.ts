// An informer: lists a resource, then watches from the list's version,
// keeping a local copy and telling handlers what changed. When the watch
// ends (history expired, server restarted the stream) it lists again and
// reports the difference, so handlers never miss a change.

import type { ApiClient, ApiObject, ListOptions, ResourceType } from './types.js';

export interface InformerHandlers {
  onAdd?(obj: ApiObject): void;
  onUpdate?(old: ApiObject, obj: ApiObject): void;
  onDelete?(obj: ApiObject): void;
}

export function objectKey(obj: ApiObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : String(m.name);
}

const maxBackoffMs = 5_000;
const sliceSize = 256;

export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class Informer {
  private readonly store = new Map<string, ApiObject>();
  private watch?: { stop(): void };
  private stopped = false;
  private backoffMs = 100;
  private retryTimer?: NodeJS.Timeout;
  private syncedOnce?: Promise<void>;

  constructor(
    private readonly client: ApiClient,
    readonly type: ResourceType,
    private readonly handlers: InformerHandlers,
    private readonly namespace?: string,
    private readonly options: ListOptions = {},
  ) {}

  /** Resolves after the first list has been delivered to the handlers. */
  start(): Promise<void> {
    this.syncedOnce ??= this.relist();
    return this.syncedOnce;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.watch?.stop();
  }

  get(namespace: string | undefined, name: string): ApiObject | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): ApiObject[] {
    return [...this.store.values()];
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.watch?.stop();
    const { items, resourceVersion } = await this.client.list(this.type, this.namespace, this.options);
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
    this.watch = await this.client.watch(this.type, this.namespace, resourceVersion, {
      onEvents: (events) => {
        this.backoffMs = 100;
        for (const e of events) this.apply(e.type === 'DELETED' ? 'delete' : 'put', objectKey(e.object), e.object);
      },
      onEnd: () => this.scheduleRelist(),
    }, this.options);
  }

  private scheduleRelist(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.relist().catch(() => this.scheduleRelist());
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, maxBackoffMs);
  }

  private apply(op: 'put' | 'delete', key: string, obj: ApiObject): void {
    const old = this.store.get(key);
    if (op === 'delete') {
      if (!old) return;
      this.store.delete(key);
      this.handlers.onDelete?.(obj);
      return;
    }
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.store.set(key, obj);
    if (old) this.handlers.onUpdate?.(old, obj);
    else this.handlers.onAdd?.(obj);
  }
}

/** One controller's view of a shared informer: its own handlers, the shared cache. */
export interface InformerSubscription {
  /** Resolves once the shared informer listed and this subscriber saw every object. */
  start(): Promise<void>;
  /** Detaches this subscriber's handlers; the informer goes on for the others. */
  stop(): void;
  get(namespace: string | undefined, name: string): ApiObject | undefined;
  list(): ApiObject[];
}

/**
 * Shared informers: one list and one watch per resource type for every
 * controller of the server, as upstream's shared informer factory.
 */
export class InformerFactory {
  private readonly informers = new Map<string, { informer: Informer; fanOut: Set<InformerHandlers> }>();

  constructor(private readonly client: ApiClient) {}

  /** `metadataOnly` subscribers share an informer that holds only metadata (as upstream's metadata informers). */
  subscribe(type: ResourceType, handlers: InformerHandlers, options: { metadataOnly?: boolean } = {}): InformerSubscription {
    const id = `${type.group}/${type.version}/${type.resource}${options.metadataOnly ? ':metadata' : ''}`;
    let entry = this.informers.get(id);
    if (!entry) {
      const fanOut = new Set<InformerHandlers>();
      const informer = new Informer(this.client, type, {
        onAdd: (obj) => { for (const h of fanOut) h.onAdd?.(obj); },
        onUpdate: (old, obj) => { for (const h of fanOut) h.onUpdate?.(old, obj); },
        onDelete: (obj) => { for (const h of fanOut) h.onDelete?.(obj); },
      }, undefined, { metadataOnly: options.metadataOnly });
      entry = { informer, fanOut };
      this.informers.set(id, entry);
    }
    const { informer, fanOut } = entry;
    return {
      start: async () => {
        // A late subscriber first hears of what the informer holds already, then of every change.
        for (const obj of informer.list()) handlers.onAdd?.(obj);
        fanOut.add(handlers);
        await informer.start();
      },
      stop: () => { fanOut.delete(handlers); },
      get: (namespace, name) => informer.get(namespace, name),
      list: () => informer.list(),
    };
  }

  stopAll(): void {
    for (const { informer } of this.informers.values()) informer.stop();
  }
}
