// scheduling/v1 PriorityClass: a name for a pod priority. Names starting
// `system-` are reserved for the two system classes the server creates at
// start (apiserver/priorityclasses.ts); the value never changes.

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { definitionsOf, immutable } from '../../sharedrules.js';

const scheduling = definitionsOf('scheduling');

/** The classes upstream reserves (and creates at start), as upstream's SystemPriorityClasses. */
export const systemPriorityClasses: readonly { name: string; value: number; description: string }[] = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

export const systemPriorityClassPrefix = 'system-';
/** The highest value a class outside the reserved prefix may have. */
export const highestUserDefinablePriority = 1000000000;
const preemptionPolicies = ['Never', 'PreemptLowerPriority'];

const schema = kindSchema('A name for a pod priority: pods naming the class get its value.', {
  value: p(2, t.int32('The priority of pods of the class; higher runs first. At most 1000000000 outside `system-` classes.'), 'always'),
  globalDefault: p(3, t.bool('Whether pods naming no class get this one; at most one class may say so.'), 'always'),
  description: p(4, t.string('When to use the class.')),
  preemptionPolicy: p(5, t.string('Never or PreemptLowerPriority (when unset).', { enum: preemptionPolicies }), 'whenSet'),
}, ['value']);

/** Why `name` is not a known system class with this value and globalDefault (upstream's IsKnownSystemPriorityClass). */
function systemClassProblem(name: string, value: number, globalDefault: boolean): string | undefined {
  const known = systemPriorityClasses.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

function validatePriorityClass(pc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name: string = pc.metadata?.name ?? '';
  if (name.startsWith(systemPriorityClassPrefix)) {
    const problem = systemClassProblem(name, pc.value, pc.globalDefault === true);
    if (problem) errs.push(fieldErrors.forbidden('metadata.name', `priority class names with '${systemPriorityClassPrefix}' prefix are reserved for system use only. error: ${problem}`));
  } else if (pc.value > highestUserDefinablePriority) {
    errs.push(fieldErrors.forbidden('value', `maximum allowed value of a user defined priority is ${highestUserDefinablePriority}`));
  }
  if (pc.preemptionPolicy != null && !preemptionPolicies.includes(pc.preemptionPolicy)) errs.push(fieldErrors.notSupported('preemptionPolicy', pc.preemptionPolicy, preemptionPolicies));
  return errs;
}

export const priorityClasses = defineKind({
  group: vocabulary.schedulingGroup, version: 'v1', kind: 'PriorityClass', plural: 'priorityclasses', shortNames: ['pc'],
  protobuf: true,
  scope: 'Cluster',
  schema: define(scheduling('PriorityClass'), schema),
  strategy: {
    defaults(pc) {
      pc.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    validate: validatePriorityClass,
    validateUpdate(pc, old) {
      // Upstream checks only the name rules of metadata on update, then the immutable fields.
      const errs: FieldError[] = [];
      if (pc.value !== old.value) errs.push(fieldErrors.forbidden('value', 'may not be changed in an update.'));
      errs.push(...immutable(pc.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'));
      return errs;
    },
  },
  printerColumns: [
    nameColumn,
    { name: 'Value', type: 'integer', description: 'The priority of pods of the class.', value: (pc) => pc.value ?? 0 },
    { name: 'Global-Default', type: 'boolean', description: 'Whether pods naming no class get this one.', value: (pc) => pc.globalDefault === true },
    ageColumn,
    { name: 'PreemptionPolicy', type: 'string', description: 'Whether pods of the class preempt lower ones.', value: (pc) => pc.preemptionPolicy ?? '' },
  ],
});

export const schedulingV1Kinds = [priorityClasses];
