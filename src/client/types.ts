// The client interface controllers program against. The server provides an
// in-process implementation over its registry; a remote one over HTTPS can
// implement the same shape.

/** An object as JSON. */
export type ApiObject = Record<string, any> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, any>;
};

/** A served resource, as discovery describes it. */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Only apiVersion, kind and metadata of each object (as PartialObjectMetadata): much less to hold. */
  metadataOnly?: boolean;
}

export interface ListResult {
  items: ApiObject[];
  resourceVersion: string;
}

export interface DeleteOptions {
  /** 0 removes a pod at once (graceful deletion: registry/graceful.ts). */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type PatchType = 'json' | 'merge' | 'strategic';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchHandlers {
  onEvents(events: { type: EventType; object: ApiObject }[]): void;
  /** The watch ended; `expired` when its resourceVersion fell out of history (relist). */
  onEnd(reason: { expired: boolean; message: string }): void;
}

/**
 * Objects that `list` and `watch` deliver may be shared with other readers
 * and frozen: read them, and build a new object to write (spread, clone).
 */
export interface ApiClient {
  /** Every served resource type. */
  resources(): ResourceType[];
  /** Calls `listener` when the served resource types change (custom resources come and go); returns the function that stops it. */
  onResourcesChanged?(listener: () => void): () => void;
  get(type: ResourceType, namespace: string | undefined, name: string): Promise<ApiObject | undefined>;
  list(type: ResourceType, namespace?: string, options?: ListOptions): Promise<ListResult>;
  create(type: ResourceType, namespace: string | undefined, object: ApiObject): Promise<ApiObject>;
  update(type: ResourceType, namespace: string | undefined, object: ApiObject, subresource?: string): Promise<ApiObject>;
  patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown): Promise<ApiObject>;
  /** Resolves to false when the object was already gone. */
  delete(type: ResourceType, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<boolean>;
  /** Changes after `resourceVersion`. */
  watch(type: ResourceType, namespace: string | undefined, resourceVersion: string, handlers: WatchHandlers, options?: ListOptions): Promise<{ stop(): void }>;
}

/** A client-side error carrying the server's Status code and reason. */
export class ApiCallError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof ApiCallError && e.code === 404;
}

export function isConflict(e: unknown): boolean {
  return e instanceof ApiCallError && e.code === 409;
}

/** `apiVersion` of a resource type: `v1` or `group/version`. */
export function apiVersionOfType(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}
