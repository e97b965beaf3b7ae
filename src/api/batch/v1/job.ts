// batch/v1 Job: upstream 1.32's fields, defaults, the generated selector and
// pod labels, validation with upstream's messages, and columns. No job
// controller runs pods here; the TTL-after-finished controller deletes
// finished Jobs (controllers/ttlafterfinished.ts).

import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t, type Schema } from '../../schema.js';
import { validateJobStatusUpdate } from './jobstatus.js';
import { defineKind, type KindDefinition, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors, GoLiteral } from '../../../machinery/errors.js';
import { labelSelectorOf, validateLabelSelector } from '../../../machinery/selectors.js';
import { keyPath } from '../../../machinery/validation.js';
import { deepEqual } from '../../../machinery/equal.js';
import { humanDuration } from '../../../machinery/time.js';
import { LabelSelector, ObjectMeta, Time } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { PodTemplateSpec } from '../../core/v1/podspec.js';
import { defaultPodSpec } from '../../core/v1/pod.js';
import { validateTemplate } from '../../core/v1/replicationcontroller.js';
import { goLabels, goSelector, nonNegative, templateColumns } from '../../apps/v1/workload.js';

const s = t.string;
type Obj = Record<string, any>;

export const batchGroup = 'batch';
export const batch = (name: string) => `${definitionPrefix}.api.batch.v1.${name}`;
const atomic = (items: Schema, description: string) => t.array(items, description, { listType: 'atomic' });

const PodFailurePolicy = define(batch('PodFailurePolicy'), t.object({
  rules: p(1, atomic(t.ref(define(batch('PodFailurePolicyRule'), t.object({
    action: p(1, s('FailJob, FailIndex, Ignore or Count: what a matching pod failure does.')),
    onExitCodes: p(2, t.ref(define(batch('PodFailurePolicyOnExitCodesRequirement'), t.object({
      containerName: p(1, s('Container whose exit code is checked; every container when unset.'), 'whenSet'),
      operator: p(2, s('In or NotIn.')),
      values: p(3, t.array(t.int32(), 'Exit codes, at most 255, sorted, without repeats.', { listType: 'set' })),
    }, 'Exit codes of a failed pod\'s containers.', { required: ['operator', 'values'] })), 'Requirement on the containers\' exit codes.')),
    onPodConditions: p(3, atomic(t.ref(define(batch('PodFailurePolicyOnPodConditionsPattern'), t.object({
      type: p(1, s('Pod condition type.')), status: p(2, s('Condition status; True when unset.', { default: '' })),
    }, 'A pod condition a failed pod must have.', { required: ['type'] }))), 'Pod conditions a failed pod must have.')),
  }, 'A rule of a pod failure policy.', { required: ['action'] }))), 'Rules, checked in order; the first match decides.')),
}, 'How failed pods count against the job\'s backoffLimit.', { required: ['rules'] }));

const SuccessPolicy = define(batch('SuccessPolicy'), t.object({
  rules: p(1, atomic(t.ref(define(batch('SuccessPolicyRule'), t.object({
    succeededIndexes: p(1, s('Indexes (e.g. "1,3-5") that must succeed.'), 'whenSet'),
    succeededCount: p(2, t.int32('How many of those indexes must succeed.')),
  }, 'A rule that declares an Indexed job succeeded.'))), 'Rules; the first one met declares the job succeeded.')),
}, 'When an Indexed job counts as succeeded.', { required: ['rules'] }));

export const JobSpec = define(batch('JobSpec'), t.object({
  parallelism: p(1, t.int32('Most pods running at once; 1 when unset.')),
  completions: p(2, t.int32('Successful pods wanted; 1 when unset with parallelism unset.')),
  activeDeadlineSeconds: p(3, t.int64('Seconds the job may be active before it is failed.')),
  podFailurePolicy: p(11, t.ref(PodFailurePolicy, 'How failed pods are handled.')),
  successPolicy: p(16, t.ref(SuccessPolicy, 'When an Indexed job counts as succeeded.')),
  backoffLimit: p(7, t.int32('Retries before the job is failed; 6 when unset.')),
  backoffLimitPerIndex: p(12, t.int32('Retries of each index of an Indexed job.')),
  maxFailedIndexes: p(13, t.int32('Failed indexes before the whole Indexed job is failed.')),
  selector: p(4, t.ref(LabelSelector, 'Label selector of the pods; generated unless manualSelector is true.')),
  manualSelector: p(5, t.bool('Whether the selector was written by hand instead of generated.')),
  template: p(6, t.ref(PodTemplateSpec, 'The pods to run; restartPolicy Never or OnFailure.'), 'always'),
  ttlSecondsAfterFinished: p(8, t.int32('Seconds after the job finishes before it is deleted; never when unset.')),
  completionMode: p(9, s('NonIndexed or Indexed; NonIndexed when unset.'), 'whenSet'),
  suspend: p(10, t.bool('Whether the job\'s pods may run; false when unset.')),
  podReplacementPolicy: p(14, s('TerminatingOrFailed or Failed: when a replacement pod is made.'), 'whenSet'),
  managedBy: p(15, s('Controller that reconciles the job; the built-in one when unset.'), 'whenSet'),
}, 'Desired state of a job.', { required: ['template'] }));

const JobStatus = define(batch('JobStatus'), t.object({
  conditions: p(1, t.array(t.ref(define(batch('JobCondition'), t.object({
    type: p(1, s('Type of the condition: Complete, Failed, Suspended, FailureTarget, SuccessCriteriaMet.')), status: p(2, s('True, False or Unknown.')),
    lastProbeTime: p(3, t.ref(Time, 'When the condition was last probed.'), 'always'),
    lastTransitionTime: p(4, t.ref(Time, 'When the status last changed.'), 'always'),
    reason: p(5, s('Machine-readable reason.')), message: p(6, s('Human-readable details.')),
  }, 'A condition of a job.', { required: ['type', 'status'] }))), 'Latest observations of the job.', { patchMergeKey: 'type', patchStrategy: 'merge', listType: 'atomic' })),
  startTime: p(2, t.ref(Time, 'When the job controller started the job.')),
  completionTime: p(3, t.ref(Time, 'When the job completed.')),
  active: p(4, t.int32('Pending and running pods.'), 'always'),
  succeeded: p(5, t.int32('Pods that succeeded.'), 'always'),
  failed: p(6, t.int32('Pods that failed.'), 'always'),
  terminating: p(11, t.int32('Pods terminating.')),
  completedIndexes: p(7, s('Completed indexes of an Indexed job, as intervals.')),
  failedIndexes: p(10, s('Failed indexes of an Indexed job, as intervals.'), 'whenSet'),
  uncountedTerminatedPods: p(8, t.ref(define(batch('UncountedTerminatedPods'), t.object({
    succeeded: p(1, t.array(s(), 'UIDs of succeeded pods not yet counted.', { listType: 'set' })),
    failed: p(2, t.array(s(), 'UIDs of failed pods not yet counted.', { listType: 'set' })),
  }, 'Finished pods the controller has not yet counted.')), 'Finished pods the controller has not yet counted.')),
  ready: p(9, t.int32('Active pods that are ready.')),
}, 'Most recently observed status of a job.'));

const restartPolicies = ['OnFailure', 'Never'];
const replacementPolicies = ['Failed', 'TerminatingOrFailed'];

/** The checks of a job spec that a CronJob's job template shares, at `at` (`spec` or `spec.jobTemplate.spec`). */
export function validateJobSpec(spec: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes']) {
    errs.push(...nonNegative(spec[f], `${at}.${f}`));
  }
  if (spec.maxFailedIndexes !== undefined && spec.backoffLimitPerIndex === undefined) errs.push(fieldErrors.required(`${at}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  const mode = spec.completionMode;
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(fieldErrors.notSupported(`${at}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed' && spec.completions === undefined) errs.push(fieldErrors.required(`${at}.completions`, 'when completion mode is Indexed'));
  if (mode !== 'Indexed') {
    for (const f of ['backoffLimitPerIndex', 'maxFailedIndexes']) if (spec[f] !== undefined) errs.push(fieldErrors.invalid(`${at}.${f}`, spec[f], 'requires indexed completion mode'));
    if (spec.successPolicy) errs.push(fieldErrors.invalid(`${at}.successPolicy`, spec.successPolicy, 'requires indexed completion mode'));
  }
  const replacement = spec.podReplacementPolicy;
  if (replacement !== undefined) {
    if (spec.podFailurePolicy && replacement !== 'Failed') errs.push(fieldErrors.notSupported(`${at}.podReplacementPolicy`, replacement, ['Failed']));
    else if (!replacementPolicies.includes(replacement)) errs.push(fieldErrors.notSupported(`${at}.podReplacementPolicy`, replacement, replacementPolicies));
  }
  errs.push(...validateTemplate(spec.template, `${at}.template`));
  const policy = spec.template?.spec?.restartPolicy;
  const policyAt = `${at}.template.spec.restartPolicy`;
  if (policy === 'Always' || !policy) errs.push(fieldErrors.required(policyAt, 'valid values: "OnFailure", "Never"'));
  else if (!restartPolicies.includes(policy)) errs.push(fieldErrors.notSupported(policyAt, policy, restartPolicies));
  else if (spec.podFailurePolicy && policy !== 'Never') errs.push(fieldErrors.invalid(policyAt, policy, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

/** The labels the server gives a job's pods (upstream's and the legacy unprefixed ones), by key. */
const generatedLabels = (job: KubeObject): Obj => ({
  [vocabulary.jobControllerUidLabel]: job.metadata?.uid, [vocabulary.jobNameLabel]: job.metadata?.name,
  'controller-uid': job.metadata?.uid, 'job-name': job.metadata?.name,
});

/** Labels the pods and writes the selector, unless the user chose one by hand (upstream's generateSelector). */
function generateSelector(job: KubeObject): void {
  const spec = job.spec;
  if (!spec || spec.manualSelector === true) return;
  spec.template ??= {};
  spec.template.metadata ??= {};
  const labels = (spec.template.metadata.labels ??= {});
  // A label the user set stays: a conflict is reported by validation.
  for (const [key, value] of Object.entries(generatedLabels(job))) if (!Object.hasOwn(labels, key)) labels[key] = value;
  spec.selector ??= {};
  const matchLabels = (spec.selector.matchLabels ??= {});
  if (!Object.hasOwn(matchLabels, vocabulary.jobControllerUidLabel)) matchLabels[vocabulary.jobControllerUidLabel] = job.metadata?.uid;
}

function validateGeneratedSelector(job: KubeObject): FieldError[] {
  const spec: Obj = job.spec ?? {};
  if (spec.manualSelector === true || !spec.selector) return [];
  const errs: FieldError[] = [];
  if (!job.metadata?.uid) errs.push(fieldErrors.required('metadata.uid'));
  const expected = generatedLabels(job);
  const labels: Obj = spec.template?.metadata?.labels ?? {};
  for (const [key, value] of Object.entries(expected)) {
    const at = keyPath('spec.template.metadata.labels', key);
    if (!Object.hasOwn(labels, key)) errs.push(fieldErrors.required(at, `must be '${value}'`));
    else if (labels[key] !== value) errs.push(fieldErrors.invalid(at, goLabels(labels), `must be '${value}'`));
  }
  try {
    if (!labelSelectorOf(spec.selector).matches(expected)) errs.push(fieldErrors.invalid('spec.selector', goSelector(spec.selector), '`selector` not auto-generated'));
  } catch { /* reported by the selector's own checks */ }
  return errs;
}

function validateJob(job: KubeObject): FieldError[] {
  const spec: Obj = job.spec ?? {};
  const errs = [...validateGeneratedSelector(job), ...validateJobSpec(spec, 'spec')];
  if (!spec.selector) errs.push(fieldErrors.required('spec.selector'));
  else errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  try {
    if (spec.selector && !labelSelectorOf(spec.selector).matches(spec.template?.metadata?.labels)) {
      errs.push(fieldErrors.invalid('spec.template.metadata.labels', goLabels(spec.template?.metadata?.labels), '`selector` does not match template `labels`'));
    }
  } catch { /* reported above */ }
  return errs;
}

/** Immutable fields of a job spec, with how upstream prints their values. */
const immutableJobFields: [string, (v: unknown) => unknown][] = [
  ['selector', (v) => goSelector(v as Obj)], ['template', (v) => new GoLiteral(JSON.stringify(v))], ['completions', (v) => v ?? null],
  ['completionMode', (v) => v ?? null], ['podFailurePolicy', (v) => new GoLiteral(JSON.stringify(v ?? null))],
  ['backoffLimitPerIndex', (v) => v ?? null], ['managedBy', (v) => v ?? null], ['successPolicy', (v) => new GoLiteral(JSON.stringify(v ?? null))],
];

/** A template without what a suspended job that never started may still change (its scheduling directives, labels and annotations). */
function withoutSchedulingDirectives(template: Obj | undefined): Obj {
  const { labels: _l, annotations: _a, ...metadata } = template?.metadata ?? {};
  const { nodeSelector: _n, tolerations: _t, affinity: _f, schedulingGates: _g, ...spec } = template?.spec ?? {};
  return { ...template, metadata, spec };
}

function validateJobUpdate(job: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateJob(job);
  const schedulingMutable = old.spec?.suspend === true && !old.status?.startTime;
  for (const [field, shown] of immutableJobFields) {
    const [now, before] = field === 'template' && schedulingMutable
      ? [withoutSchedulingDirectives(job.spec?.template), withoutSchedulingDirectives(old.spec?.template)] : [job.spec?.[field], old.spec?.[field]];
    if (!deepEqual(now, before)) errs.push(fieldErrors.invalid(`spec.${field}`, shown(job.spec?.[field]), 'field is immutable'));
  }
  return errs;
}

/** The job defaults upstream's SetDefaults_Job fills (not a CronJob's job template: only Jobs get them). */
function defaultJob(job: KubeObject): void {
  const spec = (job.spec ??= {});
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex === undefined ? 6 : 2147483647;
  const labels = spec.template?.metadata?.labels;
  if (labels && Object.keys(job.metadata?.labels ?? {}).length === 0) {
    job.metadata ??= {};
    job.metadata.labels = { ...labels };
  }
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  for (const rule of spec.podFailurePolicy?.rules ?? []) for (const c of rule.onPodConditions ?? []) c.status ??= 'True';
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  defaultPodSpec(spec.template?.spec);
}

const hasCondition = (job: KubeObject, type: string) => ((job.status?.conditions ?? []) as Obj[]).some((c) => c.type === type && c.status === 'True');

/** The job's state as upstream's printer names it. */
export function jobState(job: KubeObject): string {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (hasCondition(job, 'Suspended')) return 'Suspended';
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function completionsText(job: KubeObject): string {
  const succeeded = job.status?.succeeded ?? 0;
  if (job.spec?.completions !== undefined) return `${succeeded}/${job.spec.completions}`;
  const parallelism = job.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function durationText(job: KubeObject): string {
  const start = job.status?.startTime;
  if (!start) return '';
  const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : Date.now();
  return humanDuration(end - Date.parse(start));
}

export const jobs: KindDefinition = defineKind({
  group: batchGroup, version: 'v1', kind: 'Job', plural: 'jobs', categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(batch('Job'), kindSchema('A task run to completion by pods.', {
    spec: p(2, t.ref(JobSpec, 'Desired state.'), 'always'),
    status: p(3, t.ref(JobStatus, 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateJobStatusUpdate } },
  strategy: {
    defaults: defaultJob,
    prepareForCreate(job) {
      job.status = {};
      generateSelector(job);
    },
    validate: validateJob,
    validateUpdate: validateJobUpdate,
  },
  fieldSelectors: { 'status.successful': (job) => String(job.status?.succeeded ?? 0) },
  printerColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'State of the job.', value: jobState },
    { name: 'Completions', type: 'string', description: 'Successful pods of the wanted ones.', value: completionsText },
    { name: 'Duration', type: 'string', description: 'How long the job ran.', value: durationText },
    ageColumn,
    ...templateColumns((job) => job.spec?.template, (job) => job.spec?.selector),
  ],
});

/** A CronJob's job template: the metadata and spec of the Jobs it would make. */
export const JobTemplateSpec = define(batch('JobTemplateSpec'), t.object({
  metadata: p(1, t.ref(ObjectMeta, 'Metadata of the jobs made from the template.'), 'always'),
  spec: p(2, t.ref(JobSpec, 'Specification of the jobs made from the template.'), 'always'),
}, 'What jobs made from a template look like.'));
