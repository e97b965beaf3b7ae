// The parameters a binding gives its policy, as upstream collects them: none
// for a policy without paramKind (one evaluation with `params` null); the
// object paramRef names, or every object its selector selects (one
// evaluation each), read from an informer-fed lister of the paramKind's
// resource (custom resources included), live when the lister misses a named
// object created a moment ago. No object found: Deny is a configuration
// error (failurePolicy decides), Allow skips the binding.

import type { KubeObject } from '../../api/kind.js';
import type { AdmissionListers } from '../listers.js';
import type { AdmissionRequest } from '../types.js';
import type { CompiledBinding, CompiledPolicy } from './source.js';

/** Reads one object live (the admission context's `getObject`). */
export type LiveRead = (group: string, version: string, resource: string, namespace: string | undefined, name: string) => Promise<KubeObject | undefined>;

/** The parameters to evaluate with (null: the policy takes none), or the configuration error. */
export type Params = { params: (KubeObject | null)[] } | { error: string };

export async function collectParams(policy: CompiledPolicy, binding: CompiledBinding, request: AdmissionRequest, listers: AdmissionListers,
  live?: LiveRead): Promise<Params> {
  const kind = policy.paramKind;
  if (!kind) return { params: [null] };
  const ref = binding.paramRef;
  const gvk = `${kind.apiVersion}, Kind=${kind.kind}`;
  if (!ref) return { error: `paramKind kind \`${gvk}\` exists, but paramRef is nil` };
  const found = listers.ofKind(kind.apiVersion, kind.kind);
  if (!found) return { error: `failed to find resource referenced by paramKind: '${gvk}'` };
  if (!found.lister.hasSynced()) {
    try {
      await found.synced;
    } catch {
      return { error: `paramKind kind \`${gvk}\` not yet synced to use for admission` };
    }
  }
  let namespace = ref.namespace ?? '';
  if (found.namespaced && !namespace) {
    if (!request.namespace) return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' };
    namespace = request.namespace;
  }
  const ns = found.namespaced ? namespace : undefined;
  let params: KubeObject[];
  if (ref.name !== undefined) {
    let obj = found.lister.get(ns, ref.name);
    if (!obj && live) obj = await live(found.type.group, found.type.version, found.type.resource, ns, ref.name);
    params = obj ? [obj] : [];
  } else {
    const selector = ref.selector;
    if (selector instanceof Error) return { error: selector.message };
    const candidates = ns !== undefined ? found.lister.inNamespace(ns) : found.lister.list();
    params = candidates.filter((obj) => !selector || selector.matches(obj.metadata?.labels ?? {}));
  }
  if (params.length) return { params };
  return ref.parameterNotFoundAction === 'Allow' ? { params: [] } : { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
}
