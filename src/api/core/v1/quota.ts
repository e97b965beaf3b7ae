// LimitRange and ResourceQuota (core v1): the policy objects the admission
// plugins of the plugins issue enforce; here their fields, defaults,
// validation and columns, and the quota's status part.

import { define, p, t } from '../../schema.js';
import { validateResourceQuotaStatusUpdate } from './statusvalidation.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { fieldPath } from '../../../machinery/validation.js';
import { core, kindSchema, nameColumn, ageColumn } from './common.js';
import { resourceList } from './containers.js';
import { validateResourceList } from './podvalidation.js';

const s = t.string;
type Obj = Record<string, any>;

function validateLimitRange(lr: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  ((lr.spec?.limits ?? []) as Obj[]).forEach((item, i) => {
    const at = fieldPath('spec.limits', i);
    if (!item.type) errs.push(fieldErrors.required(`${at}.type`));
    for (const key of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) errs.push(...validateResourceList(item[key], `${at}.${key}`).errs);
    if (item.type === 'Pod' && item.default) errs.push(fieldErrors.forbidden(`${at}.default`, 'may not be specified when `type` is \'Pod\''));
    if (item.type === 'Pod' && item.defaultRequest) errs.push(fieldErrors.forbidden(`${at}.defaultRequest`, 'may not be specified when `type` is \'Pod\''));
    const min = validateResourceList(item.min, '').parsed;
    const max = validateResourceList(item.max, '').parsed;
    for (const [name, lo] of min) {
      const hi = max.get(name);
      if (hi && lo.nanos > hi.nanos) errs.push(fieldErrors.invalid(`${at}.min[${name}]`, item.min[name], `min value ${item.min[name]} is greater than max value ${item.max[name]}`));
    }
  });
  return errs;
}

/**
 * A Container item's defaults as upstream fills them: the default limit from
 * max, the default request from the default limit, else from min.
 */
function defaultLimitRange(lr: KubeObject): void {
  for (const item of (Array.isArray(lr.spec?.limits) ? lr.spec.limits : []) as Obj[]) {
    if (!item || typeof item !== 'object' || item.type !== 'Container') continue;
    const fill = (into: 'default' | 'defaultRequest', from: Obj | undefined) => {
      for (const [name, value] of Object.entries(from ?? {})) {
        const target = (item[into] && typeof item[into] === 'object') ? item[into] as Obj : (item[into] = {});
        if (!Object.prototype.hasOwnProperty.call(target, name)) target[name] = value;
      }
    };
    fill('default', item.max);
    fill('defaultRequest', item.default);
    fill('defaultRequest', item.min);
  }
}

export const limitRanges = defineKind({
  group: '', version: 'v1', kind: 'LimitRange', plural: 'limitranges', shortNames: ['limits'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('LimitRange'), kindSchema('Limits on the resources of the objects of one kind in a namespace.', {
    spec: p(2, t.ref(define(core('LimitRangeSpec'), t.object({
      limits: p(1, t.array(t.ref(define(core('LimitRangeItem'), t.object({
        type: p(1, s('Pod, Container or PersistentVolumeClaim.')),
        max: p(2, resourceList('Most of each resource an object may have.')),
        min: p(3, resourceList('Least of each resource an object must have.')),
        default: p(4, resourceList('Limits given to containers that set none.')),
        defaultRequest: p(5, resourceList('Requests given to containers that set none.')),
        maxLimitRequestRatio: p(6, resourceList('Largest limit/request ratio per resource.')),
      }, 'Limits for one kind of object.', { required: ['type'] }))), 'Limits, by kind of object.', { listType: 'atomic' })),
    }, 'The limits of a LimitRange.', { required: ['limits'] })), 'The limits.'), 'always'),
  })),
  strategy: {
    defaults: defaultLimitRange,
    validate: validateLimitRange,
    validateUpdate: (lr) => validateLimitRange(lr),
  },
  printerColumns: [
    nameColumn,
    { name: 'Created At', type: 'date', description: 'When the object was created.', value: (lr) => lr.metadata?.creationTimestamp },
  ],
});

const scopes = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];

function validateQuota(q: KubeObject): FieldError[] {
  // Quota names are counts and caps (pods, requests.cpu, count/services), not compute resources.
  const errs = validateResourceList(q.spec?.hard, 'spec.hard', false).errs;
  ((q.spec?.scopes ?? []) as string[]).forEach((scope, i) => {
    if (!scopes.includes(scope)) errs.push(fieldErrors.notSupported(fieldPath('spec.scopes', i), scope, scopes));
  });
  return errs;
}

/** used/hard per resource, as upstream's printer writes the REQUEST and LIMIT columns. */
function usage(q: KubeObject, limits: boolean): string {
  const hard: Obj = q.status?.hard ?? q.spec?.hard ?? {};
  const used: Obj = q.status?.used ?? {};
  return Object.keys(hard).sort()
    .filter((name) => name.startsWith('limits.') === limits)
    .map((name) => `${name}: ${used[name] ?? '0'}/${hard[name]}`).join(', ');
}

export const resourceQuotas = defineKind({
  group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', shortNames: ['quota'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('ResourceQuota'), kindSchema('Caps the resources objects in a namespace may use together.', {
    spec: p(2, t.ref(define(core('ResourceQuotaSpec'), t.object({
      hard: p(1, resourceList('The caps, per resource name.')),
      scopes: p(2, t.array(s(), 'Scopes all of which the counted objects must match.', { listType: 'atomic' })),
      scopeSelector: p(3, t.ref(define(core('ScopeSelector'), t.object({
        matchExpressions: p(1, t.array(t.ref(define(core('ScopedResourceSelectorRequirement'), t.object({
          scopeName: p(1, s('The scope the requirement applies to.')), operator: p(2, s('In, NotIn, Exists or DoesNotExist.')),
          values: p(3, t.array(s(), 'Values for In and NotIn.', { listType: 'atomic' })),
        }, 'A scope, an operator and values.', { required: ['scopeName', 'operator'] }))), 'Requirements by scope.', { listType: 'atomic' })),
      }, 'Selects the counted objects by scope.', { mapType: 'atomic' })), 'Selects the counted objects by scope.')),
    }, 'The caps of a quota.')), 'The caps.'), 'always'),
    status: p(3, t.ref(define(core('ResourceQuotaStatus'), t.object({
      hard: p(1, resourceList('The caps in force.')),
      used: p(2, resourceList('Current use in the namespace.')),
    }, 'Use against the caps.')), 'Use against the caps; read-only.'), 'always'),
  })),
  subresources: { status: { ...statusSubresource, validateUpdate: validateResourceQuotaStatusUpdate } },
  strategy: {
    validate: validateQuota,
    validateUpdate: (q) => validateQuota(q),
  },
  printerColumns: [
    nameColumn,
    ageColumn,
    { name: 'Request', type: 'string', description: 'Use of the caps that are not limits.', value: (q) => usage(q, false) },
    { name: 'Limit', type: 'string', description: 'Use of the limits.* caps.', value: (q) => usage(q, true) },
  ],
});
