// batch/v1 CronJob: upstream 1.32's fields, defaults, schedule and time zone
// rules, and columns. Nothing runs the schedule here: no Job is ever made
// from a CronJob by this server (`kubectl create job --from=cronjob/x` makes
// one on the client's side).

import { define, p, t } from '../../schema.js';
import { defineKind, type KindDefinition, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { ageOf } from '../../../machinery/time.js';
import { Time } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn, ObjectReference } from '../../core/v1/common.js';
import { defaultPodSpec } from '../../core/v1/pod.js';
import { goSelector, nonNegative, templateColumns } from '../../apps/v1/workload.js';
import { batch, batchGroup, JobTemplateSpec, validateJobSpec } from './job.js';
import { knownTimeZone, scheduleError } from './cron.js';

const s = t.string;
type Obj = Record<string, any>;

const concurrencyPolicies = ['Allow', 'Forbid', 'Replace'];
/** IANA naming rules for each part of a zone name (digits and + tolerated for legacy names), as upstream checks them. */
const zonePart = /^[A-Za-z.\-_0-9+]{1,14}$/;

function validateTimeZone(zone: unknown): FieldError[] {
  if (zone === undefined || zone === null) return [];
  const at = 'spec.timeZone';
  const text = String(zone);
  if (text.length === 0) return [fieldErrors.invalid(at, '', 'timeZone must be nil or non-empty string')];
  if (text.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !zonePart.test(part))) {
    return [fieldErrors.invalid(at, text, `unknown time zone ${text}`)];
  }
  const errs: FieldError[] = [];
  if (text.toLowerCase() === 'local') errs.push(fieldErrors.invalid(at, text, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  if (!knownTimeZone(text)) errs.push(fieldErrors.invalid(at, text, `unknown time zone ${text}`));
  return errs;
}

function validateCronJobSpec(spec: Obj, old: Obj | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const schedule: string = spec.schedule ?? '';
  if (!schedule) errs.push(fieldErrors.required('spec.schedule'));
  else {
    const problem = scheduleError(schedule);
    if (problem) errs.push(fieldErrors.invalid('spec.schedule', schedule, problem));
    // A TZ in the schedule is accepted only where the stored object already had one (objects older than timeZone).
    const tzAllowed = old !== undefined && String(old.schedule ?? '').includes('TZ');
    if (tzAllowed && schedule.includes('TZ') && spec.timeZone !== undefined) errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    if (!tzAllowed && schedule.includes('TZ')) errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  errs.push(...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (old === undefined || old.timeZone !== spec.timeZone) errs.push(...validateTimeZone(spec.timeZone));
  const policy = spec.concurrencyPolicy;
  if (!policy) errs.push(fieldErrors.required('spec.concurrencyPolicy'));
  else if (!concurrencyPolicies.includes(policy)) errs.push(fieldErrors.notSupported('spec.concurrencyPolicy', policy, concurrencyPolicies));
  const jobSpec: Obj = spec.jobTemplate?.spec ?? {};
  errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec'));
  if (jobSpec.selector) errs.push(fieldErrors.invalid('spec.jobTemplate.spec.selector', goSelector(jobSpec.selector), '`selector` will be auto-generated'));
  if (jobSpec.manualSelector === true) errs.push(fieldErrors.notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  errs.push(...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'), ...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errs;
}

function validateCronJob(cj: KubeObject): FieldError[] {
  const errs = validateCronJobSpec(cj.spec ?? {}, undefined);
  // The controller adds an 11-character suffix to a job's name, and a job's name is a DNS label.
  const name = String(cj.metadata?.name ?? '');
  if (name.length > 52) errs.push(fieldErrors.invalid('metadata.name', name, 'must be no more than 52 characters'));
  return errs;
}

export const cronJobs: KindDefinition = defineKind({
  group: batchGroup, version: 'v1', kind: 'CronJob', plural: 'cronjobs', shortNames: ['cj'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(batch('CronJob'), kindSchema('A job made on a repeating schedule.', {
    spec: p(2, t.ref(define(batch('CronJobSpec'), t.object({
      schedule: p(1, s('The schedule in cron format.')),
      timeZone: p(8, s('Time zone of the schedule (an IANA name); the controller\'s when unset.'), 'whenSet'),
      startingDeadlineSeconds: p(2, t.int64('Seconds after a missed time a job may still start.')),
      concurrencyPolicy: p(3, s('Allow, Forbid or Replace: what happens when runs overlap; Allow when unset.', { enum: ['Allow', 'Forbid', 'Replace'] })),
      suspend: p(4, t.bool('Whether later runs are suspended; false when unset.')),
      jobTemplate: p(5, t.ref(JobTemplateSpec, 'The job made at each time.'), 'always'),
      successfulJobsHistoryLimit: p(6, t.int32('Finished successful jobs kept; 3 when unset.')),
      failedJobsHistoryLimit: p(7, t.int32('Failed jobs kept; 1 when unset.')),
    }, 'Desired state of a cron job.', { required: ['schedule', 'jobTemplate'] })), 'Desired state.'), 'always'),
    status: p(3, t.ref(define(batch('CronJobStatus'), t.object({
      active: p(1, t.array(t.ref(ObjectReference), 'Jobs running now.', { listType: 'atomic' })),
      lastScheduleTime: p(4, t.ref(Time, 'When a job was last scheduled.')),
      lastSuccessfulTime: p(5, t.ref(Time, 'When a job last completed successfully.')),
    }, 'Most recently observed status of a cron job.')), 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: statusSubresource },
  strategy: {
    defaults(cj) {
      const spec = (cj.spec ??= {});
      spec.concurrencyPolicy ??= 'Allow';
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      defaultPodSpec(spec.jobTemplate?.spec?.template?.spec);
    },
    prepareForCreate(cj) {
      cj.status = {};
    },
    validate: validateCronJob,
    validateUpdate: (cj, old) => validateCronJobSpec(cj.spec ?? {}, old.spec ?? {}),
  },
  printerColumns: [
    nameColumn,
    { name: 'Schedule', type: 'string', description: 'The schedule in cron format.', value: (cj) => cj.spec?.schedule ?? '' },
    { name: 'Timezone', type: 'string', description: 'Time zone of the schedule.', value: (cj) => cj.spec?.timeZone ?? '<none>' },
    // Upstream prints the flag as text: True, False or <unset>.
    { name: 'Suspend', type: 'boolean', description: 'Whether later runs are suspended.', value: (cj) => (cj.spec?.suspend === undefined ? '<unset>' : cj.spec.suspend ? 'True' : 'False') },
    { name: 'Active', type: 'integer', description: 'Jobs running now.', value: (cj) => (cj.status?.active ?? []).length },
    { name: 'Last Schedule', type: 'string', description: 'When a job was last scheduled.', value: (cj) => (cj.status?.lastScheduleTime ? ageOf(cj.status.lastScheduleTime) : '<none>') },
    ageColumn,
    ...templateColumns((cj) => cj.spec?.jobTemplate?.spec?.template, (cj) => cj.spec?.jobTemplate?.spec?.selector),
  ],
});
