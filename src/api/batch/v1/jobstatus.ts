// What a write through a Job's `status` sub-resource may hold, as upstream
// 1.32's ValidateJobUpdateStatus says with the options its strategy turns on
// (JobManagedBy is on by default there): counts not negative and never
// decreasing, terminal conditions that stay, start and completion times that
// agree with the conditions, and index intervals that parse. As upstream,
// most rules apply only when the fields they look at change, so a controller
// can still write other parts of a status a spec change made stale.

import { FieldError, fieldErrors, GoLiteral } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import type { KubeObject } from '../../kind.js';
import { nonNegative } from '../../core/v1/statusvalidation.js';

type Obj = Record<string, any>;

const isTrue = (job: KubeObject, type: string) => ((job.status?.conditions ?? []) as Obj[]).some((c) => c?.type === type && c?.status === 'True');
const complete = (job: KubeObject) => isTrue(job, 'Complete');
const failed = (job: KubeObject) => isTrue(job, 'Failed');
const finished = (job: KubeObject) => complete(job) || failed(job);
const criteriaMet = (job: KubeObject) => isTrue(job, 'SuccessCriteriaMet');
const failureTarget = (job: KubeObject) => isTrue(job, 'FailureTarget');

/** A time as upstream prints a metav1.Time in a message (Go's time.String). */
function goTime(v: string): GoLiteral {
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return new GoLiteral(JSON.stringify(v));
  return new GoLiteral(`${d.toISOString().replace('T', ' ').replace(/\.000Z$|Z$/, '')} +0000 UTC`);
}

const goUIDs = (list: unknown) => (Array.isArray(list) ? `[]types.UID{${list.map((u) => JSON.stringify(String(u))).join(', ')}}` : '[]types.UID(nil)');
const goUncounted = (u: Obj) => new GoLiteral(`batch.UncountedTerminatedPods{Succeeded:${goUIDs(u.succeeded)}, Failed:${goUIDs(u.failed)}}`);

/** One interval of an index list ("3" or "3-5") below `completions`, or upstream's error text. */
function parseInterval(text: string, completions: number): [number, number] | string {
  const parts = text.split('-');
  if (parts.length > 2) return `the fragment ${JSON.stringify(text)} violates the requirement that an index interval can have at most two parts separated by '-'`;
  const bounds: number[] = [];
  for (const part of parts) {
    if (!/^[+-]?[0-9]+$/.test(part)) return `cannot convert string to integer for index: ${JSON.stringify(part)}`;
    const n = Number(part);
    if (n >= completions) return `too large index: ${JSON.stringify(part)}`;
    bounds.push(n);
  }
  const [x, y] = bounds as [number, number | undefined];
  if (y === undefined) return [x, x];
  if (x >= y) return `non-increasing order, previous: ${x}, current: ${y}`;
  return [x, y];
}

/** The intervals of an index list in order, or upstream's first error. */
function parseIndexes(text: string, completions: number): [number, number][] | string {
  if (!text) return [];
  const out: [number, number][] = [];
  for (const piece of text.split(',')) {
    const interval = parseInterval(piece, completions);
    if (typeof interval === 'string') return interval;
    const last = out[out.length - 1];
    if (last && last[1] >= interval[0]) return `non-increasing order, previous: ${last[1]}, current: ${interval[0]}`;
    out.push(interval);
  }
  return out;
}

/** The first index both lists hold (both parsed; an unparsable list overlaps nothing). */
function firstOverlap(completed: string, failedList: string, completions: number): number | undefined {
  const parsed = (text: string) => (text ? text.split(',').map((p) => parseInterval(p, completions)).filter((i): i is [number, number] => typeof i !== 'string') : []);
  const a = parsed(completed);
  const b = parsed(failedList);
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [cX, cY] = a[i]!;
    const [fX, fY] = b[j]!;
    if (cX <= fY && fX <= cY) return Math.max(cX, fX);
    if (cX <= fX) i++;
    else j++;
  }
  return undefined;
}

/** The empty, repeated UIDs among the pods counted neither as succeeded nor as failed yet. */
function uncountedErrors(uncounted: Obj | undefined): FieldError[] {
  if (!uncounted) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  for (const list of ['succeeded', 'failed']) {
    ((uncounted[list] ?? []) as unknown[]).forEach((uid, i) => {
      const at = `status.uncountedTerminatedPods.${list}[${i}]`;
      const key = String(uid ?? '');
      if (!key) errs.push(fieldErrors.invalid(at, key, 'must not be empty'));
      else if (seen.has(key)) errs.push(fieldErrors.duplicate(at, key));
      else seen.add(key);
    });
  }
  return errs;
}

const conditionsError = (detail: string) => new FieldError('FieldValueInvalid', 'status.conditions', detail, undefined, false);

/** Upstream's ValidateJobUpdateStatus for a job whose stored form is `old`. */
export function validateJobStatusUpdate(job: KubeObject, old: KubeObject): FieldError[] {
  const status: Obj = job.status ?? {};
  const was: Obj = old.status ?? {};
  const spec: Obj = job.spec ?? {};
  const changed = (name: string) => !deepEqual(status[name] ?? null, was[name] ?? null);
  const finishedChanged = finished(old) !== finished(job);
  const completeChanged = complete(old) !== complete(job);
  const indexed = spec.completionMode === 'Indexed';
  const completions: number | undefined = spec.completions ?? undefined;

  const errs = nonNegative(status, 'status', ['active', 'succeeded', 'failed', 'ready', 'terminating']);
  errs.push(...uncountedErrors(status.uncountedTerminatedPods));
  if ((completeChanged || failed(old) !== failed(job)) && complete(job) && failed(job)) errs.push(conditionsError('cannot set Complete=True and Failed=true conditions'));
  if ((completeChanged || failureTarget(old) !== failureTarget(job)) && complete(job) && failureTarget(job)) errs.push(conditionsError('cannot set Complete=True and FailureTarget=true conditions'));
  const completionChanged = completeChanged || changed('completionTime');
  if (completionChanged && status.completionTime && !complete(job)) errs.push(fieldErrors.invalid('status.completionTime', goTime(status.completionTime), 'cannot set completionTime when there is no Complete=True condition'));
  if (completionChanged && !status.completionTime && complete(job)) errs.push(fieldErrors.required('status.completionTime', 'completionTime is required for Complete jobs'));
  if ((changed('startTime') || changed('completionTime')) && status.startTime && status.completionTime && Date.parse(status.completionTime) < Date.parse(status.startTime)) {
    errs.push(fieldErrors.invalid('status.completionTime', goTime(status.completionTime), 'completionTime cannot be set before startTime'));
  }
  if ((finishedChanged || changed('active')) && (status.active ?? 0) > 0 && finished(job)) errs.push(fieldErrors.invalid('status.active', status.active, 'active>0 is invalid for finished job'));
  if ((finishedChanged || changed('startTime')) && !status.startTime && finished(job)) errs.push(fieldErrors.required('status.startTime', 'startTime is required for finished job'));
  const uncounted: Obj | undefined = status.uncountedTerminatedPods;
  if ((finishedChanged || changed('uncountedTerminatedPods')) && finished(job) && uncounted && (uncounted.failed ?? []).length + (uncounted.succeeded ?? []).length > 0) {
    errs.push(fieldErrors.invalid('status.uncountedTerminatedPods', goUncounted(uncounted), 'uncountedTerminatedPods needs to be empty for finished job'));
  }
  const completed: string = status.completedIndexes ?? '';
  const failedIndexes: string | undefined = status.failedIndexes ?? undefined;
  if (changed('completedIndexes') && completions !== undefined) {
    const parsed = parseIndexes(completed, completions);
    if (typeof parsed === 'string') errs.push(fieldErrors.invalid('status.completedIndexes', completed, `error parsing completedIndexes: ${parsed}`));
  }
  if (changed('failedIndexes') && completions !== undefined && spec.backoffLimitPerIndex != null && failedIndexes !== undefined) {
    const parsed = parseIndexes(failedIndexes, completions);
    if (typeof parsed === 'string') errs.push(fieldErrors.invalid('status.failedIndexes', failedIndexes, `error parsing failedIndexes: ${parsed}`));
  }
  if (changed('completedIndexes') && completed && !indexed) errs.push(fieldErrors.invalid('status.completedIndexes', completed, 'cannot set non-empty completedIndexes when non-indexed completion mode'));
  if (changed('failedIndexes') && spec.backoffLimitPerIndex == null && failedIndexes !== undefined) errs.push(fieldErrors.invalid('status.failedIndexes', failedIndexes, 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'));
  if ((changed('failedIndexes') || changed('completedIndexes')) && completions !== undefined && failedIndexes !== undefined) {
    const at = firstOverlap(completed, failedIndexes, completions);
    if (at !== undefined) errs.push(fieldErrors.invalid('status.failedIndexes', failedIndexes, `failedIndexes and completedIndexes overlap at index: ${at}`));
  }
  if (criteriaMet(job) && failed(job)) errs.push(conditionsError('cannot set SuccessCriteriaMet=True and Failed=true conditions'));
  if (criteriaMet(job) && failureTarget(job)) errs.push(conditionsError('cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'));
  if (spec.successPolicy && !criteriaMet(job) && complete(job)) errs.push(conditionsError('cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'));

  // What may not go back from the stored status.
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (isTrue(old, type) && !isTrue(job, type)) errs.push(conditionsError(`cannot disable the terminal ${type}=True condition`));
  }
  if ((status.failed ?? 0) < (was.failed ?? 0)) errs.push(fieldErrors.invalid('status.failed', status.failed ?? 0, 'cannot decrease the failed counter'));
  // An Indexed job whose completions equal its parallelism may be scaled down, and its succeeded count with it.
  const mayScaleDown = indexed && spec.completions === spec.parallelism;
  if (!mayScaleDown && (status.succeeded ?? 0) < (was.succeeded ?? 0)) errs.push(fieldErrors.invalid('status.succeeded', status.succeeded ?? 0, 'cannot decrease the succeeded counter'));
  if (status.completionTime && was.completionTime && Date.parse(status.completionTime) !== Date.parse(was.completionTime)) {
    errs.push(fieldErrors.invalid('status.completionTime', goTime(status.completionTime), 'completionTime cannot be mutated'));
  }
  if (was.startTime && changed('startTime') && spec.suspend !== true) errs.push(fieldErrors.required('status.startTime', 'startTime cannot be removed for unsuspended job'));
  if (criteriaMet(old) && !criteriaMet(job)) errs.push(conditionsError('cannot disable the SuccessCriteriaMet=True condition'));
  if (complete(old) && !criteriaMet(old) && criteriaMet(job)) errs.push(conditionsError('cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'));
  return errs;
}
