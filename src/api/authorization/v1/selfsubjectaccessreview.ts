// SelfSubjectAccessReview: "may I do this?" (`kubectl auth can-i`).

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { kindSchema } from '../../core/v1/common.js';
import { authz, SelfSubjectAccessReviewSpec, SubjectAccessReviewStatus, validateAttributes, validateEmptyMetadata } from './common.js';

const schema = kindSchema('Checks whether the caller may perform an action.', {
  spec: p(2, t.ref(SelfSubjectAccessReviewSpec, 'The request to check.')),
  status: p(3, t.ref(SubjectAccessReviewStatus, 'The answer, filled in by the server.')),
}, ['spec']);

export const selfSubjectAccessReviews = defineKind({
  group: vocabulary.authorizationGroup, version: 'v1', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews',
  scope: 'Cluster',
  verbs: ['create'],
  protobuf: true,
  schema: define(authz('SelfSubjectAccessReview'), schema),
  strategy: { validate: (r) => [...validateAttributes(r.spec), ...validateEmptyMetadata(r, false)] },
});
