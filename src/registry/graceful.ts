// Graceful deletion, as upstream's rest.BeforeDelete: a kind whose strategy
// says how long an object may take to terminate (`gracePeriod`, upstream's
// CheckGracefulDelete: only pods) is not removed by a delete but marked, with
// deletionTimestamp set that many seconds ahead and deletionGracePeriodSeconds;
// whoever runs the object (the node agent upstream) finishes the deletion with
// a delete of grace 0. A second delete may only shorten the period.

import type { KubeObject, Strategy } from '../api/kind.js';
import { rfc3339Now } from '../machinery/time.js';

/** What a delete does with the object: mark it (`graceful`), leave it as it is (`pending`), or go on as any other kind (`none`). */
export type GracefulStep = 'graceful' | 'pending' | 'none';

/**
 * Marks `obj` for graceful deletion when its kind allows it; `requested` is
 * the request's gracePeriodSeconds. A negative period counts as 1 second, as
 * upstream. An object already marked with a period of 0 (or none) is deleted
 * now, whatever is asked.
 */
export function beforeGracefulDelete(strategy: Strategy, obj: KubeObject, requested: number | undefined): GracefulStep {
  const meta = obj.metadata!;
  if (requested !== undefined && requested < 0) requested = 1;
  if (typeof meta.deletionGracePeriodSeconds === 'number' && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1;
  if (!strategy.gracePeriod) return 'none';
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds;
    if (typeof current !== 'number' || current === 0) return 'none';
    // Only a shorter period is taken: the deadline moves back by the difference.
    if (requested === undefined || requested >= current) return 'pending';
    const deadline = Date.parse(meta.deletionTimestamp) - (current - requested) * 1000;
    meta.deletionTimestamp = rfc3339Now(new Date(deadline));
    meta.deletionGracePeriodSeconds = requested;
    return 'graceful';
  }
  const period = strategy.gracePeriod(obj, requested);
  meta.deletionTimestamp = rfc3339Now(new Date(Date.now() + period * 1000));
  meta.deletionGracePeriodSeconds = period;
  // Controllers of an object being deleted change what they do: a new generation says so.
  if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation++;
  return 'graceful';
}

/** Whether a marked object still has time to terminate: nothing but a delete with a shorter period removes it then. */
export function terminating(obj: KubeObject): boolean {
  const meta = obj.metadata;
  return !!meta?.deletionTimestamp && typeof meta.deletionGracePeriodSeconds === 'number' && meta.deletionGracePeriodSeconds > 0;
}
