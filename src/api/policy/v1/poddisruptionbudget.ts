// policy/v1 PodDisruptionBudget (v1 selector semantics: an empty selector
// selects every pod of the namespace, a missing one none) and Eviction, the
// body of a pod's eviction sub-resource (registry/eviction.ts). The budget's
// status is the disruption controller's (controllers/disruption.ts).

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { Condition, DeleteOptions, LabelSelector, ObjectMeta, Time } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { nonNegative } from '../../core/v1/statusvalidation.js';
import { validateConditions } from '../../meta/conditions.js';
import { optionalEnum } from '../../sharedrules.js';

const policy = (name: string) => `${definitionPrefix}.api.policy.v1.${name}`;
export const policyGroup = 'policy';

const schema = kindSchema('Caps how many pods of a set may be down at once through voluntary disruptions (evictions).', {
  spec: p(2, t.ref(define(policy('PodDisruptionBudgetSpec'), t.object({
    minAvailable: p(1, t.intOrString('Pods (number or percent) that must stay available after an eviction.')),
    selector: p(2, t.ref(LabelSelector, 'The pods the budget covers; empty: every pod of the namespace.')),
    maxUnavailable: p(3, t.intOrString('Pods (number or percent) that may be unavailable after an eviction; excludes minAvailable.')),
    unhealthyPodEvictionPolicy: p(4, t.string('IfHealthyBudget or AlwaysAllow: when pods that are not ready may be evicted.', { enum: ['AlwaysAllow', 'IfHealthyBudget'] })),
  }, 'Desired state of a budget.')), 'Desired state.'), 'always'),
  status: p(3, t.ref(define(policy('PodDisruptionBudgetStatus'), t.object({
    observedGeneration: p(1, t.int64('Generation the status was computed for.')),
    disruptedPods: p(2, t.map(t.ref(Time), 'Pods whose eviction was allowed but not yet seen, with when.')),
    disruptionsAllowed: p(3, t.int32('Evictions allowed now.'), 'always'),
    currentHealthy: p(4, t.int32('Healthy pods now.'), 'always'),
    desiredHealthy: p(5, t.int32('Fewest healthy pods wanted.'), 'always'),
    expectedPods: p(6, t.int32('Pods the budget counts on.'), 'always'),
    conditions: p(7, t.array(t.ref(Condition), 'Conditions of the budget: DisruptionAllowed.', { patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type'] })),
  }, 'Observed state of a budget.', { required: ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] })), 'Observed state; read-only.'), 'always'),
});

const percent = /^(\d+)%$/;

function validateIntOrPercent(v: unknown, field: string): FieldError[] {
  if (v === undefined) return [];
  if (typeof v === 'number') return v < 0 ? [fieldErrors.invalid(field, v, 'must be greater than or equal to 0')] : [];
  const m = percent.exec(String(v));
  if (!m) return [fieldErrors.invalid(field, v, 'must be an integer or percentage (e.g \'5%\')')];
  return Number(m[1]) > 100 ? [fieldErrors.invalid(field, v, 'must not be greater than 100%')] : [];
}

function validateBudget(pdb: KubeObject): FieldError[] {
  const spec = pdb.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) errs.push(fieldErrors.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  errs.push(...validateIntOrPercent(spec.minAvailable, 'spec.minAvailable'), ...validateIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  errs.push(...optionalEnum(spec.unhealthyPodEvictionPolicy, 'spec.unhealthyPodEvictionPolicy', ['AlwaysAllow', 'IfHealthyBudget']));
  return errs;
}

/** Upstream's ValidatePodDisruptionBudgetStatusUpdate (v1): conditions, and counts that are never negative. */
function validateBudgetStatusUpdate(pdb: KubeObject): FieldError[] {
  const status = pdb.status ?? {};
  return [
    ...validateConditions(status.conditions, 'status.conditions'),
    ...nonNegative(status, 'status', ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']),
  ];
}

export const podDisruptionBudgets = defineKind({
  group: policyGroup, version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', shortNames: ['pdb'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(policy('PodDisruptionBudget'), schema),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateBudgetStatusUpdate } },
  strategy: {
    prepareForCreate(pdb) {
      pdb.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    },
    validate: validateBudget,
    validateUpdate: (pdb) => validateBudget(pdb),
  },
  printerColumns: [
    nameColumn,
    { name: 'Min Available', type: 'string', description: 'Pods that must stay available.', value: (pdb) => (pdb.spec?.minAvailable === undefined ? 'N/A' : String(pdb.spec.minAvailable)) },
    { name: 'Max Unavailable', type: 'string', description: 'Pods that may be unavailable.', value: (pdb) => (pdb.spec?.maxUnavailable === undefined ? 'N/A' : String(pdb.spec.maxUnavailable)) },
    { name: 'Allowed Disruptions', type: 'integer', description: 'Evictions allowed now.', value: (pdb) => pdb.status?.disruptionsAllowed ?? 0 },
    ageColumn,
  ],
});

export const evictions = defineKind({
  group: policyGroup, version: 'v1', kind: 'Eviction', plural: 'evictions',
  protobuf: true,
  scope: 'Namespaced',
  verbs: ['create'],
  schema: define(policy('Eviction'), t.object({
    apiVersion: t.string('Schema version of this representation.'),
    kind: t.string('REST resource this object represents.'),
    metadata: p(1, t.ref(ObjectMeta, 'The pod to evict: its name and namespace.'), 'always'),
    deleteOptions: p(2, t.ref(DeleteOptions, 'Options of the pod\'s deletion.')),
  }, 'Evicts a pod, as a delete that respects its disruption budget.')),
});

// ---- rules shared by the eviction sub-resource and the disruption controller ----

type Obj = Record<string, any>;

/** Whether a budget covers a pod (v1: an empty selector covers every pod of the namespace, a missing one none). */
export function budgetSelects(pdb: KubeObject, pod: KubeObject): boolean {
  if (pdb.metadata?.namespace !== pod.metadata?.namespace) return false;
  const selector: Obj | undefined = pdb.spec?.selector;
  if (!selector) return false;
  const labels: Record<string, string> = pod.metadata?.labels ?? {};
  for (const [k, v] of Object.entries((selector.matchLabels ?? {}) as Record<string, string>)) if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  for (const req of (selector.matchExpressions ?? []) as Obj[]) {
    const has = Object.hasOwn(labels, req.key);
    const values: string[] = req.values ?? [];
    const ok = req.operator === 'In' ? has && values.includes(labels[req.key]!)
      : req.operator === 'NotIn' ? !has || !values.includes(labels[req.key]!)
        : req.operator === 'Exists' ? has
          : req.operator === 'DoesNotExist' ? !has : false;
    if (!ok) return false;
  }
  return true;
}

/** A pod counts as healthy when its Ready condition is True and it is not being deleted. */
export function podHealthy(pod: KubeObject): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  return ((pod.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** An int-or-percent of `total`, rounded up as upstream's budget math does. */
export function scaledValue(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  return m ? Math.ceil((Number(m[1]) * total) / 100) : 0;
}

/** What a budget's DisruptionAllowed condition says: its status, reason and message. */
export type DisruptionVerdict = [status: 'True' | 'False', reason: string, message?: string];

/** The verdict for a count of allowed disruptions (upstream's UpdateDisruptionAllowedCondition). */
export const verdictFor = (allowed: number): DisruptionVerdict => (allowed > 0 ? ['True', 'SufficientPods'] : ['False', 'InsufficientPods']);

/**
 * Sets the budget status's DisruptionAllowed condition, as upstream's
 * SetStatusCondition: the transition time moves only when the status does.
 */
export function setDisruptionAllowed(status: Record<string, any>, generation: number | undefined, [condStatus, reason, message]: DisruptionVerdict, now: string): void {
  const previous = ((status.conditions ?? []) as Record<string, any>[]).find((c) => c.type === 'DisruptionAllowed');
  status.conditions = [{
    type: 'DisruptionAllowed', status: condStatus, observedGeneration: generation,
    lastTransitionTime: previous?.status === condStatus ? previous.lastTransitionTime : now,
    reason, message: message ?? '',
  }];
}
