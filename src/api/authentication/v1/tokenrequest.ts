// TokenRequest: the body and answer of `serviceaccounts/{name}/token`. It is
// never stored: a create sub-resource answers it with a signed token.

import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { fieldErrors, type FieldError } from '../../../machinery/errors.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { Time } from '../../meta/v1.js';
import { kindSchema } from '../../core/v1/common.js';
import { authn } from './common.js';

/** Lifetime when the request names none, the shortest one allowed, and the longest (as upstream). */
export const defaultTokenSeconds = 3600;
export const minTokenSeconds = 600;
export const maxTokenSeconds = 2 ** 32;

const BoundObjectReference = define(authn('BoundObjectReference'), t.object({
  kind: p(1, t.string('Kind of the referent: Secret (or Pod, once served).')),
  apiVersion: p(2, t.string('API version of the referent.')),
  name: p(3, t.string('Name of the referent.')),
  uid: p(4, t.string('UID of the referent; when set, it must be the object\'s.')),
}, 'The object a token is bound to: the token stops working when the object is deleted.'));

const TokenRequestSpec = define(authn('TokenRequestSpec'), t.object({
  audiences: p(1, t.array(t.string(), 'Who the token is meant for; the server\'s own audiences when empty.', { listType: 'atomic' })),
  expirationSeconds: p(4, t.int64(`Requested lifetime in seconds (default ${defaultTokenSeconds}, at least ${minTokenSeconds}); the server may shorten it.`)),
  boundObjectRef: p(3, t.ref(BoundObjectReference, 'The object the token is bound to, if any.')),
}, 'The parameters of a requested token.', { required: ['audiences'] }));

const TokenRequestStatus = define(authn('TokenRequestStatus'), t.object({
  token: p(1, t.string('The signed token.')),
  expirationTimestamp: p(2, t.ref(Time, 'When the token expires.')),
}, 'The issued token.', { required: ['token', 'expirationTimestamp'] }));

const schema = kindSchema('Requests a token for a service account.', {
  spec: p(2, t.ref(TokenRequestSpec, 'What the token is for.')),
  status: p(3, t.ref(TokenRequestStatus, 'The token, filled in by the server.')),
}, ['spec']);

function validateTokenRequest(r: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seconds = r.spec?.expirationSeconds;
  if (seconds === undefined) return errs;
  if (seconds < minTokenSeconds) errs.push(fieldErrors.invalid('spec.expirationSeconds', seconds, 'may not specify a duration less than 10 minutes'));
  if (seconds > maxTokenSeconds) errs.push(fieldErrors.invalid('spec.expirationSeconds', seconds, 'may not specify a duration larger than 2^32 seconds'));
  return errs;
}

export const tokenRequests = defineKind({
  group: vocabulary.authenticationGroup, version: 'v1', kind: 'TokenRequest', plural: 'tokenrequests',
  scope: 'Namespaced',
  verbs: ['create'],
  protobuf: true,
  schema: define(authn('TokenRequest'), schema),
  strategy: { validate: validateTokenRequest },
});
