// The in-process client: controllers reach the registry directly, through
// the same stores (admission, validation, watch cache) as HTTP clients, but
// without HTTP. Errors become ApiCallErrors with the Status code and reason.

import { isApiError } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import { systemGroups } from '../machinery/user.js';
import type { KubeObject } from '../api/kind.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceStore, WriteOptions } from '../registry/store.js';
import type { StoredObject } from '../registry/objects.js';
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
 * The object, or only its identity and metadata when that is all the caller
 * keeps, without metadata.managedFields: lists and watches feed the
 * controllers' informers, which keep every object of a resource and never
 * read them (upstream's controller manager drops them from its informers
 * too). An update sent without them keeps the stored ones.
 */
function shape(stored: StoredObject, options: ListOptions): ApiObject {
  const obj = options.metadataOnly ? stored.metadataObject() : stored.object;
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

  resources(): ResourceType[] {
    return this.registry.kinds.map((k) => ({
      group: k.group, version: k.version, resource: k.plural, kind: k.kind, namespaced: k.scope === 'Namespaced', verbs: k.verbs,
    }));
  }

  private store(type: ResourceType): ResourceStore {
    const s = this.registry.store(type.group, type.version, type.resource);
    if (!s) throw new ApiCallError(404, 'NotFound', `the server could not find the requested resource ${type.resource}`);
    return s;
  }

  private opts(): WriteOptions {
    return { dryRun: false, fieldValidation: 'Ignore', warnings: [], user: this.user, manager: this.manager };
  }

  async get(type: ResourceType, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
    const store = this.store(type);
    try {
      return await call(() => store.get(namespace, name));
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return undefined;
      throw e;
    }
  }

  async list(type: ResourceType, namespace?: string, options: ListOptions = {}): Promise<ListResult> {
    const store = this.store(type);
    const list = await call(() => store.listStored(namespace, options));
    // The items are the cache's shared, frozen objects: handed out as they are, never re-parsed.
    // A long list is delivered in slices so that it does not hold the server up.
    const items: ApiObject[] = [];
    for (const item of list.items) {
      items.push(shape(item, options));
      if (items.length % 256 === 0) await yieldToEventLoop();
    }
    return { items, resourceVersion: String(list.metadata.resourceVersion ?? '') };
  }

  create(type: ResourceType, namespace: string | undefined, object: ApiObject): Promise<ApiObject> {
    const store = this.store(type);
    return call(() => store.create(namespace, object, this.opts()));
  }

  async update(type: ResourceType, namespace: string | undefined, object: ApiObject, subresource?: string): Promise<ApiObject> {
    const store = this.store(type);
    return (await call(() => store.update(namespace, object.metadata?.name, object, this.opts(), { subresource }))).object;
  }

  async patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown): Promise<ApiObject> {
    const store = this.store(type);
    return (await call(() => store.patch(namespace, name, patchType, patch, this.opts()))).object;
  }

  async delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<boolean> {
    const store = this.store(type);
    try {
      await call(() => store.delete(namespace, name, options, this.opts()));
      return true;
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return false;
      throw e;
    }
  }

  async watch(type: ResourceType, namespace: string | undefined, resourceVersion: string, handlers: WatchHandlers, options: ListOptions = {}): Promise<{ stop(): void }> {
    const store = this.store(type);
    const watch = await call(() => store.watch(namespace, { ...options, resourceVersion }, {
      onEvents: (events) => handlers.onEvents(events.map((e) => ({ type: e.type, object: shape(e.object, options) }))),
      onEnd: (err) => handlers.onEnd({ expired: err.code === 410, message: err.message }),
    }));
    return { stop: () => watch.stop() };
  }
}
