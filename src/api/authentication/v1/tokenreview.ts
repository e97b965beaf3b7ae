// TokenReview: "who is this token?", answered in status and never stored.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { kindSchema } from '../../core/v1/common.js';
import { authn, UserInfo } from './common.js';

const TokenReviewSpec = define(authn('TokenReviewSpec'), t.object({
  token: p(1, t.string('The opaque bearer token to check.')),
  audiences: p(2, t.array(t.string(), 'Audiences the caller needs the token to be valid for (at least one); the server\'s own when empty.', { listType: 'atomic' })),
}, 'The token to review.'));

const TokenReviewStatus = define(authn('TokenReviewStatus'), t.object({
  authenticated: p(1, t.bool('Whether the token belongs to a known user.')),
  user: p(2, t.ref(UserInfo, 'The user the token belongs to.')),
  audiences: p(4, t.array(t.string(), 'The asked audiences the token is valid for; callers that asked for audiences must check that one they accept is here.', { listType: 'atomic' })),
  error: p(3, t.string('Why the token could not be checked.')),
}, 'The result of a token review.'));

const schema = kindSchema('Checks a token and tells the user it belongs to.', {
  spec: p(2, t.ref(TokenReviewSpec, 'The token to check.')),
  status: p(3, t.ref(TokenReviewStatus, 'The answer, filled in by the server.')),
}, ['spec']);

export const tokenReviews = defineKind({
  group: vocabulary.authenticationGroup, version: 'v1', kind: 'TokenReview', plural: 'tokenreviews',
  scope: 'Cluster',
  verbs: ['create'],
  protobuf: true,
  schema: define(authn('TokenReview'), schema),
});
