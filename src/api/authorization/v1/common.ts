// Types shared by the access reviews of authorization/v1, and their
// validation as upstream's.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { fieldErrors, type FieldError } from '../../../machinery/errors.js';
import { define, p, t } from '../../schema.js';
import type { KubeObject } from '../../kind.js';

export const authz = (name: string) => `${definitionPrefix}.api.authorization.v1.${name}`;

export const ResourceAttributes = define(authz('ResourceAttributes'), t.object({
  namespace: p(1, t.string('Namespace of the action; empty for cluster-scoped resources and for all namespaces of namespaced ones.')),
  verb: p(2, t.string('API verb (get, list, create, ...), or * for all.')),
  group: p(3, t.string('API group of the resource; "" is the core group, * all groups.')),
  version: p(4, t.string('API version of the resource; * (or empty) for all.')),
  resource: p(5, t.string('Resource, or * for all.')),
  subresource: p(6, t.string('Sub-resource, if any.')),
  name: p(7, t.string('Name of the object; empty for all (a list, a create).')),
}, 'A request on a resource, as authorization sees it.'));

export const NonResourceAttributes = define(authz('NonResourceAttributes'), t.object({
  path: p(1, t.string('URL path of the request.')),
  verb: p(2, t.string('Lowercase HTTP method.')),
}, 'A request on a path that is not a resource, as authorization sees it.'));

export const SubjectAccessReviewStatus = define(authz('SubjectAccessReviewStatus'), t.object({
  allowed: p(1, t.bool('Whether the action is allowed.'), 'always'),
  denied: p(4, t.bool('Whether a module denied the action outright (allowed and denied are both false when none had an opinion).'), 'always'),
  reason: p(2, t.string('Why, as the deciding module put it.')),
  evaluationError: p(3, t.string('An error met while checking; the answer may still be valid.')),
}, 'The answer of an access review.', { required: ['allowed'] }));

const extraValues = { ...t.array(t.string()), protoMessage: 'stringList' as const };

export const SubjectAccessReviewSpec = define(authz('SubjectAccessReviewSpec'), t.object({
  resourceAttributes: p(1, t.ref(ResourceAttributes, 'The request on a resource; exactly one of this and nonResourceAttributes.')),
  nonResourceAttributes: p(2, t.ref(NonResourceAttributes, 'The request on a non-resource path.')),
  user: p(3, t.string('The user to check; at least one of user and groups.')),
  groups: p(4, t.array(t.string(), 'The groups to check.', { listType: 'atomic' })),
  extra: p(5, t.map(extraValues, 'Further information about the user, as an authenticator gives it.')),
  uid: p(6, t.string('The user\'s uid.')),
}, 'Who asks to do what: a request and a user.'));

export const SelfSubjectAccessReviewSpec = define(authz('SelfSubjectAccessReviewSpec'), t.object({
  resourceAttributes: p(1, t.ref(ResourceAttributes, 'The request on a resource; exactly one of this and nonResourceAttributes.')),
  nonResourceAttributes: p(2, t.ref(NonResourceAttributes, 'The request on a non-resource path.')),
}, 'What the caller would like to do.'));

const present = (v: unknown) => v !== undefined && v !== null;

/** Exactly one of resourceAttributes and nonResourceAttributes, as upstream. */
export function validateAttributes(spec: KubeObject | undefined): FieldError[] {
  const s = spec ?? {};
  if (present(s.resourceAttributes) && present(s.nonResourceAttributes)) {
    return [fieldErrors.invalid('spec.nonResourceAttributes', s.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes')];
  }
  if (!present(s.resourceAttributes) && !present(s.nonResourceAttributes)) {
    return [fieldErrors.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  }
  return [];
}

/** Reviews carry no metadata of their own (a LocalSubjectAccessReview its namespace), as upstream checks it. */
export function validateEmptyMetadata(review: KubeObject, namespaceAllowed: boolean): FieldError[] {
  const { managedFields: _m, namespace, ...rest } = review.metadata ?? {};
  const empty = Object.values(rest).every((v) => v === undefined || v === null || v === '') && (namespaceAllowed || !namespace);
  if (empty) return [];
  return [fieldErrors.invalid('metadata', review.metadata, namespaceAllowed ? 'must be empty except for namespace' : 'must be empty')];
}

/** A SubjectAccessReview's spec: the attributes and at least a user or a group. */
export function validateSubjectSpec(spec: KubeObject | undefined): FieldError[] {
  const errs = validateAttributes(spec);
  if (!spec?.user && !(Array.isArray(spec?.groups) && spec.groups.length)) errs.push(fieldErrors.invalid('spec.user', spec?.user ?? '', 'at least one of user or group must be specified'));
  return errs;
}
