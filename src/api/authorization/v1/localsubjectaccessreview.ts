// LocalSubjectAccessReview: a SubjectAccessReview within one namespace, so a
// namespace's admins may be allowed to ask it.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { fieldErrors } from '../../../machinery/errors.js';
import { kindSchema } from '../../core/v1/common.js';
import { authz, SubjectAccessReviewSpec, SubjectAccessReviewStatus, validateEmptyMetadata, validateSubjectSpec } from './common.js';

const schema = kindSchema('Checks whether a user may perform an action in one namespace.', {
  spec: p(2, t.ref(SubjectAccessReviewSpec, 'The request (its namespace must be the review\'s) and the user to check.')),
  status: p(3, t.ref(SubjectAccessReviewStatus, 'The answer, filled in by the server.')),
}, ['spec']);

export const localSubjectAccessReviews = defineKind({
  group: vocabulary.authorizationGroup, version: 'v1', kind: 'LocalSubjectAccessReview', plural: 'localsubjectaccessreviews',
  scope: 'Namespaced',
  verbs: ['create'],
  protobuf: true,
  schema: define(authz('LocalSubjectAccessReview'), schema),
  strategy: {
    validate(r) {
      const errs = [...validateSubjectSpec(r.spec), ...validateEmptyMetadata(r, true)];
      if (r.spec?.nonResourceAttributes) errs.push(fieldErrors.invalid('spec.nonResourceAttributes', r.spec.nonResourceAttributes, 'disallowed on this kind of request'));
      return errs;
    },
  },
});
