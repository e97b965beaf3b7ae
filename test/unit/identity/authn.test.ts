// Bearer tokens, the authenticator unions, audiences and the anonymous rule.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { UnionAuthenticator, type Authenticator, type AuthnResult } from '../../../src/auth/authn/authenticator.js';
import { BearerTokenAuthenticator, bearerToken, invalidBearerToken } from '../../../src/auth/authn/bearer.js';
import { AudienceAgnostic, UnionTokenAuthenticator, type TokenAuthenticator, type TokenResult } from '../../../src/auth/authn/token.js';
import { TokenFileAuthenticator } from '../../../src/auth/authn/tokenfile.js';
import { anonymousAuthEnabled } from '../../../src/auth/authn/anonymous.js';
import { audiencesAccepted, formatList, intersect } from '../../../src/auth/authn/audiences.js';

const request = (headers: Record<string, string> = {}) => ({ headers: { ...headers } }) as unknown as IncomingMessage;
const fixed = (name: string, result: AuthnResult): Authenticator => ({ name, authenticate: () => result });
const tokens = (map: Record<string, TokenResult>): TokenAuthenticator => ({
  name: 'fixed', authenticateToken: (t) => (Object.hasOwn(map, t) ? map[t]! : { kind: 'none' }),
});
const alice = { username: 'alice', groups: ['devs'] };

test('the Authorization header gives a bearer token as upstream reads it', () => {
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('  bearer abc  '), 'abc', 'the scheme is case-insensitive; the header is trimmed');
  assert.equal(bearerToken('Bearer abc def'), 'abc', 'a third part is ignored');
  assert.equal(bearerToken('Bearer  abc'), undefined, 'two spaces: an empty token');
  assert.equal(bearerToken('Bearer'), undefined);
  assert.equal(bearerToken('Basic YTpi'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

test('a token no authenticator accepts is rejected, not anonymous; an accepted one is removed from the request', async () => {
  const bearer = new BearerTokenAuthenticator(new UnionTokenAuthenticator([tokens({ good: { kind: 'user', user: alice, audiences: [] } })]), []);
  const union = new UnionAuthenticator([bearer], { anonymous: true });
  assert.deepEqual(await union.authenticate(request({ authorization: 'Bearer bad' })), { kind: 'rejected', reason: invalidBearerToken });
  const req = request({ authorization: 'Bearer good' });
  const r = await union.authenticate(req);
  assert.equal(r.kind, 'user');
  assert.deepEqual(r.kind === 'user' && r.user.groups, ['devs', 'system:authenticated']);
  assert.equal(req.headers.authorization, undefined);
  assert.deepEqual(await union.authenticate(request()), { kind: 'user', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
  const closed = new UnionAuthenticator([bearer], { anonymous: false });
  assert.deepEqual(await closed.authenticate(request()), { kind: 'none' });
});

test('the first authenticator that accepts wins; rejections are joined when none does', async () => {
  const cert = fixed('x509', { kind: 'user', user: { username: 'admin', groups: ['system:masters'] } });
  const wrong = fixed('bearer', { kind: 'rejected', reason: 'bad token' });
  assert.deepEqual(await new UnionAuthenticator([cert, wrong], { anonymous: false }).authenticate(request()),
    { kind: 'user', user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } });
  const also = fixed('other', { kind: 'rejected', reason: 'expired' });
  assert.deepEqual(await new UnionAuthenticator([wrong, also, wrong], { anonymous: true }).authenticate(request()),
    { kind: 'rejected', reason: '[bad token, expired]' });
});

test('system:authenticated is added unless the user names it or system:unauthenticated', async () => {
  const union = (groups: string[]) => new UnionAuthenticator([fixed('a', { kind: 'user', user: { username: 'u', groups } })], { anonymous: false });
  const groupsOf = async (groups: string[]) => { const r = await union(groups).authenticate(request()); return r.kind === 'user' ? r.user.groups : undefined; };
  assert.deepEqual(await groupsOf([]), ['system:authenticated']);
  assert.deepEqual(await groupsOf(['system:authenticated', 'x']), ['system:authenticated', 'x']);
  assert.deepEqual(await groupsOf(['system:unauthenticated']), ['system:unauthenticated']);
});

test('a credential for other audiences than the server\'s is refused', async () => {
  const forOthers = fixed('a', { kind: 'user', user: alice, audiences: ['other'] });
  assert.deepEqual(await new UnionAuthenticator([forOthers], { anonymous: true, apiAudiences: ['api'] }).authenticate(request()),
    { kind: 'rejected', reason: 'unable to match the audience: ["other"] , accepted: ["api"]' });
  const forUs = fixed('a', { kind: 'user', user: alice, audiences: ['other', 'api'] });
  assert.equal((await new UnionAuthenticator([forUs], { anonymous: false, apiAudiences: ['api'] }).authenticate(request())).kind, 'user');
  assert.ok(audiencesAccepted([], ['x']) && audiencesAccepted(['x'], undefined) && !audiencesAccepted(['x'], ['y']));
  assert.deepEqual(intersect(['a', 'b', 'a', 'c'], ['c', 'a']), ['a', 'c']);
  assert.equal(formatList(['a', 'b"c']), '["a" "b\\"c"]');
});

test('static tokens are valid for the server\'s own audiences only', async () => {
  const file = new AudienceAgnostic(new TokenFileAuthenticator(new Map([['t', alice]])), ['api', 'api2']);
  assert.deepEqual(await file.authenticateToken('t', ['api2', 'other']), { kind: 'user', user: alice, audiences: ['api2'] });
  assert.deepEqual(await file.authenticateToken('t', []), { kind: 'user', user: alice, audiences: ['api', 'api2'] });
  assert.deepEqual(await file.authenticateToken('t', ['other']), { kind: 'none' });
  assert.deepEqual(await file.authenticateToken('nope', ['api']), { kind: 'none' });
});

test('anonymous requests: on unless the mode is AlwaysAllow; the flag decides when given', () => {
  assert.equal(anonymousAuthEnabled(undefined, ['AlwaysAllow']), false);
  assert.equal(anonymousAuthEnabled(undefined, ['Node', 'RBAC']), true);
  assert.equal(anonymousAuthEnabled(true, ['AlwaysAllow']), true);
  assert.equal(anonymousAuthEnabled(false, ['RBAC']), false);
});
