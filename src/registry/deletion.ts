// What a DELETE does with the stored object, decided once as a plan the
// store then carries out in its update loop (as readversion.ts decides a
// read): keep it as it is, mark it deleted and write it (held by finalizers
// or a grace period; the commit removes it when nothing holds it), or remove
// it now. The preconditions are checked first, as upstream's.

import { errors, type Qualified } from '../machinery/errors.js';
import { rfc3339Now } from '../machinery/time.js';
import type { KubeObject, Strategy } from '../api/kind.js';
import { beforeGracefulDelete } from './graceful.js';
import { applyPolicyFinalizers, type PropagationPolicy } from './propagation.js';
import type { DeleteOptions } from './writeoptions.js';

/** keep: answered as stored, removed: false; mark: written marked (`held`: it stays); remove: removed now. */
export type DeletionPlan = { step: 'keep' } | { step: 'mark'; held: boolean } | { step: 'remove' };

/** 409 when the object is not the one the preconditions name. */
export function checkPreconditions(qualified: Qualified, obj: KubeObject, options: DeleteOptions): void {
  const pre = options.preconditions;
  if (!pre) return;
  const meta = obj.metadata!;
  if (pre.uid && pre.uid !== meta.uid) {
    throw errors.conflict(qualified, meta.name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
    throw errors.conflict(qualified, meta.name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`);
  }
}

/**
 * The plan for deleting `obj` (a copy of the stored object, which it marks
 * in place): `held` says whether something still holds an object once
 * deletion is asked (finalizers, the kind's own rule).
 */
export function planDeletion(strategy: Strategy, obj: KubeObject, options: DeleteOptions, policy: PropagationPolicy, held: (obj: KubeObject) => boolean): DeletionPlan {
  const meta = obj.metadata!;
  const wasDeleting = !!meta.deletionTimestamp;
  // A pod being deleted gracefully: a shorter period marks it again, anything else leaves it (and its finalizers) as it is.
  const graceful = beforeGracefulDelete(strategy, obj, options.gracePeriodSeconds);
  if (graceful === 'pending') return { step: 'keep' };
  // The policy's finalizer (orphan, foregroundDeletion) holds the object for the garbage collector.
  const policyChanged = applyPolicyFinalizers(obj, policy);
  const stays = held(obj);
  if (!stays && graceful !== 'graceful') return { step: 'remove' };
  if (wasDeleting && graceful === 'none' && !policyChanged) return { step: 'keep' };
  if (!wasDeleting) {
    if (!meta.deletionTimestamp) {
      meta.deletionTimestamp = rfc3339Now();
      meta.deletionGracePeriodSeconds = 0; // kinds without graceful termination, as upstream for them
    }
    strategy.markDeleting?.(obj);
  }
  // Marked with a period of 0 and held by nothing: the commit removes it.
  return { step: 'mark', held: stays };
}
