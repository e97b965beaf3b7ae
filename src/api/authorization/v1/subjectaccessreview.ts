// SubjectAccessReview: "may this user do this?", answered in status and never stored.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { kindSchema } from '../../core/v1/common.js';
import { authz, SubjectAccessReviewSpec, SubjectAccessReviewStatus, validateEmptyMetadata, validateSubjectSpec } from './common.js';

const schema = kindSchema('Checks whether a user may perform an action.', {
  spec: p(2, t.ref(SubjectAccessReviewSpec, 'The request and the user to check.')),
  status: p(3, t.ref(SubjectAccessReviewStatus, 'The answer, filled in by the server.')),
}, ['spec']);

export const subjectAccessReviews = defineKind({
  group: vocabulary.authorizationGroup, version: 'v1', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews',
  scope: 'Cluster',
  verbs: ['create'],
  protobuf: true,
  schema: define(authz('SubjectAccessReview'), schema),
  strategy: { validate: (r) => [...validateSubjectSpec(r.spec), ...validateEmptyMetadata(r, false)] },
});
