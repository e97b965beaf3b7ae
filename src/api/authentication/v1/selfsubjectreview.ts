// SelfSubjectReview: "who am I?", the caller's own user as the server sees
// it after authentication and impersonation (`kubectl auth whoami`).

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { kindSchema } from '../../core/v1/common.js';
import { authn, UserInfo } from './common.js';

const SelfSubjectReviewStatus = define(authn('SelfSubjectReviewStatus'), t.object({
  userInfo: p(1, t.ref(UserInfo, 'The caller\'s user.')),
}, 'The caller\'s user information.'));

const schema = kindSchema('Tells the caller who the server takes them for.', {
  status: p(2, t.ref(SelfSubjectReviewStatus, 'The answer, filled in by the server.')),
});

export const selfSubjectReviews = defineKind({
  group: vocabulary.authenticationGroup, version: 'v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews',
  scope: 'Cluster',
  verbs: ['create'],
  protobuf: true,
  schema: define(authn('SelfSubjectReview'), schema),
});
