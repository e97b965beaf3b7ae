// RBAC's objects in memory, indexed the way requests ask: roles by namespace
// and name, bindings by subject (user name or group) and, for RoleBindings,
// by namespace. Fed by informers (put/remove as objects change); a request
// looks up only the bindings of its own user and groups, never scans them all.

import { serviceAccountUsername } from '../../machinery/serviceaccount.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { UserInfo } from '../../machinery/user.js';
import { compileRules, type CompiledRule } from './rules.js';

type Obj = { metadata?: Record<string, any>; [field: string]: any };

export interface SubjectRef {
  kind: string;
  name: string;
  namespace?: string;
}

export interface IndexedBinding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  /** '' for ClusterRoleBindings. */
  namespace: string;
  name: string;
  roleRef: { kind: string; name: string };
  subjects: SubjectRef[];
  /** The index keys of its subjects. */
  keys: string[];
}

/** A binding that applies to a user, and the subject through which it does. */
export interface Applicable {
  binding: IndexedBinding;
  subject: SubjectRef;
}

const userKey = (name: string) => `u:${name}`;
const groupKey = (name: string) => `g:${name}`;

/** The key a subject is found by: service accounts by the user name they authenticate as. */
function subjectKey(s: SubjectRef, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User': return userKey(s.name);
    case 'Group': return groupKey(s.name);
    case 'ServiceAccount': return userKey(serviceAccountUsername(s.namespace || bindingNamespace, s.name));
    default: return undefined;
  }
}

function subjectOf(raw: unknown): SubjectRef | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const s = raw as Record<string, unknown>;
  if (typeof s.kind !== 'string' || typeof s.name !== 'string') return undefined;
  return { kind: s.kind, name: s.name, ...(typeof s.namespace === 'string' && s.namespace ? { namespace: s.namespace } : {}) };
}

/** Bindings by subject key, each set kept in insertion order. */
class BySubject {
  private readonly map = new Map<string, Set<IndexedBinding>>();
  add(b: IndexedBinding): void {
    for (const k of b.keys) {
      let set = this.map.get(k);
      if (!set) this.map.set(k, (set = new Set()));
      set.add(b);
    }
  }
  delete(b: IndexedBinding): void {
    for (const k of b.keys) {
      const set = this.map.get(k);
      if (!set) continue;
      set.delete(b);
      if (set.size === 0) this.map.delete(k);
    }
  }
  get(key: string): ReadonlySet<IndexedBinding> | undefined {
    return this.map.get(key);
  }
  get empty(): boolean {
    return this.map.size === 0;
  }
}

export type RoleLookup = { rules: CompiledRule[] } | { error: string };

export class RbacIndex {
  private readonly clusterRoles = new Map<string, CompiledRule[]>();
  /** namespace -> name -> rules */
  private readonly roles = new Map<string, Map<string, CompiledRule[]>>();
  /** ClusterRoleBindings by name, RoleBindings by namespace/name. */
  private readonly bindings = new Map<string, IndexedBinding>();
  private readonly clusterBySubject = new BySubject();
  private readonly namespacedBySubject = new Map<string, BySubject>();

  putClusterRole(obj: Obj): void {
    this.clusterRoles.set(String(obj.metadata?.name), compileRules(obj.rules));
  }

  removeClusterRole(obj: Obj): void {
    this.clusterRoles.delete(String(obj.metadata?.name));
  }

  putRole(obj: Obj): void {
    const ns = String(obj.metadata?.namespace ?? '');
    let byName = this.roles.get(ns);
    if (!byName) this.roles.set(ns, (byName = new Map()));
    byName.set(String(obj.metadata?.name), compileRules(obj.rules));
  }

  removeRole(obj: Obj): void {
    const ns = String(obj.metadata?.namespace ?? '');
    const byName = this.roles.get(ns);
    byName?.delete(String(obj.metadata?.name));
    if (byName?.size === 0) this.roles.delete(ns);
  }

  /** Adds or replaces a RoleBinding or ClusterRoleBinding. */
  putBinding(kind: IndexedBinding['kind'], obj: Obj): void {
    this.removeBinding(kind, obj);
    const namespace = kind === 'RoleBinding' ? String(obj.metadata?.namespace ?? '') : '';
    const subjects = (Array.isArray(obj.subjects) ? obj.subjects : []).map(subjectOf).filter((s): s is SubjectRef => s !== undefined);
    const keys = [...new Set(subjects.map((s) => subjectKey(s, namespace)).filter((k): k is string => k !== undefined))];
    const binding: IndexedBinding = {
      kind, namespace, name: String(obj.metadata?.name),
      roleRef: { kind: String(obj.roleRef?.kind ?? ''), name: String(obj.roleRef?.name ?? '') },
      subjects, keys,
    };
    this.bindings.set(this.bindingId(binding.kind, namespace, binding.name), binding);
    this.subjectIndex(binding.kind, namespace, true)!.add(binding);
  }

  removeBinding(kind: IndexedBinding['kind'], obj: Obj): void {
    const namespace = kind === 'RoleBinding' ? String(obj.metadata?.namespace ?? '') : '';
    const id = this.bindingId(kind, namespace, String(obj.metadata?.name));
    const old = this.bindings.get(id);
    if (!old) return;
    this.bindings.delete(id);
    const index = this.subjectIndex(kind, namespace, false);
    index?.delete(old);
    if (kind === 'RoleBinding' && index?.empty) this.namespacedBySubject.delete(namespace);
  }

  private bindingId(kind: IndexedBinding['kind'], namespace: string, name: string): string {
    return kind === 'ClusterRoleBinding' ? `c/${name}` : `n/${namespace}/${name}`;
  }

  private subjectIndex(kind: IndexedBinding['kind'], namespace: string, create: boolean): BySubject | undefined {
    if (kind === 'ClusterRoleBinding') return this.clusterBySubject;
    let index = this.namespacedBySubject.get(namespace);
    if (!index && create) this.namespacedBySubject.set(namespace, (index = new BySubject()));
    return index;
  }

  /**
   * The bindings that apply to `user`: ClusterRoleBindings, then the
   * RoleBindings of `namespace`; each once, with the subject that matched.
   */
  *applicable(user: UserInfo, namespace: string | undefined): Generator<Applicable> {
    const keys = [userKey(user.username), ...user.groups.map(groupKey)];
    const seen = new Set<IndexedBinding>();
    const indexes = [this.clusterBySubject];
    const namespaced = namespace ? this.namespacedBySubject.get(namespace) : undefined;
    if (namespaced) indexes.push(namespaced);
    for (const index of indexes) {
      for (const key of keys) {
        for (const binding of index.get(key) ?? []) {
          if (seen.has(binding)) continue;
          seen.add(binding);
          const subject = binding.subjects.find((s) => subjectKey(s, binding.namespace) === key)!;
          yield { binding, subject };
        }
      }
    }
  }

  /** The rules a binding's role grants, or why they cannot be found (upstream's lister message). */
  rulesOf(roleRef: { kind: string; name: string }, bindingNamespace: string): RoleLookup {
    if (roleRef.kind === 'ClusterRole') {
      const rules = this.clusterRoles.get(roleRef.name);
      return rules ? { rules } : { error: `clusterrole.${vocabulary.rbacGroup} "${roleRef.name}" not found` };
    }
    if (roleRef.kind === 'Role') {
      const rules = bindingNamespace ? this.roles.get(bindingNamespace)?.get(roleRef.name) : undefined;
      return rules ? { rules } : { error: `role.${vocabulary.rbacGroup} "${roleRef.name}" not found` };
    }
    return { error: `unsupported role reference kind: ${JSON.stringify(roleRef.kind)}` };
  }
}
