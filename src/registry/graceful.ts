// Graceful deletion, as upstream's rest.BeforeDelete: a kind whose strategy
// says how long an object may take to terminate (`gracePeriod`, upstream's
// CheckGracefulDelete: only pods) is not removed by a delete but marked, with
// deletionTimestamp set that many seconds ahead and deletionGracePeriodSeconds;
// whoever runs the object (the node agent upstream) finishes the deletion with
// a delete of grace 0. A second delete may only shorten the period.
//
// Upstream takes any int64 period and neither clamps nor refuses it: the
// deadline is `time.Second * time.Duration(period)` after now, an int64 of
// nanoseconds that wraps around past about 292 years (a period of
// 99999999999999 s puts the deadline 6.35 years ahead, one of 10^10 s 268
// years back) while deletionGracePeriodSeconds keeps the period as sent.
// The deadlines here are computed the same way, so they are upstream's.

import type { KubeObject, Strategy } from '../api/kind.js';
import { rfc3339Now } from '../machinery/time.js';

const nanosPerMs = 1_000_000n;

/** `seconds` as Go's time.Duration (int64 nanoseconds), wrapped around as Go's multiplication wraps. */
export function goDurationNanos(seconds: number): bigint {
  return BigInt.asIntN(64, BigInt(Math.trunc(seconds)) * 1_000_000_000n);
}

/** The farthest a JavaScript Date reaches either side of the epoch (Go saturates at its own bounds). */
const dateLimitMs = 8.64e15;

/** RFC 3339 text of `fromMs` moved by each of `periods` (seconds, each a Go duration), as upstream's Time.Add chain. */
export function deadlineAfter(fromMs: number, ...periods: number[]): string {
  // A stored timestamp that does not parse counts from now rather than failing the delete.
  let nanos = BigInt(Math.trunc(Number.isFinite(fromMs) ? fromMs : Date.now())) * nanosPerMs;
  for (const seconds of periods) nanos += goDurationNanos(seconds);
  // Floor to the millisecond (BigInt division truncates toward zero).
  let ms = nanos / nanosPerMs;
  if (nanos < 0n && ms * nanosPerMs !== nanos) ms -= 1n;
  return rfc3339Now(new Date(Math.max(-dateLimitMs, Math.min(dateLimitMs, Number(ms)))));
}

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
    meta.deletionTimestamp = deadlineAfter(Date.parse(meta.deletionTimestamp), -current, requested);
    meta.deletionGracePeriodSeconds = requested;
    return 'graceful';
  }
  const period = strategy.gracePeriod(obj, requested);
  meta.deletionTimestamp = deadlineAfter(Date.now(), period);
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
