// autoscaling HorizontalPodAutoscaler, stored as v2 (as upstream) and served
// as v1 too (autoscaling/v1/horizontalpodautoscaler.ts converts through this
// shape). Upstream 1.32's fields, defaults, validation and columns; nothing
// scales anything here.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, p, t, type Schema } from '../../schema.js';
import { nonNegative } from '../../core/v1/statusvalidation.js';
import { defineKind, type KindDefinition, type KubeObject, type PrinterColumn, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isPathSegmentName } from '../../../machinery/validation.js';
import { LabelSelector, Time } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { mergedBy, Quantity } from '../../core/v1/containers.js';
import { hpaV1Version } from '../v1/horizontalpodautoscaler.js';
import { cpuUtilization, crossVersionReference } from '../common.js';

const s = t.string;
type Obj = Record<string, any>;

export const autoscalingGroup = 'autoscaling';
const v2 = (name: string) => `${definitionPrefix}.api.autoscaling.v2.${name}`;
const atomic = (items: Schema, description: string) => t.array(items, description, { listType: 'atomic' });

const CrossVersionObjectReference = crossVersionReference(v2('CrossVersionObjectReference'));

const MetricIdentifier = define(v2('MetricIdentifier'), t.object({
  name: p(1, s('Name of the metric.')),
  selector: p(2, t.ref(LabelSelector, 'Narrows the metric by its labels.')),
}, 'A metric by name and selector.', { required: ['name'] }));

const MetricTarget = define(v2('MetricTarget'), t.object({
  type: p(1, s('Utilization, Value or AverageValue.')),
  value: p(2, t.ref(Quantity, 'Target value of the metric.')),
  averageValue: p(3, t.ref(Quantity, 'Target value of the metric averaged over the pods.')),
  averageUtilization: p(4, t.int32('Target percent of the resource\'s request, averaged over the pods.')),
}, 'The target value of a metric.', { required: ['type'] }));

const MetricValueStatus = define(v2('MetricValueStatus'), t.object({
  value: p(1, t.ref(Quantity, 'Current value of the metric.')),
  averageValue: p(2, t.ref(Quantity, 'Current value averaged over the pods.')),
  averageUtilization: p(3, t.int32('Current percent of the resource\'s request, averaged over the pods.')),
}, 'The current value of a metric.'));

/** The five metric sources, as a spec (`target`) or a status (`current`) shape. */
function metricShapes(side: 'Source' | 'Status', valueField: 'target' | 'current', value: Schema): Record<string, Schema> {
  const v = p(2, t.ref(value, side === 'Source' ? 'The target value.' : 'The current value.'), 'always');
  return {
    object: t.ref(define(v2(`ObjectMetric${side}`), t.object(side === 'Source'
      ? { describedObject: p(1, t.ref(CrossVersionObjectReference, 'The object the metric describes.'), 'always'), target: v, metric: p(3, t.ref(MetricIdentifier, 'The metric.'), 'always') }
      : { metric: p(1, t.ref(MetricIdentifier, 'The metric.'), 'always'), current: v, describedObject: p(3, t.ref(CrossVersionObjectReference, 'The object the metric describes.'), 'always') },
    'A metric describing one object.', { required: side === 'Source' ? ['describedObject', 'target', 'metric'] : ['metric', 'current', 'describedObject'] })), 'A metric of one object.'),
    pods: t.ref(define(v2(`PodsMetric${side}`), t.object({ metric: p(1, t.ref(MetricIdentifier, 'The metric.'), 'always'), [valueField]: v },
      'A metric of each pod, averaged.', { required: ['metric', valueField] })), 'A metric of each pod, averaged.'),
    resource: t.ref(define(v2(`ResourceMetric${side}`), t.object({ name: p(1, s('Name of the resource (cpu, memory).')), [valueField]: v },
      'A resource of each pod, as requests know it.', { required: ['name', valueField] })), 'A resource of each pod.'),
    containerResource: t.ref(define(v2(`ContainerResourceMetric${side}`), t.object({ name: p(1, s('Name of the resource.')), [valueField]: v, container: p(3, s('Name of the container.')) },
      'A resource of one container of each pod.', { required: ['name', valueField, 'container'] })), 'A resource of one container of each pod.'),
    external: t.ref(define(v2(`ExternalMetric${side}`), t.object({ metric: p(1, t.ref(MetricIdentifier, 'The metric.'), 'always'), [valueField]: v },
      'A metric from outside the cluster.', { required: ['metric', valueField] })), 'A metric from outside the cluster.'),
  };
}

function metricUnion(name: string, side: 'Source' | 'Status', valueField: 'target' | 'current', value: Schema): Schema {
  const shapes = metricShapes(side, valueField, value);
  return define(name, t.object({
    type: p(1, s('ContainerResource, External, Object, Pods or Resource: which source is set.')),
    object: p(2, shapes.object!), pods: p(3, shapes.pods!), resource: p(4, shapes.resource!),
    containerResource: p(7, shapes.containerResource!), external: p(5, shapes.external!),
  }, side === 'Source' ? 'A metric to scale on.' : 'The last read state of a metric.', { required: ['type'] }));
}

const HPAScalingRules = define(v2('HPAScalingRules'), t.object({
  stabilizationWindowSeconds: p(3, t.int32('Seconds of past recommendations considered (0-3600).')),
  selectPolicy: p(1, s('Max, Min or Disabled: which policy applies.'), 'whenSet'),
  policies: p(2, atomic(t.ref(define(v2('HPAScalingPolicy'), t.object({
    type: p(1, s('Pods or Percent.')),
    value: p(2, t.int32('Amount of change the policy allows (above 0).'), 'always'),
    periodSeconds: p(3, t.int32('Window the value holds for (1-1800 seconds).'), 'always'),
  }, 'One policy of scaling.', { required: ['type', 'value', 'periodSeconds'] }))), 'Policies of scaling.')),
}, 'How fast scaling may go in one direction.'));

const schema = kindSchema('Scales a scalable object by its metrics.', {
  spec: p(2, t.ref(define(v2('HorizontalPodAutoscalerSpec'), t.object({
    scaleTargetRef: p(1, t.ref(CrossVersionObjectReference, 'The object to scale.'), 'always'),
    minReplicas: p(2, t.int32('Fewest replicas; 1 when unset.')),
    maxReplicas: p(3, t.int32('Most replicas.'), 'always'),
    metrics: p(4, atomic(t.ref(metricUnion(v2('MetricSpec'), 'Source', 'target', MetricTarget)), 'Metrics to scale on; CPU at 80% when unset.')),
    behavior: p(5, t.ref(define(v2('HorizontalPodAutoscalerBehavior'), t.object({
      scaleUp: p(1, t.ref(HPAScalingRules, 'Rules of scaling up.')),
      scaleDown: p(2, t.ref(HPAScalingRules, 'Rules of scaling down.')),
    }, 'How fast scaling may go.')), 'How fast scaling may go.')),
  }, 'Desired state of an autoscaler.', { required: ['scaleTargetRef', 'maxReplicas'] })), 'Desired state.'), 'always'),
  status: p(3, t.ref(define(v2('HorizontalPodAutoscalerStatus'), t.object({
    observedGeneration: p(1, t.int64('Generation the status was computed for.')),
    lastScaleTime: p(2, t.ref(Time, 'When the autoscaler last scaled.')),
    currentReplicas: p(3, t.int32('Replicas now.'), 'always'),
    desiredReplicas: p(4, t.int32('Replicas wanted.'), 'always'),
    currentMetrics: p(5, atomic(t.ref(metricUnion(v2('MetricStatus'), 'Status', 'current', MetricValueStatus)), 'Last read values of the metrics.')),
    conditions: p(6, mergedBy('type', t.ref(define(v2('HorizontalPodAutoscalerCondition'), t.object({
      type: p(1, s('Type of the condition.')), status: p(2, s('True, False or Unknown.')),
      lastTransitionTime: p(3, t.ref(Time, 'When the status last changed.'), 'always'),
      reason: p(4, s('Machine-readable reason.')), message: p(5, s('Human-readable details.')),
    }, 'A condition of an autoscaler.', { required: ['type', 'status'] }))), 'Latest observations of the autoscaler.')),
  }, 'Most recently observed status of an autoscaler.', { required: ['desiredReplicas'] })), 'Most recently observed status; read-only.'), 'always'),
});

const scaleUpDefaults = (): Obj => ({ stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] });
const scaleDownDefaults = (): Obj => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

function defaultRules(rules: Obj | undefined, defaults: Obj): Obj {
  for (const key of ['selectPolicy', 'stabilizationWindowSeconds', 'policies']) if (rules?.[key] !== undefined) defaults[key] = rules[key];
  return defaults;
}

const sources: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' };

function validateTarget(target: Obj | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = target?.type;
  if (!type) errs.push(fieldErrors.required(`${at}.type`, 'must specify a metric target type'));
  else if (!['Utilization', 'Value', 'AverageValue'].includes(type)) errs.push(fieldErrors.notSupported(`${at}.type`, type, ['Utilization', 'Value', 'AverageValue']));
  if (target?.averageUtilization !== undefined && target.averageUtilization < 1) errs.push(fieldErrors.invalid(`${at}.averageUtilization`, target.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateMetric(metric: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = metric.type;
  if (!type) errs.push(fieldErrors.required(`${at}.type`, 'must specify a metric source type'));
  if (!Object.hasOwn(sources, type ?? '')) errs.push(fieldErrors.notSupported(`${at}.type`, type ?? '', Object.keys(sources)));
  const expected = Object.hasOwn(sources, type ?? '') ? sources[type] : undefined;
  if (expected && !metric[expected]) errs.push(fieldErrors.required(`${at}.${expected}`, 'must populate information for the given metric source'));
  const present = Object.values(sources).filter((f) => metric[f]);
  if (present.length > 1) for (const f of present) if (f !== expected) errs.push(fieldErrors.forbidden(`${at}.${f}`, 'must populate the given metric source only'));
  for (const f of ['resource', 'containerResource']) {
    const src = metric[f];
    if (!src) continue;
    if (!src.name) errs.push(fieldErrors.required(`${at}.${f}.name`, 'must specify a resource name'));
    if (src.target?.averageValue === undefined && src.target?.averageUtilization === undefined) {
      errs.push(fieldErrors.required(`${at}.${f}.target.averageUtilization`, 'must set either a target raw value or a target utilization'));
    }
    if (src.target?.averageValue !== undefined && src.target?.averageUtilization !== undefined) {
      errs.push(fieldErrors.forbidden(`${at}.${f}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
    }
  }
  for (const f of ['object', 'pods', 'external']) {
    const src = metric[f];
    if (!src) continue;
    errs.push(...validateMetricIdentifier(src.metric, `${at}.${f}.metric`));
    const target: Obj = src.target ?? {};
    const value = `${at}.${f}.target.value`;
    const average = `${at}.${f}.target.averageValue`;
    if (f === 'object') {
      errs.push(...validateReference(src.describedObject, `${at}.object.describedObject`));
      if (target.value === undefined && target.averageValue === undefined) errs.push(fieldErrors.required(average, 'must set either a target value or averageValue'));
    } else if (f === 'pods') {
      if (target.averageValue === undefined) errs.push(fieldErrors.required(average, 'must specify a positive target averageValue'));
    } else if (target.value === undefined && target.averageValue === undefined) {
      errs.push(fieldErrors.required(average, 'must set either a target value for metric or a per-pod target'));
    } else if (target.value !== undefined && target.averageValue !== undefined) {
      errs.push(fieldErrors.forbidden(value, 'may not set both a target value for metric and a per-pod target'));
    }
  }
  for (const f of Object.values(sources)) if (metric[f]) errs.push(...validateTarget(metric[f].target, `${at}.${f}.target`));
  return errs;
}

function validateMetricIdentifier(id: Obj | undefined, at: string): FieldError[] {
  if (!id?.name) return [fieldErrors.required(`${at}.name`, 'must specify a metric name')];
  return checkName(isPathSegmentName, `${at}.name`, id.name);
}

/** A CrossVersionObjectReference: kind and name required, each a valid path segment. */
function validateReference(ref: Obj | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['kind', 'name']) {
    if (!ref?.[f]) errs.push(fieldErrors.required(`${at}.${f}`));
    else errs.push(...checkName(isPathSegmentName, `${at}.${f}`, ref[f]));
  }
  return errs;
}

function validateRules(rules: Obj | undefined, at: string): FieldError[] {
  if (!rules) return [];
  const errs: FieldError[] = [];
  const window = rules.stabilizationWindowSeconds;
  if (window !== undefined && window < 0) errs.push(fieldErrors.invalid(`${at}.stabilizationWindowSeconds`, window, 'must be greater than or equal to zero'));
  if (window !== undefined && window > 3600) errs.push(fieldErrors.invalid(`${at}.stabilizationWindowSeconds`, window, 'must be less than or equal to 3600'));
  if (rules.selectPolicy !== undefined && !['Max', 'Min', 'Disabled'].includes(rules.selectPolicy)) errs.push(fieldErrors.notSupported(`${at}.selectPolicy`, rules.selectPolicy, ['Disabled', 'Max', 'Min']));
  const policies: Obj[] = rules.policies ?? [];
  if (policies.length === 0) errs.push(fieldErrors.required(`${at}.policies`, 'must specify at least one Policy'));
  policies.forEach((policy, i) => {
    const pat = `${at}.policies[${i}]`;
    if (!['Pods', 'Percent'].includes(policy.type)) errs.push(fieldErrors.notSupported(`${pat}.type`, policy.type ?? '', ['Percent', 'Pods']));
    if (!(policy.value > 0)) errs.push(fieldErrors.invalid(`${pat}.value`, policy.value ?? 0, 'must be greater than zero'));
    if (!(policy.periodSeconds > 0)) errs.push(fieldErrors.invalid(`${pat}.periodSeconds`, policy.periodSeconds ?? 0, 'must be greater than zero'));
    else if (policy.periodSeconds > 1800) errs.push(fieldErrors.invalid(`${pat}.periodSeconds`, policy.periodSeconds, 'must be less than or equal to 1800'));
  });
  return errs;
}

function validateHPA(hpa: KubeObject): FieldError[] {
  const spec: Obj = hpa.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.minReplicas !== undefined && spec.minReplicas < 1) errs.push(fieldErrors.invalid('spec.minReplicas', spec.minReplicas, 'must be greater than or equal to 1'));
  const max = spec.maxReplicas ?? 0;
  if (max < 1) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (spec.minReplicas !== undefined && max < spec.minReplicas) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateReference(spec.scaleTargetRef, 'spec.scaleTargetRef'));
  ((spec.metrics ?? []) as Obj[]).forEach((m, i) => errs.push(...validateMetric(m, `spec.metrics[${i}]`)));
  errs.push(...validateRules(spec.behavior?.scaleUp, 'spec.behavior.scaleUp'), ...validateRules(spec.behavior?.scaleDown, 'spec.behavior.scaleDown'));
  return errs;
}

/** One metric's "current/target" cell, as upstream's formatHPAMetrics writes it. */
function metricText(spec: Obj, status: Obj | undefined): string {
  const unknown = '<unknown>';
  const valueOrAverage = (src: Obj | undefined, current: Obj | undefined) => (src?.target?.averageValue !== undefined
    ? `${current?.current?.averageValue ?? unknown}/${src.target.averageValue} (avg)` : `${current?.current?.value ?? unknown}/${src?.target?.value}`);
  switch (spec.type) {
    case 'External': return valueOrAverage(spec.external, status?.external);
    case 'Object': return valueOrAverage(spec.object, status?.object);
    case 'Pods': return `${status?.pods?.current?.averageValue ?? unknown}/${spec.pods?.target?.averageValue}`;
    case 'Resource': case 'ContainerResource': {
      const src = spec.type === 'Resource' ? spec.resource : spec.containerResource;
      const cur = spec.type === 'Resource' ? status?.resource : status?.containerResource;
      if (src?.target?.averageValue !== undefined) return `${src.name}: ${cur?.current?.averageValue ?? unknown}/${src.target.averageValue}`;
      const current = cur?.current?.averageUtilization !== undefined ? `${cur.current.averageUtilization}%` : unknown;
      const target = src?.target?.averageUtilization !== undefined ? `${src.target.averageUtilization}%` : '<auto>';
      return `${src?.name}: ${current}/${target}`;
    }
    default: return '<unknown type>';
  }
}

function targetsText(hpa: KubeObject): string {
  const specs: Obj[] = hpa.spec?.metrics ?? [];
  if (specs.length === 0) return '<none>';
  const statuses: Obj[] = hpa.status?.currentMetrics ?? [];
  const cells = specs.map((m, i) => metricText(m, statuses[i]));
  return cells.length > 2 ? `${cells.slice(0, 2).join(', ')} + ${cells.length - 2} more...` : cells.join(', ');
}

export const hpaColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'Reference', type: 'string', description: 'The object scaled.', value: (h) => `${h.spec?.scaleTargetRef?.kind}/${h.spec?.scaleTargetRef?.name}` },
  { name: 'Targets', type: 'string', description: 'Current and target values of the metrics.', value: targetsText },
  { name: 'MinPods', type: 'string', description: 'Fewest replicas.', value: (h) => (h.spec?.minReplicas === undefined ? '<unset>' : String(h.spec.minReplicas)) },
  { name: 'MaxPods', type: 'integer', description: 'Most replicas.', value: (h) => h.spec?.maxReplicas ?? 0 },
  { name: 'Replicas', type: 'integer', description: 'Replicas now.', value: (h) => h.status?.currentReplicas ?? 0 },
  ageColumn,
];

export const horizontalPodAutoscalers: KindDefinition = defineKind({
  group: autoscalingGroup, version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', shortNames: ['hpa'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(v2('HorizontalPodAutoscaler'), schema),
  tracksGeneration: true,
  // Upstream's ValidateHorizontalPodAutoscalerStatusUpdate: the two replica counts are not negative.
  subresources: { status: { ...statusSubresource, validateUpdate: (hpa) => nonNegative(hpa.status ?? {}, 'status', ['currentReplicas', 'desiredReplicas']) } },
  strategy: {
    defaults(hpa) {
      const spec = (hpa.spec ??= {});
      spec.minReplicas ??= 1;
      if (!spec.metrics || spec.metrics.length === 0) spec.metrics = [cpuUtilization(80)];
      if (spec.behavior) {
        spec.behavior.scaleUp = defaultRules(spec.behavior.scaleUp, scaleUpDefaults());
        spec.behavior.scaleDown = defaultRules(spec.behavior.scaleDown, scaleDownDefaults());
      }
    },
    prepareForCreate(hpa) {
      hpa.status = { desiredReplicas: 0 };
    },
    validate: validateHPA,
    validateUpdate: (hpa) => validateHPA(hpa),
  },
  printerColumns: hpaColumns,
  otherVersions: [hpaV1Version()],
});
