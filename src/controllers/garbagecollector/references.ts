// Owner references: reading them off objects, telling which resource type a
// reference names, whether a known object is the one a reference means, and
// a bounded memory of owners already found absent.

import { apiVersionOfType, ApiObject, ResourceType } from '../../client/types.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Where an object lives and which one it is. */
export interface ObjectIdentity {
  type: ResourceType;
  /** Undefined for cluster-scoped objects. */
  namespace?: string;
  name: string;
  uid: string;
}

export const orphanFinalizer = 'orphan';
export const foregroundFinalizer = 'foregroundDeletion';

// One shared empty list for the many objects without owners or finalizers:
// the graph keeps both for every object in the cluster.
export const noOwners: readonly OwnerReference[] = Object.freeze([]);
export const noFinalizers: readonly string[] = Object.freeze([]);

export function ownerReferencesOf(obj: ApiObject): readonly OwnerReference[] {
  const refs = obj.metadata?.ownerReferences;
  return Array.isArray(refs) && refs.length > 0 ? refs.filter((r) => r && typeof r.uid === 'string') : noOwners;
}

export function finalizersOf(obj: ApiObject): readonly string[] {
  const f = obj.metadata?.finalizers;
  return Array.isArray(f) && f.length > 0 ? f : noFinalizers;
}

export function identityOf(type: ResourceType, obj: ApiObject): ObjectIdentity {
  const m = obj.metadata ?? {};
  return { type, namespace: type.namespaced ? m.namespace : undefined, name: m.name, uid: m.uid };
}

export function describe(id: ObjectIdentity): string {
  const kind = id.type.group ? `${id.type.kind}.${id.type.group}` : id.type.kind;
  return `${kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name} (${id.uid})`;
}

export function isBlocking(ref: OwnerReference): boolean {
  return ref.blockOwnerDeletion === true;
}

function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The resource type an owner reference names: the exact apiVersion first,
 * else the same group and kind in another served version (an object is the
 * same object whichever version it is read in).
 */
export function resolveOwnerType(types: readonly ResourceType[], ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): ResourceType | undefined {
  const exact = types.find((t) => t.kind === ref.kind && apiVersionOfType(t) === ref.apiVersion);
  if (exact) return exact;
  const group = groupOfApiVersion(ref.apiVersion);
  return types.find((t) => t.kind === ref.kind && t.group === group);
}

/**
 * Whether `owner` is the object `ref` (written on a dependent in
 * `dependentNamespace`) points at: same group, kind and name, and the place
 * the reference implies (a namespaced owner sits in the dependent's
 * namespace; a cluster-scoped owner has none). The uid is compared by the caller.
 */
export function referenceMatches(ref: OwnerReference, dependentNamespace: string | undefined, owner: ObjectIdentity): boolean {
  if (owner.type.kind !== ref.kind || owner.type.group !== groupOfApiVersion(ref.apiVersion) || owner.name !== ref.name) return false;
  if (!owner.type.namespaced) return true;
  return dependentNamespace !== undefined && owner.namespace === dependentNamespace;
}

/**
 * Owners known to be absent. A uid never comes back once its object is
 * gone, so "uid X is not at these coordinates" stays true; the cache only
 * saves lookups and forgets its oldest entries past `capacity`.
 */
export class AbsentOwnerCache {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 1000) {}

  static key(uid: string, type?: ResourceType, namespace?: string, name?: string): string {
    return type ? `${uid}|${type.group}|${type.kind}|${namespace ?? ''}|${name}` : uid;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
  }
}
