// The in-process client: controllers reach the registry directly, through
// the same stores (admission, validation, watch cache) as HTTP clients, but
// without HTTP. A resource type naming a served version other than the
// stored one goes through that version's codec, as a request at it would.
// Errors become ApiCallErrors with the Status code and reason.

import { isApiError } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import { systemGroups } from '../machinery/user.js';
import { codecFor, type VersionCodec } from '../api/codec.js';
import type { Registry } from '../registry/registry.js';
import type { RequestScope, ResourceStore, WriteOptions } from '../registry/store.js';
import type { StoredObject } from '../registry/objects.js';
import type { ObjectEvent } from '../registry/watch.js';
import { yieldToEventLoop } from '../client/informer.js';
import { ApiCallError, ApiClient, ApiObject, DeleteOptions, ListOptions, ListResult, PatchType, ResourceType, WatchHandlers } from '../client/types.js';

async function call<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (isApiError(e)) throw new ApiCallError(e.code, e.reason, e.message);
    throw e;
  }
}

/**
 * The object (at the codec's version), or only its identity and metadata
 * when that is all the caller keeps, without metadata.managedFields: lists
 * and watches feed the controllers' informers, which keep every object of a
 * resource and never read them (upstream's controller manager drops them
 * from its informers too). An update sent without them keeps the stored ones.
 */
function shape(stored: StoredObject, options: ListOptions, codec?: VersionCodec): ApiObject {
  if (!codec && !options.metadataOnly) return stored.objectWithoutManagedFields();
  let obj = options.metadataOnly ? stored.metadataObject(true) : stored.object;
  if (codec) obj = options.metadataOnly ? { ...obj, apiVersion: codec.apiVersion } : codec.fromStored(obj);
  const meta = obj.metadata;
  if (meta?.managedFields === undefined) return obj;
  const { managedFields: _unread, ...kept } = meta;
  return { ...obj, metadata: kept };
}

export class InProcessClient implements ApiClient {
  private readonly user: UserInfo;

  constructor(private readonly registry: Registry, private readonly manager: string) {
    this.user = { username: `system:${manager}`, groups: [systemGroups.masters, systemGroups.authenticated] };
  }

  /** The same client under another field manager and user (the aggregator's, the controller manager's writes). */
  as(manager: string): InProcessClient {
    return new InProcessClient(this.registry, manager);
  }

  onResourcesChanged(listener: () => void): () => void {
    return this.registry.onChange(listener);
  }

  resources(): ResourceType[] {
    return this.registry.kinds.map((k) => ({
      group: k.group, version: k.version, resource: k.plural, kind: k.kind, namespaced: k.scope === 'Namespaced', verbs: k.verbs,
    }));
  }

  /** The store of a resource type, and the codec when the type names a served version other than the stored one. */
  private target(type: ResourceType): { store: ResourceStore; codec?: VersionCodec } {
    const stored = this.registry.store(type.group, type.version, type.resource);
    if (stored) return { store: stored };
    for (const kind of this.registry.kinds) {
      if (kind.plural !== type.resource) continue;
      const codec = codecFor(kind, type.group, type.version);
      if (codec) return { store: this.registry.store(kind.group, kind.version, kind.plural)!, codec };
    }
    throw new ApiCallError(404, 'NotFound', `the server could not find the requested resource ${type.resource}`);
  }

  private store(type: ResourceType): ResourceStore {
    return this.target(type).store;
  }

  /** The in-process client's writes: never dry, its objects taken as they are, under its manager. */
  private get opts(): WriteOptions {
    return { dryRun: false, fieldValidation: 'Ignore', manager: this.manager };
  }

  private scope(): RequestScope {
    return { user: this.user, warnings: [] };
  }

  async get(type: ResourceType, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
    const { store, codec } = this.target(type);
    try {
      const obj = await call(() => store.get(namespace, name));
      return codec ? await call(() => codec.fromStoredOne(obj)) : obj;
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return undefined;
      throw e;
    }
  }

  async list(type: ResourceType, namespace?: string, options: ListOptions = {}): Promise<ListResult> {
    const { store, codec } = this.target(type);
    const list = await call(() => store.listStored(namespace, { ...options, version: codec }));
    // A version converted later (a conversion webhook): one review for the list.
    if (codec?.convertsLater && !options.metadataOnly) await call(() => codec.aheadFromStored(list.items.map((i) => i.object)));
    // The items are the cache's shared, frozen objects: handed out as they are, never re-parsed.
    // A long list is delivered in slices so that it does not hold the server up.
    const items: ApiObject[] = [];
    for (const item of list.items) {
      items.push(shape(item, options, codec));
      if (items.length % 256 === 0) await yieldToEventLoop();
    }
    return { items, resourceVersion: String(list.metadata.resourceVersion ?? '') };
  }

  async create(type: ResourceType, namespace: string | undefined, object: ApiObject): Promise<ApiObject> {
    const { store, codec } = this.target(type);
    const created = await call(() => store.create(namespace, { value: object }, this.opts, this.scope(), { codec }));
    return codec ? await call(() => codec.fromStoredOne(created)) : created;
  }

  async update(type: ResourceType, namespace: string | undefined, object: ApiObject, subresource?: string): Promise<ApiObject> {
    const { store, codec } = this.target(type);
    const { object: updated } = await call(() => store.update(namespace, object.metadata?.name, { value: object }, this.opts, this.scope(), { subresource, codec }));
    return codec ? await call(() => codec.fromStoredOne(updated)) : updated;
  }

  async patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown): Promise<ApiObject> {
    const { store, codec } = this.target(type);
    const { object: patched } = await call(() => store.patch(namespace, name, { type: patchType, value: patch }, this.opts, this.scope(), { codec }));
    return codec ? await call(() => codec.fromStoredOne(patched)) : patched;
  }

  async delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<boolean> {
    const store = this.store(type);
    try {
      await call(() => store.delete(namespace, name, options, this.scope()));
      return true;
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return false;
      throw e;
    }
  }

  async watch(type: ResourceType, namespace: string | undefined, resourceVersion: string, handlers: WatchHandlers, options: ListOptions = {}): Promise<{ stop(): void }> {
    const { store, codec } = this.target(type);
    const deliver = (events: ObjectEvent[]) => handlers.onEvents(events.map((e) => ({ type: e.type, object: shape(e.object, options, codec) })));
    // A version converted later (a conversion webhook): each batch converted in one review, batches kept in order.
    let inOrder: Promise<void> | undefined = codec?.convertsLater && !options.metadataOnly ? Promise.resolve() : undefined;
    let ended = false;
    let watch: { stop(): void } | undefined;
    const end = (expired: boolean, message: string) => {
      if (ended) return;
      ended = true;
      handlers.onEnd({ expired, message });
    };
    watch = await call(() => store.watch(namespace, { ...options, resourceVersion, version: codec }, {
      onEvents: (events) => {
        if (!inOrder) return deliver(events);
        inOrder = inOrder.then(async () => {
          if (ended) return;
          try {
            await codec!.aheadFromStored(events.map((e) => e.object.object));
          } catch (e) {
            watch?.stop();
            return end(false, (e as Error).message);
          }
          deliver(events);
        });
      },
      onEnd: (err) => end(err.code === 410, err.message),
    }));
    return { stop: () => { ended = true; watch?.stop(); } };
  }
}
