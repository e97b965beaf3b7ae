// apps/v1 Deployment and ReplicaSet: upstream 1.32's fields, defaults,
// validation and columns, with status and scale sub-resources. Nothing
// reconciles them here: a Deployment makes no ReplicaSet and a ReplicaSet no
// pods (no workload controllers run in this server).

import { define, p, t, type Schema } from '../../schema.js';
import { validateDeploymentStatusUpdate, validateReplicaSetStatusUpdate } from './statusvalidation.js';
import { defineKind, type KindDefinition, type KubeObject, statusSubresource, type ViewSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { LabelSelector, Time } from '../../meta/v1.js';
import { scaleOf, scales } from '../../autoscaling/v1/scale.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { mergedBy } from '../../core/v1/containers.js';
import { PodTemplateSpec } from '../../core/v1/podspec.js';
import { defaultPodSpec } from '../../core/v1/pod.js';
import {
  apps, appsGroup, conditionsOf, goIntOrString, immutableSelector, intOrPercentValue, noActiveDeadline, nonNegative,
  selectorString, templateColumns, validateIntOrPercent, validateSelectorAndTemplate,
} from './workload.js';

const s = t.string;
type Obj = Record<string, any>;

const RollingUpdateDeployment = define(apps('RollingUpdateDeployment'), t.object({
  maxUnavailable: p(1, t.intOrString('Pods (number or percent) that may be unavailable during the update; 25% when unset.')),
  maxSurge: p(2, t.intOrString('Pods (number or percent) that may be made above the desired number; 25% when unset.')),
}, 'How a rolling update proceeds.'));

const retainKeys = (target: Schema, description: string, strategy: string): Schema => ({ ...t.ref(target, description), patchStrategy: strategy });

const DeploymentSpec = define(apps('DeploymentSpec'), t.object({
  replicas: p(1, t.int32('Desired number of pods; 1 when unset.')),
  selector: p(2, t.ref(LabelSelector, 'Label selector of the pods; must match the template\'s labels; immutable.')),
  template: p(3, t.ref(PodTemplateSpec, 'The pods to make.'), 'always'),
  // retainKeys: an apply that changes the type drops the other type's parameters, as upstream's.
  strategy: p(4, retainKeys(define(apps('DeploymentStrategy'), t.object({
    type: p(1, s('Recreate or RollingUpdate; RollingUpdate when unset.', { enum: ['Recreate', 'RollingUpdate'] })),
    rollingUpdate: p(2, t.ref(RollingUpdateDeployment, 'Parameters of a rolling update; only with type RollingUpdate.')),
  }, 'How existing pods are replaced by new ones.')), 'The strategy of replacing pods: Recreate or RollingUpdate.', 'retainKeys'), 'always'),
  minReadySeconds: p(5, t.int32('Seconds a new pod must be ready to count as available.'), 'always'),
  revisionHistoryLimit: p(6, t.int32('Old ReplicaSets kept for rollback; 10 when unset.')),
  paused: p(7, t.bool('Whether the deployment is paused.'), 'always'),
  progressDeadlineSeconds: p(9, t.int32('Seconds a rollout may make no progress before it is reported failed; 600 when unset.')),
}, 'Desired state of a deployment.', { required: ['selector', 'template'] }));

const DeploymentStatus = define(apps('DeploymentStatus'), t.object({
  observedGeneration: p(1, t.int64('Generation the status was computed for.')),
  replicas: p(2, t.int32('Pods targeted by the deployment.'), 'always'),
  updatedReplicas: p(3, t.int32('Pods with the desired template.'), 'always'),
  readyReplicas: p(7, t.int32('Ready pods.'), 'always'),
  availableReplicas: p(4, t.int32('Pods ready for at least minReadySeconds.'), 'always'),
  unavailableReplicas: p(5, t.int32('Pods still needed for 100% availability.'), 'always'),
  conditions: p(6, mergedBy('type', t.ref(define(apps('DeploymentCondition'), t.object({
    type: p(1, s('Type of the condition.')), status: p(2, s('True, False or Unknown.')),
    lastUpdateTime: p(6, t.ref(Time, 'When the condition was last updated.'), 'always'),
    lastTransitionTime: p(7, t.ref(Time, 'When the status last changed.'), 'always'),
    reason: p(4, s('Machine-readable reason.')), message: p(5, s('Human-readable details.')),
  }, 'A condition of a deployment.', { required: ['type', 'status'] }))), 'Latest observations of the deployment.')),
  collisionCount: p(8, t.int32('Hash collisions met when naming the newest ReplicaSet.')),
}, 'Most recently observed status of a deployment.'));

/** The scale sub-resource of an apps kind: spec.replicas, status.replicas and the selector's text. */
export function appsScale(): ViewSubresource {
  return {
    kind: scales,
    verbs: ['get', 'update', 'patch'],
    view: (o) => scaleOf(o, selectorString(o.spec?.selector)),
    applyView: (o, scale) => ({ ...o, spec: { ...o.spec, replicas: scale.spec?.replicas ?? 0 } }),
  };
}

function validateStrategy(strategy: Obj | undefined): FieldError[] {
  const at = 'spec.strategy';
  switch (strategy?.type) {
    case 'Recreate':
      return strategy.rollingUpdate ? [fieldErrors.forbidden(`${at}.rollingUpdate`, 'may not be specified when strategy `type` is \'Recreate\'')] : [];
    case 'RollingUpdate': {
      const ru = strategy.rollingUpdate;
      if (!ru) return [fieldErrors.required(`${at}.rollingUpdate`, 'this should be defaulted and never be nil')];
      const errs = [...validateIntOrPercent(ru.maxUnavailable, `${at}.rollingUpdate.maxUnavailable`), ...validateIntOrPercent(ru.maxSurge, `${at}.rollingUpdate.maxSurge`)];
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(fieldErrors.invalid(`${at}.rollingUpdate.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
      }
      if (typeof ru.maxUnavailable === 'string' && intOrPercentValue(ru.maxUnavailable) > 100 && /^[0-9]+%$/.test(ru.maxUnavailable)) {
        errs.push(fieldErrors.invalid(`${at}.rollingUpdate.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'must not be greater than 100%'));
      }
      return errs;
    }
    default:
      return [fieldErrors.notSupported(at, strategy?.type ?? '', ['Recreate', 'RollingUpdate'])];
  }
}

function validateDeployment(d: KubeObject): FieldError[] {
  const spec: Obj = d.spec ?? {};
  const errs = [...nonNegative(spec.replicas, 'spec.replicas'), ...validateSelectorAndTemplate(spec, 'deployment'), ...noActiveDeadline(spec, 'ReplicaSet')];
  errs.push(...validateStrategy(spec.strategy), ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'), ...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (spec.progressDeadlineSeconds !== undefined) {
    errs.push(...nonNegative(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) errs.push(fieldErrors.invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  return errs;
}

const templateOf = (o: KubeObject) => o.spec?.template;
const selectorOf = (o: KubeObject) => o.spec?.selector;

export const deployments: KindDefinition = defineKind({
  group: appsGroup, version: 'v1', kind: 'Deployment', plural: 'deployments', shortNames: ['deploy'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(apps('Deployment'), kindSchema('Declarative updates of pods and ReplicaSets.', {
    spec: p(2, t.ref(DeploymentSpec, 'Desired state.'), 'always'),
    status: p(3, t.ref(DeploymentStatus, 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateDeploymentStatusUpdate }, scale: appsScale() },
  strategy: {
    defaults(d) {
      d.spec ??= {};
      const spec = d.spec;
      spec.replicas ??= 1;
      spec.strategy ??= {};
      spec.strategy.type ??= 'RollingUpdate';
      if (spec.strategy.type === 'RollingUpdate') {
        spec.strategy.rollingUpdate ??= {};
        spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
        spec.strategy.rollingUpdate.maxSurge ??= '25%';
      }
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      defaultPodSpec(spec.template?.spec);
    },
    prepareForCreate(d) {
      d.status = {};
    },
    validate: validateDeployment,
    validateUpdate: (d, old) => [...validateDeployment(d), ...immutableSelector(d, old)],
  },
  printerColumns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'Ready pods of the desired ones.', value: (d) => `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}` },
    { name: 'Up-to-date', type: 'integer', description: 'Pods with the desired template.', value: (d) => d.status?.updatedReplicas ?? 0 },
    { name: 'Available', type: 'integer', description: 'Pods available to users.', value: (d) => d.status?.availableReplicas ?? 0 },
    ageColumn,
    ...templateColumns(templateOf, selectorOf),
  ],
});

const ReplicaSetStatus = define(apps('ReplicaSetStatus'), t.object({
  replicas: p(1, t.int32('Most recently observed number of replicas.'), 'always'),
  fullyLabeledReplicas: p(2, t.int32('Pods whose labels match the template\'s labels.')),
  readyReplicas: p(4, t.int32('Ready pods.')),
  availableReplicas: p(5, t.int32('Pods ready for at least minReadySeconds.')),
  observedGeneration: p(3, t.int64('Generation the status was computed for.')),
  conditions: p(6, conditionsOf(apps('ReplicaSetCondition'), 'replica set')),
}, 'Most recently observed status of a replica set.', { required: ['replicas'] }));

function validateReplicaSet(rs: KubeObject): FieldError[] {
  const spec: Obj = rs.spec ?? {};
  return [
    ...nonNegative(spec.replicas, 'spec.replicas'), ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'),
    // Upstream names deployments in this message for replica sets too.
    ...validateSelectorAndTemplate(spec, 'deployment'), ...noActiveDeadline(spec, 'ReplicaSet'),
  ];
}

export const replicaSets: KindDefinition = defineKind({
  group: appsGroup, version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', shortNames: ['rs'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(apps('ReplicaSet'), kindSchema('Keeps a number of pods made from a template running.', {
    spec: p(2, t.ref(define(apps('ReplicaSetSpec'), t.object({
      replicas: p(1, t.int32('Desired number of pods; 1 when unset.')),
      minReadySeconds: p(4, t.int32('Seconds a pod must be ready to count as available.'), 'always'),
      selector: p(2, t.ref(LabelSelector, 'Label selector of the pods; must match the template\'s labels; immutable.')),
      template: p(3, t.ref(PodTemplateSpec, 'The pods to make.'), 'always'),
    }, 'Desired state of a replica set.', { required: ['selector'] })), 'Desired state.'), 'always'),
    status: p(3, t.ref(ReplicaSetStatus, 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateReplicaSetStatusUpdate }, scale: appsScale() },
  strategy: {
    defaults(rs) {
      rs.spec ??= {};
      rs.spec.replicas ??= 1;
      defaultPodSpec(rs.spec.template?.spec);
    },
    prepareForCreate(rs) {
      rs.status = { replicas: 0 };
    },
    validate: validateReplicaSet,
    validateUpdate: (rs, old) => [...validateReplicaSet(rs), ...immutableSelector(rs, old)],
  },
  fieldSelectors: { 'status.replicas': (rs) => String(rs.status?.replicas ?? 0) },
  printerColumns: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Number of desired pods.', value: (rs) => rs.spec?.replicas ?? 0 },
    { name: 'Current', type: 'integer', description: 'Number of actual pods.', value: (rs) => rs.status?.replicas ?? 0 },
    { name: 'Ready', type: 'integer', description: 'Number of ready pods.', value: (rs) => rs.status?.readyReplicas ?? 0 },
    ageColumn,
    ...templateColumns(templateOf, selectorOf),
  ],
});
