// apps/v1 DaemonSet (one pod per node: nothing makes them here) and
// ControllerRevision (the immutable snapshots stateful and daemon sets keep).

import { define, p, t } from '../../schema.js';
import { validateDaemonSetStatusUpdate } from './statusvalidation.js';
import { defineKind, type KindDefinition, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { LabelSelector } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { PodTemplateSpec } from '../../core/v1/podspec.js';
import { defaultPodSpec } from '../../core/v1/pod.js';
import { selectorText } from '../../core/v1/replicationcontroller.js';
import {
  apps, appsGroup, conditionsOf, goIntOrString, immutableSelector, intOrPercentValue, nonNegative, templateColumns,
  noActiveDeadline, validateIntOrPercent, validateSelectorAndTemplate,
} from './workload.js';

const s = t.string;
type Obj = Record<string, any>;

const DaemonSetSpec = define(apps('DaemonSetSpec'), t.object({
  selector: p(1, t.ref(LabelSelector, 'Label selector of the pods; must match the template\'s labels; immutable.')),
  template: p(2, t.ref(PodTemplateSpec, 'The pod made on each eligible node.'), 'always'),
  updateStrategy: p(3, t.ref(define(apps('DaemonSetUpdateStrategy'), t.object({
    type: p(1, s('RollingUpdate or OnDelete; RollingUpdate when unset.', { enum: ['OnDelete', 'RollingUpdate'] })),
    rollingUpdate: p(2, t.ref(define(apps('RollingUpdateDaemonSet'), t.object({
      maxUnavailable: p(1, t.intOrString('Nodes (number or percent) whose pod may be unavailable during the update; 1 when unset.')),
      maxSurge: p(2, t.intOrString('Nodes (number or percent) that may run an updated pod beside the old one; 0 when unset.')),
    }, 'How a rolling update of a daemon set proceeds.')), 'Parameters of a rolling update; only with type RollingUpdate.')),
  }, 'How pods of a daemon set are replaced.')), 'How pods are replaced.'), 'always'),
  minReadySeconds: p(4, t.int32('Seconds a new pod must be ready to count as available.'), 'always'),
  revisionHistoryLimit: p(6, t.int32('Old histories kept for rollback; 10 when unset.')),
}, 'Desired state of a daemon set.', { required: ['selector', 'template'] }));

const DaemonSetStatus = define(apps('DaemonSetStatus'), t.object({
  currentNumberScheduled: p(1, t.int32('Nodes running at least one daemon pod that should.'), 'always'),
  numberMisscheduled: p(2, t.int32('Nodes running a daemon pod that should not.'), 'always'),
  desiredNumberScheduled: p(3, t.int32('Nodes that should run the daemon pod.'), 'always'),
  numberReady: p(4, t.int32('Nodes whose daemon pod is ready.'), 'always'),
  observedGeneration: p(5, t.int64('Generation the status was computed for.'), 'always'),
  updatedNumberScheduled: p(6, t.int32('Nodes running the updated daemon pod.'), 'always'),
  numberAvailable: p(7, t.int32('Nodes whose daemon pod is available.'), 'always'),
  numberUnavailable: p(8, t.int32('Nodes whose daemon pod should run and be available but is not.'), 'always'),
  collisionCount: p(9, t.int32('Hash collisions met when naming the newest ControllerRevision.')),
  conditions: p(10, conditionsOf(apps('DaemonSetCondition'), 'daemon set')),
}, 'Most recently observed status of a daemon set.', { required: ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'] }));

function validateUpdateStrategy(strategy: Obj | undefined): FieldError[] {
  const at = 'spec.updateStrategy';
  switch (strategy?.type) {
    case 'OnDelete': return [];
    case 'RollingUpdate': {
      const ru = strategy.rollingUpdate;
      if (!ru) return [fieldErrors.required(`${at}.rollingUpdate`)];
      const errs = [...validateIntOrPercent(ru.maxUnavailable, `${at}.rollingUpdate.maxUnavailable`, true), ...validateIntOrPercent(ru.maxSurge, `${at}.rollingUpdate.maxSurge`, true)];
      const unavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
      const surge = intOrPercentValue(ru.maxSurge) !== 0;
      if (unavailable && surge) errs.push(fieldErrors.invalid(`${at}.rollingUpdate.maxSurge`, goIntOrString(ru.maxSurge), 'may not be set when maxUnavailable is non-zero'));
      if (!unavailable && !surge) errs.push(fieldErrors.required(`${at}.rollingUpdate.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
      return errs;
    }
    default: return [fieldErrors.notSupported(at, strategy?.type ?? '', ['RollingUpdate', 'OnDelete'])];
  }
}

function validateDaemonSet(ds: KubeObject): FieldError[] {
  const spec: Obj = ds.spec ?? {};
  const errs = validateSelectorAndTemplate(spec, 'daemonset');
  errs.push(...noActiveDeadline(spec, 'DaemonSet'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'), ...validateUpdateStrategy(spec.updateStrategy), ...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  return errs;
}

export const daemonSets: KindDefinition = defineKind({
  group: appsGroup, version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', shortNames: ['ds'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(apps('DaemonSet'), kindSchema('Runs one pod made from a template on each eligible node.', {
    spec: p(2, t.ref(DaemonSetSpec, 'Desired state.'), 'always'),
    status: p(3, t.ref(DaemonSetStatus, 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateDaemonSetStatusUpdate } },
  strategy: {
    defaults(ds) {
      ds.spec ??= {};
      const spec = ds.spec;
      spec.updateStrategy ??= {};
      spec.updateStrategy.type ??= 'RollingUpdate';
      if (spec.updateStrategy.type === 'RollingUpdate') {
        spec.updateStrategy.rollingUpdate ??= {};
        spec.updateStrategy.rollingUpdate.maxUnavailable ??= 1;
        spec.updateStrategy.rollingUpdate.maxSurge ??= 0;
      }
      spec.revisionHistoryLimit ??= 10;
      defaultPodSpec(spec.template?.spec);
    },
    prepareForCreate(ds) {
      ds.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    },
    validate: validateDaemonSet,
    validateUpdate: (ds, old) => [...validateDaemonSet(ds), ...immutableSelector(ds, old)],
  },
  printerColumns: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Nodes that should run the daemon pod.', value: (ds) => ds.status?.desiredNumberScheduled ?? 0 },
    { name: 'Current', type: 'integer', description: 'Nodes running the daemon pod.', value: (ds) => ds.status?.currentNumberScheduled ?? 0 },
    { name: 'Ready', type: 'integer', description: 'Nodes whose daemon pod is ready.', value: (ds) => ds.status?.numberReady ?? 0 },
    { name: 'Up-to-date', type: 'integer', description: 'Nodes running the updated daemon pod.', value: (ds) => ds.status?.updatedNumberScheduled ?? 0 },
    { name: 'Available', type: 'integer', description: 'Nodes whose daemon pod is available.', value: (ds) => ds.status?.numberAvailable ?? 0 },
    { name: 'Node Selector', type: 'string', description: 'Node labels the daemon pods are limited to.', value: (ds) => selectorText(ds.spec?.template?.spec?.nodeSelector) || '<none>' },
    ageColumn,
    ...templateColumns((ds) => ds.spec?.template, (ds) => ds.spec?.selector),
  ],
});

function validateRevision(cr: KubeObject): FieldError[] {
  const errs = nonNegative(cr.revision, 'revision');
  if (cr.data === undefined || cr.data === null) errs.push(fieldErrors.required('data', 'data is mandatory'));
  return errs;
}

/** The controller of an object as upstream prints it (`statefulset.apps/web`), or <none>. */
function controllerOf(o: KubeObject): string {
  const ref = ((o.metadata?.ownerReferences ?? []) as Obj[]).find((r) => r.controller === true);
  if (!ref) return '<none>';
  const group = String(ref.apiVersion ?? '').includes('/') ? `.${String(ref.apiVersion).split('/')[0]}` : '';
  return `${String(ref.kind ?? '').toLowerCase()}${group}/${ref.name}`;
}

export const controllerRevisions: KindDefinition = defineKind({
  group: appsGroup, version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(apps('ControllerRevision'), kindSchema('An immutable snapshot of state data, kept by controllers for updates and rollbacks.', {
    data: p(2, { ...t.freeForm('The serialized state.'), protoMessage: 'rawExtension' }),
    revision: p(3, t.int64('Revision this snapshot stands for.'), 'always'),
  }, ['revision'])),
  strategy: {
    validate: validateRevision,
    validateUpdate(cr, old) {
      const errs = validateRevision(cr);
      if (!deepEqual(cr.data, old.data)) errs.push(fieldErrors.invalid('data', cr.data, 'field is immutable'));
      return errs;
    },
  },
  printerColumns: [
    nameColumn,
    { name: 'Controller', type: 'string', description: 'The object that owns the revision.', value: controllerOf },
    { name: 'Revision', type: 'integer', description: 'Revision number.', value: (cr) => cr.revision ?? 0 },
    ageColumn,
  ],
});
