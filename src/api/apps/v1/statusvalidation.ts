// What a write through the `status` sub-resource of an apps kind may hold,
// as upstream's ValidateXStatusUpdate functions say, with their messages:
// counts that are not negative, counts that do not exceed status.replicas
// (and available ones that do not exceed ready ones), and a collision count
// that never goes down. The spec is the stored one already (kind.ts's parts).

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import type { KubeObject } from '../../kind.js';
import { nonNegative } from '../../core/v1/statusvalidation.js';

type Obj = Record<string, any>;

const aboveReplicas = 'cannot be greater than status.replicas';

/** Each of `names` at most status.replicas, and availableReplicas at most readyReplicas (upstream words that one per kind). */
function withinReplicas(status: Obj, names: string[], availableAboveReady: string): FieldError[] {
  const count = (n: string): number => status[n] ?? 0;
  const errs = names.filter((n) => count(n) > count('replicas')).map((n) => fieldErrors.invalid(`status.${n}`, count(n), aboveReplicas));
  if (count('availableReplicas') > count('readyReplicas')) errs.push(fieldErrors.invalid('status.availableReplicas', count('availableReplicas'), availableAboveReady));
  return errs;
}

/** status.collisionCount may grow or stay, never shrink (upstream's IsDecremented: dropping it counts as 0). */
function collisionCountKept(obj: KubeObject, old: KubeObject): FieldError[] {
  const was = old.status?.collisionCount;
  const now = obj.status?.collisionCount;
  if (typeof was !== 'number' || (typeof now === 'number' && now >= was)) return [];
  return [fieldErrors.invalid('status.collisionCount', now ?? 0, 'cannot be decremented')];
}

/** Upstream's ValidateDeploymentStatusUpdate. */
export function validateDeploymentStatusUpdate(d: KubeObject, old: KubeObject): FieldError[] {
  const status: Obj = d.status ?? {};
  return [
    ...nonNegative(status, 'status', ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'collisionCount']),
    ...withinReplicas(status, ['updatedReplicas', 'readyReplicas', 'availableReplicas'], 'cannot be greater than readyReplicas'),
    ...collisionCountKept(d, old),
  ];
}

/** Upstream's ValidateReplicaSetStatusUpdate. */
export function validateReplicaSetStatusUpdate(rs: KubeObject): FieldError[] {
  const status: Obj = rs.status ?? {};
  return [
    ...nonNegative(status, 'status', ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']),
    ...withinReplicas(status, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'], 'cannot be greater than readyReplicas'),
  ];
}

/** Upstream's ValidateStatefulSetStatusUpdate. */
export function validateStatefulSetStatusUpdate(ss: KubeObject, old: KubeObject): FieldError[] {
  const status: Obj = ss.status ?? {};
  return [
    ...nonNegative(status, 'status', ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']),
    ...withinReplicas(status, ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'], 'cannot be greater than status.readyReplicas'),
    ...collisionCountKept(ss, old),
  ];
}

/** Upstream's ValidateDaemonSetStatusUpdate: its counts are of nodes, with no relation checked between them. */
export function validateDaemonSetStatusUpdate(ds: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...nonNegative(ds.status ?? {}, 'status', ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady',
      'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'collisionCount']),
    ...collisionCountKept(ds, old),
  ];
}
