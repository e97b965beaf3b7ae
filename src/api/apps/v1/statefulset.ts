// apps/v1 StatefulSet: upstream 1.32's fields, defaults, validation (only
// replicas, ordinals, template, update strategy, history limit, claim
// retention and minReadySeconds may change) and columns; status and scale.

import { define, p, t } from '../../schema.js';
import { defineKind, type KindDefinition, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { LabelSelector } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { PodTemplateSpec } from '../../core/v1/podspec.js';
import { defaultPodSpec } from '../../core/v1/pod.js';
import { persistentVolumeClaims } from '../../core/v1/storage.js';
import { apps, appsGroup, conditionsOf, noActiveDeadline, nonNegative, templateColumns, validateIntOrPercent, validateSelectorAndTemplate } from './workload.js';
import { validateStatefulSetStatusUpdate } from './statusvalidation.js';
import { appsScale } from './deployment.js';

const s = t.string;
type Obj = Record<string, any>;

const StatefulSetSpec = define(apps('StatefulSetSpec'), t.object({
  replicas: p(1, t.int32('Desired number of pods; 1 when unset.')),
  selector: p(2, t.ref(LabelSelector, 'Label selector of the pods; must match the template\'s labels.')),
  template: p(3, t.ref(PodTemplateSpec, 'The pods to make.'), 'always'),
  volumeClaimTemplates: p(4, t.array(t.ref(persistentVolumeClaims.schema), 'Claims each pod is given, mounted by name.', { listType: 'atomic' })),
  serviceName: p(5, s('Service governing the set\'s network identity.', { default: '' })),
  podManagementPolicy: p(6, s('OrderedReady or Parallel: how pods are created and deleted; OrderedReady when unset.', { enum: ['OrderedReady', 'Parallel'] })),
  updateStrategy: p(7, t.ref(define(apps('StatefulSetUpdateStrategy'), t.object({
    type: p(1, s('RollingUpdate or OnDelete; RollingUpdate when unset.', { enum: ['OnDelete', 'RollingUpdate'] })),
    rollingUpdate: p(2, t.ref(define(apps('RollingUpdateStatefulSetStrategy'), t.object({
      partition: p(1, t.int32('Ordinal at and above which pods are updated; 0 when unset.')),
      maxUnavailable: p(2, t.intOrString('Pods (number or percent) that may be unavailable during the update.')),
    }, 'How a rolling update of a stateful set proceeds.')), 'Parameters of a rolling update.')),
  }, 'How pods of a stateful set are updated.')), 'How pods are updated.'), 'always'),
  revisionHistoryLimit: p(8, t.int32('Revisions kept in the history; 10 when unset.')),
  minReadySeconds: p(9, t.int32('Seconds a new pod must be ready to count as available.'), 'always'),
  persistentVolumeClaimRetentionPolicy: p(10, t.ref(define(apps('StatefulSetPersistentVolumeClaimRetentionPolicy'), t.object({
    whenDeleted: p(1, s('Retain or Delete: what happens to the claims when the set is deleted; Retain when unset.')),
    whenScaled: p(2, s('Retain or Delete: what happens to the claims when the set is scaled down; Retain when unset.')),
  }, 'The lifecycle of the claims made from volumeClaimTemplates.')), 'The lifecycle of the claims made from volumeClaimTemplates.')),
  ordinals: p(11, t.ref(define(apps('StatefulSetOrdinals'), t.object({
    start: p(1, { ...t.int32('First ordinal of the pods\' names.'), default: 0 }, 'always'),
  }, 'Numbering of the pods of a stateful set.')), 'Numbering of the pods.')),
}, 'Desired state of a stateful set.', { required: ['selector', 'template'] }));

const StatefulSetStatus = define(apps('StatefulSetStatus'), t.object({
  observedGeneration: p(1, t.int64('Generation the status was computed for.')),
  replicas: p(2, t.int32('Pods made by the controller.'), 'always'),
  readyReplicas: p(3, t.int32('Ready pods.'), 'always'),
  currentReplicas: p(4, t.int32('Pods at currentRevision.'), 'always'),
  updatedReplicas: p(5, t.int32('Pods at updateRevision.'), 'always'),
  currentRevision: p(6, s('Revision the pods below currentReplicas were made from.')),
  updateRevision: p(7, s('Revision the pods are being updated to.')),
  collisionCount: p(9, t.int32('Hash collisions met when naming revisions.')),
  conditions: p(10, conditionsOf(apps('StatefulSetCondition'), 'stateful set')),
  availableReplicas: p(11, { ...t.int32('Pods ready for at least minReadySeconds.'), default: 0 }, 'always'),
}, 'Most recently observed status of a stateful set.', { required: ['replicas'] }));

const retention = ['Retain', 'Delete'];

function validateStatefulSet(ss: KubeObject): FieldError[] {
  const spec: Obj = ss.spec ?? {};
  const errs: FieldError[] = [];
  const policy = spec.podManagementPolicy;
  if (!policy) errs.push(fieldErrors.required('spec.podManagementPolicy'));
  else if (policy !== 'OrderedReady' && policy !== 'Parallel') errs.push(fieldErrors.invalid('spec.podManagementPolicy', policy, 'must be \'OrderedReady\' or \'Parallel\''));
  const strategy: Obj = spec.updateStrategy ?? {};
  switch (strategy.type) {
    case undefined: case '': errs.push(fieldErrors.required('spec.updateStrategy')); break;
    case 'OnDelete':
      if (strategy.rollingUpdate) errs.push(fieldErrors.invalid('spec.updateStrategy.rollingUpdate', strategy.rollingUpdate, 'only allowed for updateStrategy \'RollingUpdate\''));
      break;
    case 'RollingUpdate':
      errs.push(...nonNegative(strategy.rollingUpdate?.partition, 'spec.updateStrategy.rollingUpdate.partition'));
      errs.push(...validateIntOrPercent(strategy.rollingUpdate?.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable', true));
      break;
    default: errs.push(fieldErrors.invalid('spec.updateStrategy', strategy, 'must be \'RollingUpdate\' or \'OnDelete\''));
  }
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const claims: Obj = spec.persistentVolumeClaimRetentionPolicy ?? {};
  for (const when of ['whenDeleted', 'whenScaled']) {
    const at = `spec.persistentVolumeClaimRetentionPolicy.${when}`;
    if (!claims[when]) errs.push(fieldErrors.required(at));
    else if (!retention.includes(claims[when])) errs.push(fieldErrors.notSupported(at, claims[when], retention));
  }
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'), ...nonNegative(spec.ordinals?.start, 'spec.ordinals.start'), ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateSelectorAndTemplate(spec, 'statefulset'), ...noActiveDeadline(spec, 'StatefulSet'));
  return errs;
}

/** The fields of a stateful set's spec an update may change. */
const mutable = ['replicas', 'ordinals', 'template', 'updateStrategy', 'minReadySeconds', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy'];

function validateStatefulSetUpdate(ss: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStatefulSet(ss);
  const rest = (spec: Obj | undefined) => Object.fromEntries(Object.entries(spec ?? {}).filter(([k]) => !mutable.includes(k)));
  if (!deepEqual(rest(ss.spec), rest(old.spec))) {
    errs.push(fieldErrors.forbidden('spec', 'updates to statefulset spec for fields other than \'replicas\', \'ordinals\', \'template\', \'updateStrategy\', \'revisionHistoryLimit\', \'persistentVolumeClaimRetentionPolicy\' and \'minReadySeconds\' are forbidden'));
  }
  return errs;
}

/**
 * rollingUpdate.maxUnavailable belongs to an alpha feature (MaxUnavailableStatefulSet),
 * off in 1.32: dropped, as upstream drops it, unless the stored object already had one.
 */
function dropMaxUnavailable(ss: KubeObject, old: KubeObject | undefined): void {
  const rollingUpdate = ss.spec?.updateStrategy?.rollingUpdate;
  if (rollingUpdate?.maxUnavailable !== undefined && old?.spec?.updateStrategy?.rollingUpdate?.maxUnavailable === undefined) delete rollingUpdate.maxUnavailable;
}

export const statefulSets: KindDefinition = defineKind({
  group: appsGroup, version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', shortNames: ['sts'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(apps('StatefulSet'), kindSchema('Pods with stable identities and storage, made from one template.', {
    spec: p(2, t.ref(StatefulSetSpec, 'Desired state.'), 'always'),
    status: p(3, t.ref(StatefulSetStatus, 'Most recently observed status; read-only.'), 'always'),
  })),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateStatefulSetStatusUpdate }, scale: appsScale() },
  strategy: {
    defaults(ss) {
      ss.spec ??= {};
      const spec = ss.spec;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= {};
      spec.updateStrategy.type ??= 'RollingUpdate';
      if (spec.updateStrategy.type === 'RollingUpdate') {
        spec.updateStrategy.rollingUpdate ??= {};
        spec.updateStrategy.rollingUpdate.partition ??= 0;
      }
      spec.persistentVolumeClaimRetentionPolicy ??= {};
      spec.persistentVolumeClaimRetentionPolicy.whenDeleted ??= 'Retain';
      spec.persistentVolumeClaimRetentionPolicy.whenScaled ??= 'Retain';
      spec.replicas ??= 1;
      spec.revisionHistoryLimit ??= 10;
      defaultPodSpec(spec.template?.spec);
      for (const claim of spec.volumeClaimTemplates ?? []) {
        claim.spec ??= {};
        claim.spec.volumeMode ??= 'Filesystem';
        claim.status ??= {};
        claim.status.phase ??= 'Pending';
      }
    },
    prepareForCreate(ss) {
      ss.status = { replicas: 0, availableReplicas: 0 };
      dropMaxUnavailable(ss, undefined);
    },
    prepareForUpdate: dropMaxUnavailable,
    validate: validateStatefulSet,
    validateUpdate: validateStatefulSetUpdate,
  },
  printerColumns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'Ready pods of the desired ones.', value: (ss) => `${ss.status?.readyReplicas ?? 0}/${ss.spec?.replicas ?? 0}` },
    ageColumn,
    ...templateColumns((ss) => ss.spec?.template),
  ],
});
