// autoscaling/v1 HorizontalPodAutoscaler: a served version of the v2 kind
// (autoscaling/v2/horizontalpodautoscaler.ts), converted through it as
// upstream converts: v1 says only "CPU utilization", so every other metric,
// the current metrics, the conditions and the behavior ride in annotations
// and come back from them unchanged. The annotations hold v2's JSON shapes
// (upstream writes its older v2beta1-like shapes there).

import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { ownValue } from '../../../machinery/ownkeys.js';
import { define, p, t } from '../../schema.js';
import type { KubeObject, VersionDeclaration } from '../../kind.js';
import { Time } from '../../meta/v1.js';
import { kindSchema } from '../../core/v1/common.js';
import { crossVersionReference, cpuUtilization } from '../common.js';

type Obj = Record<string, any>;
const v1 = (name: string) => `${definitionPrefix}.api.autoscaling.v1.${name}`;

/** The annotations that keep what v1 cannot say, by what they keep. */
export const hpaAnnotations = {
  metrics: `${vocabulary.autoscalingAnnotationPrefix}metrics`,
  currentMetrics: `${vocabulary.autoscalingAnnotationPrefix}current-metrics`,
  conditions: `${vocabulary.autoscalingAnnotationPrefix}conditions`,
  behavior: `${vocabulary.autoscalingAnnotationPrefix}behavior`,
} as const;

const schema = define(v1('HorizontalPodAutoscaler'), kindSchema('Scales a scalable object by its pods\' CPU utilization.', {
  spec: p(2, t.ref(define(v1('HorizontalPodAutoscalerSpec'), t.object({
    scaleTargetRef: p(1, t.ref(crossVersionReference(v1('CrossVersionObjectReference')), 'The object to scale.'), 'always'),
    minReplicas: p(2, t.int32('Fewest replicas; 1 when unset.')),
    maxReplicas: p(3, t.int32('Most replicas.'), 'always'),
    targetCPUUtilizationPercentage: p(4, t.int32('Target average CPU utilization, in percent of the requests; 80 when unset.')),
  }, 'Desired state of an autoscaler.', { required: ['scaleTargetRef', 'maxReplicas'] })), 'Desired state.'), 'always'),
  status: p(3, t.ref(define(v1('HorizontalPodAutoscalerStatus'), t.object({
    observedGeneration: p(1, t.int64('Generation the status was computed for.')),
    lastScaleTime: p(2, t.ref(Time, 'When the autoscaler last scaled.')),
    currentReplicas: p(3, t.int32('Replicas now.'), 'always'),
    desiredReplicas: p(4, t.int32('Replicas wanted.'), 'always'),
    currentCPUUtilizationPercentage: p(5, t.int32('Current average CPU utilization, in percent of the requests.')),
  }, 'Most recently observed status of an autoscaler.', { required: ['currentReplicas', 'desiredReplicas'] })), 'Most recently observed status; read-only.'), 'always'),
}));

const isCpuUtilization = (m: Obj) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.target?.averageUtilization !== undefined;
const cpuCurrent = (m: Obj) => (m.type === 'Resource' && m.resource?.name === 'cpu' ? m.resource?.current?.averageUtilization : undefined);

function withAnnotations(meta: Obj | undefined, set: Record<string, unknown>): Obj {
  const annotations: Obj = { ...(meta?.annotations ?? {}) };
  for (const [key, value] of Object.entries(set)) {
    if (value === undefined) delete annotations[key];
    else annotations[key] = JSON.stringify(value);
  }
  const out = { ...meta };
  if (Object.keys(annotations).length) out.annotations = annotations;
  else delete out.annotations;
  return out;
}

/** A stored (v2) autoscaler as v1 shows it. */
function toV1(hpa: KubeObject): KubeObject {
  const spec: Obj = hpa.spec ?? {};
  const status: Obj | undefined = hpa.status;
  const metrics: Obj[] = spec.metrics ?? [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => !isCpuUtilization(m));
  const current: Obj[] = status?.currentMetrics ?? [];
  const metadata = withAnnotations(hpa.metadata, {
    [hpaAnnotations.metrics]: others.length ? others : undefined,
    [hpaAnnotations.currentMetrics]: current.length ? current : undefined,
    [hpaAnnotations.conditions]: status?.conditions?.length ? status.conditions : undefined,
    [hpaAnnotations.behavior]: spec.behavior,
  });
  const { metrics: _m, behavior: _b, ...specRest } = spec;
  const out: KubeObject = { ...hpa, apiVersion: 'autoscaling/v1', metadata, spec: specRest };
  if (cpu) out.spec!.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;
  if (status) {
    const { currentMetrics: _c, conditions: _k, ...statusRest } = status;
    out.status = { ...statusRest, currentReplicas: status.currentReplicas ?? 0 };
    const cpuNow = current.map(cpuCurrent).find((v) => v !== undefined);
    if (cpuNow !== undefined) out.status.currentCPUUtilizationPercentage = cpuNow;
  }
  return out;
}

function fromAnnotation(meta: Obj | undefined, key: string): any {
  const text = ownValue(meta?.annotations ?? {}, key);
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // a broken annotation is dropped, as upstream drops one it cannot read
  }
}

/** A v1 autoscaler in the stored (v2) shape. */
function toV2(hpa: KubeObject): KubeObject {
  const meta = hpa.metadata;
  const others = fromAnnotation(meta, hpaAnnotations.metrics);
  const current = fromAnnotation(meta, hpaAnnotations.currentMetrics);
  const conditions = fromAnnotation(meta, hpaAnnotations.conditions);
  const behavior = fromAnnotation(meta, hpaAnnotations.behavior);
  const { targetCPUUtilizationPercentage: cpu, ...specRest } = (hpa.spec ?? {}) as Obj;
  const metrics: Obj[] = [...(Array.isArray(others) ? others : [])];
  if (cpu !== undefined) metrics.push(cpuUtilization(cpu));
  const spec: Obj = { ...specRest };
  if (metrics.length) spec.metrics = metrics;
  if (behavior !== undefined) spec.behavior = behavior;
  const out: KubeObject = {
    ...hpa, apiVersion: 'autoscaling/v2',
    metadata: withAnnotations(meta, Object.fromEntries(Object.values(hpaAnnotations).map((k) => [k, undefined]))),
    spec,
  };
  if (hpa.status) {
    const { currentCPUUtilizationPercentage: cpuNow, ...statusRest } = hpa.status as Obj;
    const status: Obj = { ...statusRest };
    if (Array.isArray(current)) status.currentMetrics = current;
    else if (cpuNow !== undefined) status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cpuNow } } }];
    if (Array.isArray(conditions)) status.conditions = conditions;
    out.status = status;
  }
  return out;
}

/** autoscaling/v1, served beside the stored v2. */
export function hpaV1Version(): VersionDeclaration {
  return { name: 'v1', schema, toStored: toV2, fromStored: toV1 };
}
