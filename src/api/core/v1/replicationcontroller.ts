// ReplicationController and PodTemplate (core v1): a pod template, with
// upstream's defaults (selector and labels from the template, one replica),
// validation and columns; the controller's status and scale sub-resources.
// No controller makes pods from them here yet.

import { define, p, t } from '../../schema.js';
import { validateReplicationControllerStatusUpdate } from './statusvalidation.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { Time } from '../../meta/v1.js';
import { validateLabels } from '../../../machinery/objectmeta.js';
import { scaleOf, scales } from '../../autoscaling/v1/scale.js';
import { core, kindSchema, nameColumn, ageColumn } from './common.js';
import { mergedBy } from './containers.js';
import { PodTemplateSpec } from './podspec.js';
import { defaultPodSpec } from './pod.js';
import { validatePodSpec } from './podvalidation.js';

const s = t.string;
type Obj = Record<string, any>;

const RCStatus = define(core('ReplicationControllerStatus'), t.object({
  replicas: p(1, t.int32('Most recently observed number of replicas.'), 'always'),
  fullyLabeledReplicas: p(2, t.int32('Pods whose labels match the template\'s labels.')),
  readyReplicas: p(4, t.int32('Ready pods.')),
  availableReplicas: p(5, t.int32('Pods ready for at least minReadySeconds.')),
  observedGeneration: p(3, t.int64('Generation the status was computed for.')),
  conditions: p(6, mergedBy('type', t.ref(define(core('ReplicationControllerCondition'), t.object({
    type: p(1, s('Type of the condition.')), status: p(2, s('True, False or Unknown.')),
    lastTransitionTime: p(3, t.ref(Time, 'When the status last changed.'), 'always'),
    reason: p(4, s('Machine-readable reason.')), message: p(5, s('Human-readable details.')),
  }, 'A condition of a replication controller.', { required: ['type', 'status'] }))), 'Latest observations of the controller.')),
}, 'Most recently observed status of a replication controller.', { required: ['replicas'] }));

const schema = kindSchema('Keeps a number of pods made from a template running.', {
  spec: p(2, t.ref(define(core('ReplicationControllerSpec'), t.object({
    replicas: p(1, t.int32('Desired number of pods; 1 when unset.')),
    minReadySeconds: p(4, t.int32('Seconds a pod must be ready to count as available.')),
    selector: p(2, { ...t.map(s(), 'Labels of the pods the controller counts; the template\'s labels when unset.'), mapType: 'atomic' }),
    template: p(3, t.ref(PodTemplateSpec, 'The pods to make.')),
  }, 'Desired state of a replication controller.')), 'Desired state.'), 'always'),
  status: p(3, t.ref(RCStatus, 'Most recently observed status; read-only.'), 'always'),
});

/** The selector string of a label map, as upstream's SelectorFromSet prints it (keys sorted). */
export const selectorText = (labels: Obj | undefined) => Object.keys(labels ?? {}).sort().map((k) => `${k}=${labels![k]}`).join(',');

const matches = (selector: Obj, labels: Obj | undefined) => Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** A pod template's own checks (labels, spec), at `base`. */
export function validateTemplate(template: Obj | undefined, base: string): FieldError[] {
  if (!template) return [fieldErrors.required(base)];
  return [...validateLabels(template.metadata?.labels, `${base}.metadata.labels`), ...validatePodSpec(template.spec, `${base}.spec`)];
}

function validateRC(rc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = rc.spec ?? {};
  const selector: Obj = spec.selector ?? {};
  if (Object.keys(selector).length === 0) errs.push(fieldErrors.required('spec.selector'));
  else errs.push(...validateLabels(selector, 'spec.selector'));
  if (spec.replicas !== undefined && spec.replicas < 0) errs.push(fieldErrors.invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  if (spec.minReadySeconds !== undefined && spec.minReadySeconds < 0) errs.push(fieldErrors.invalid('spec.minReadySeconds', spec.minReadySeconds, 'must be greater than or equal to 0'));
  if (!spec.template) errs.push(fieldErrors.required('spec.template'));
  else {
    const labels = spec.template.metadata?.labels;
    if (Object.keys(selector).length && !matches(selector, labels)) {
      errs.push(fieldErrors.invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
    }
    errs.push(...validateTemplate(spec.template, 'spec.template'));
    const policy = spec.template.spec?.restartPolicy;
    if (policy && policy !== 'Always') errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', policy, ['Always']));
  }
  return errs;
}

const containersOf = (template: Obj | undefined): Obj[] => template?.spec?.containers ?? [];

export const replicationControllers = defineKind({
  group: '', version: 'v1', kind: 'ReplicationController', plural: 'replicationcontrollers', shortNames: ['rc'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('ReplicationController'), schema),
  tracksGeneration: true,
  subresources: {
    status: { ...statusSubresource, validateUpdate: validateReplicationControllerStatusUpdate },
    scale: {
      kind: scales,
      verbs: ['get', 'update', 'patch'],
      view: (rc) => scaleOf(rc, selectorText(rc.spec?.selector)),
      applyView: (rc, scale) => ({ ...rc, spec: { ...rc.spec, replicas: scale.spec?.replicas ?? 0 } }),
    },
  },
  strategy: {
    defaults(rc) {
      rc.spec ??= {};
      const labels = rc.spec.template?.metadata?.labels;
      if (labels && Object.keys(labels).length) {
        if (!rc.spec.selector || Object.keys(rc.spec.selector).length === 0) rc.spec.selector = { ...labels };
        rc.metadata ??= {};
        if (!rc.metadata.labels || Object.keys(rc.metadata.labels).length === 0) rc.metadata.labels = { ...labels };
      }
      rc.spec.replicas ??= 1;
      defaultPodSpec(rc.spec.template?.spec);
    },
    prepareForCreate(rc) {
      rc.status = { replicas: 0 };
    },
    validate: validateRC,
    validateUpdate: (rc) => validateRC(rc),
  },
  fieldSelectors: { 'status.replicas': (rc) => String(rc.status?.replicas ?? 0) },
  printerColumns: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Number of desired pods.', value: (rc) => rc.spec?.replicas ?? 0 },
    { name: 'Current', type: 'integer', description: 'Number of actual pods.', value: (rc) => rc.status?.replicas ?? 0 },
    { name: 'Ready', type: 'integer', description: 'Number of ready pods.', value: (rc) => rc.status?.readyReplicas ?? 0 },
    ageColumn,
    { name: 'Containers', type: 'string', priority: 1, description: 'Names of each container in the template.', value: (rc) => containersOf(rc.spec?.template).map((c) => c.name).join(',') },
    { name: 'Images', type: 'string', priority: 1, description: 'Images in the template.', value: (rc) => containersOf(rc.spec?.template).map((c) => c.image).join(',') },
    { name: 'Selector', type: 'string', priority: 1, description: 'Label selector of the pods the controller counts.', value: (rc) => selectorText(rc.spec?.selector) },
  ],
});

export const podTemplates = defineKind({
  group: '', version: 'v1', kind: 'PodTemplate', plural: 'podtemplates',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('PodTemplate'), kindSchema('A template of pods, for other objects to copy.', {
    template: p(2, t.ref(PodTemplateSpec, 'The pods\' metadata and spec.'), 'always'),
  })),
  strategy: {
    defaults: (pt) => defaultPodSpec(pt.template?.spec),
    validate: (pt) => validateTemplate(pt.template, 'template'),
    validateUpdate: (pt) => validateTemplate(pt.template, 'template'),
  },
  printerColumns: [
    { ...nameColumn, name: 'Template' },
    { name: 'Containers', type: 'string', description: 'Names of each container in the template.', value: (pt) => containersOf(pt.template).map((c) => c.name).join(',') },
    { name: 'Images', type: 'string', description: 'Images in the template.', value: (pt) => containersOf(pt.template).map((c) => c.image).join(',') },
    { name: 'Pod Labels', type: 'string', description: 'Labels of the pods.', value: (pt) => selectorText(pt.template?.metadata?.labels) },
  ],
});
