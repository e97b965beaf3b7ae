// Types shared by the kinds of rbac.authorization/v1 (rules, subjects, role
// references) and their validation and defaults, as upstream's.

import { definitionPrefix, productGroupForUpstream, vocabulary } from '../../../machinery/vocabulary.js';
import { fieldErrors, type FieldError } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Subdomain, isPathSegmentName } from '../../../machinery/validation.js';
import { define, p, t } from '../../schema.js';
import type { KubeObject, PrinterColumn } from '../../kind.js';
import { ageColumn, nameColumn } from '../../core/v1/common.js';

export const rbac = (name: string) => `${definitionPrefix}.api.rbac.v1.${name}`;

/** Our RBAC group, also when a client names it by its upstream name (kubectl does in roleRef and subjects). */
export function isRbacGroup(group: unknown): boolean {
  return typeof group === 'string' && (group === vocabulary.rbacGroup || productGroupForUpstream(group) === vocabulary.rbacGroup);
}

const strings = (description: string) => t.array(t.string(), description, { listType: 'atomic' });

export const PolicyRule = define(rbac('PolicyRule'), t.object({
  verbs: p(1, strings('Verbs the rule allows (get, list, create, ..., or * for all).')),
  apiGroups: p(2, strings('API groups of the resources; "" is the core group, * all groups.')),
  resources: p(3, strings('Resources the rule applies to; * for all, resource/sub-resource for one sub-resource, */sub-resource for it on every resource.')),
  resourceNames: p(4, strings('Names of the objects the rule is limited to; empty for every object.')),
  nonResourceURLs: p(5, strings('Non-resource paths the rule allows (ClusterRoles only); a trailing * matches every path below.')),
}, 'One permission: verbs on resources (or on non-resource paths).', { required: ['verbs'] }));

export const Subject = define(rbac('Subject'), t.object({
  kind: p(1, t.string('User, Group or ServiceAccount.')),
  apiGroup: p(2, t.string('The RBAC group for User and Group, "" for ServiceAccount.')),
  name: p(3, t.string('Name of the user, group or service account.')),
  namespace: p(4, t.string('Namespace of a ServiceAccount; a RoleBinding\'s own namespace when empty.')),
}, 'Who a binding grants its role to.', { required: ['kind', 'name'], mapType: 'atomic' }));

export const RoleRef = define(rbac('RoleRef'), t.object({
  apiGroup: p(1, t.string('Group of the referenced role: the RBAC group.')),
  kind: p(2, t.string('Role or ClusterRole.')),
  name: p(3, t.string('Name of the referenced role.')),
}, 'The role a binding grants; it cannot change once set.', { required: ['apiGroup', 'kind', 'name'], mapType: 'atomic' }));

export const rulesField = (description: string) => p(2, t.array(t.ref(PolicyRule), description, { listType: 'atomic' }));
export const subjectsField = p(2, t.array(t.ref(Subject), 'The users, groups and service accounts the role is granted to.', { listType: 'atomic' }));
export const roleRefField = p(3, t.ref(RoleRef, 'The Role or ClusterRole granted; cannot be updated.'), 'always');

/** Rule errors as upstream's ValidatePolicyRule finds them. */
export function validateRules(rules: unknown, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  ((rules ?? []) as KubeObject[]).forEach((rule, i) => {
    const at = fieldPath('rules', i);
    const has = (f: string) => Array.isArray(rule[f]) && rule[f].length > 0;
    if (!has('verbs')) errs.push(fieldErrors.required(`${at}.verbs`, 'verbs must contain at least one value'));
    if (has('nonResourceURLs')) {
      if (namespaced) errs.push(fieldErrors.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (has('apiGroups') || has('resources') || has('resourceNames')) {
        errs.push(fieldErrors.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (!has('apiGroups')) errs.push(fieldErrors.required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!has('resources')) errs.push(fieldErrors.required(`${at}.resources`, 'resource rules must supply at least one resource'));
  });
  return errs;
}

/** roleRef and subject errors of a binding (RoleBinding: `namespaced`), as upstream's ValidateRoleBinding. */
export function validateBinding(binding: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = binding.roleRef ?? {};
  if (!isRbacGroup(ref.apiGroup)) errs.push(fieldErrors.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [vocabulary.rbacGroup]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind)) errs.push(fieldErrors.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldErrors.required('roleRef.name'));
  else errs.push(...checkName(isPathSegmentName, 'roleRef.name', ref.name));
  ((binding.subjects ?? []) as KubeObject[]).forEach((s, i) => {
    const at = fieldPath('subjects', i);
    if (!s.name) errs.push(fieldErrors.required(`${at}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.name) errs.push(...checkName(isDns1123Subdomain, `${at}.name`, s.name));
        if (s.apiGroup) errs.push(fieldErrors.notSupported(`${at}.apiGroup`, s.apiGroup, ['']));
        if (!namespaced && !s.namespace) errs.push(fieldErrors.required(`${at}.namespace`));
        break;
      case 'User': case 'Group':
        if (!isRbacGroup(s.apiGroup)) errs.push(fieldErrors.notSupported(`${at}.apiGroup`, s.apiGroup ?? '', [vocabulary.rbacGroup]));
        break;
      default:
        errs.push(fieldErrors.notSupported(`${at}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

/** The roleRef of a binding never changes, as upstream. */
export function validateRoleRefUnchanged(binding: KubeObject, old: KubeObject): FieldError[] {
  const a = binding.roleRef ?? {};
  const b = old.roleRef ?? {};
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  return [fieldErrors.invalid('roleRef', { apiGroup: a.apiGroup ?? '', kind: a.kind ?? '', name: a.name ?? '' }, 'cannot change roleRef')];
}

/** Upstream's defaults: the RBAC group on roleRef and on User and Group subjects. */
export function defaultBinding(binding: KubeObject): void {
  if (binding.roleRef && typeof binding.roleRef === 'object' && !binding.roleRef.apiGroup) binding.roleRef.apiGroup = vocabulary.rbacGroup;
  for (const s of (binding.subjects ?? []) as KubeObject[]) {
    if (s && typeof s === 'object' && !s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = vocabulary.rbacGroup;
  }
}

/** Users, groups and service accounts of a binding, as the wide columns show them. */
function subjectNames(binding: KubeObject, kind: string): string {
  return ((binding.subjects ?? []) as KubeObject[]).filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' && s.namespace ? `${s.namespace}/${s.name}` : s.name)).join(', ');
}

/** Columns of roles: Name and Created At, as upstream prints them. */
export const roleColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'Created At', type: 'date', description: 'When the object was created.', value: (o) => o.metadata?.creationTimestamp },
];

/** Columns of bindings: the role as Kind/name, age, and (wide) who it is granted to. */
export const bindingColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'Role', type: 'string', description: 'The role granted, as Kind/name.', value: (b) => `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}` },
  ageColumn,
  { name: 'Users', type: 'string', priority: 1, description: 'Users in the binding.', value: (b) => subjectNames(b, 'User') },
  { name: 'Groups', type: 'string', priority: 1, description: 'Groups in the binding.', value: (b) => subjectNames(b, 'Group') },
  { name: 'ServiceAccounts', type: 'string', priority: 1, description: 'Service accounts in the binding.', value: (b) => subjectNames(b, 'ServiceAccount') },
];
