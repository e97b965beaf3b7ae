// What happens to an object's dependents when it is deleted: the
// propagation policy becomes a finalizer that the garbage collector honours.
//   Orphan      -> `orphan`: dependents lose their owner reference, then the owner goes.
//   Foreground  -> `foregroundDeletion`: blocking dependents go first, then the owner.
//   Background  -> the owner goes now; the collector removes dependents afterwards.

import { errors, fieldErrors } from '../machinery/errors.js';
import type { KubeObject } from '../api/kind.js';

export const orphanFinalizer = 'orphan';
export const foregroundFinalizer = 'foregroundDeletion';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export function effectivePolicy(propagationPolicy: string | undefined, orphanDependents: boolean | undefined): PropagationPolicy {
  if (propagationPolicy !== undefined && orphanDependents !== undefined) {
    throw errors.invalidOptions('DeleteOptions', [
      fieldErrors.invalid('propagationPolicy', propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'),
    ]);
  }
  if (orphanDependents !== undefined) return orphanDependents ? 'Orphan' : 'Background';
  return (propagationPolicy as PropagationPolicy | undefined) ?? 'Background';
}

/**
 * Sets the finalizers the policy asks for on an object being deleted;
 * returns whether they changed. A later delete with another policy swaps them.
 */
export function applyPolicyFinalizers(obj: KubeObject, policy: PropagationPolicy): boolean {
  const meta = obj.metadata!;
  const before: string[] = meta.finalizers ?? [];
  let after = before.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer);
  if (policy === 'Orphan') after = [...after, orphanFinalizer];
  if (policy === 'Foreground') after = [...after, foregroundFinalizer];
  const changed = after.length !== before.length || after.some((f, i) => f !== before[i]);
  if (after.length) meta.finalizers = after;
  else delete meta.finalizers;
  return changed;
}
