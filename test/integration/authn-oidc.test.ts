// OpenID Connect end to end, against a real HTTPS provider in the test: ID
// tokens of the trusted issuer for the client ID name their user (prefixed by
// the issuer URL and #) and groups; the provider is asked for its keys once,
// and again only when a token names a key id not seen (key rotation); every
// bad token is a 401 even with anonymous access on, and a TokenReview says
// why.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { bearer, selfReview, whoIs } from '../support/selfreview.js';
import { newSigningKey, startProvider, type TestProvider } from '../support/oidc-provider.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { newCa } from '../support/certs.js';
import { OidcAuthenticator, usernamePrefixOf } from '../../src/auth/authn/oidc.js';

const clientId = 'plat-cluster';
const hour = 3600;
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function reviewError(s: TestServer, token: string): Promise<string> {
  const r = await s.client.post(`/apis/${vocabulary.authenticationGroup}/v1/tokenreviews`, {
    apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'TokenReview', spec: { token },
  });
  assert.equal(r.status, 201, r.text);
  assert.notEqual(r.json.status.authenticated, true, JSON.stringify(r.json.status));
  return r.json.status.error;
}

describe('OpenID Connect tokens', () => {
  let s: TestServer;
  let provider: TestProvider;
  let anonymous: TestClient;
  const keyFetches = () => provider.hits.get('/realm/keys') ?? 0;

  before(async () => {
    provider = await startProvider(tempDir(), clientId);
    s = await startTestServer({
      anonymousAuth: true, authorizationMode: ['AlwaysAllow'],
      oidcIssuerUrl: provider.issuer, oidcClientId: clientId, oidcCaFile: provider.caPath,
      oidcGroupsClaim: 'groups', oidcGroupsPrefix: 'oidc:', oidcRequiredClaims: [['hd', 'example.com']],
    });
    anonymous = s.client.anonymous();
  });
  after(async () => {
    anonymous.close();
    await s.close();
    await provider.close();
  });

  test('an ID token names the user (issuer#sub) and prefixed groups; the keys are fetched once', async () => {
    const token = await provider.token({ sub: 'jane', groups: ['dev', 'ops'], hd: 'example.com' });
    const user = await whoIs(anonymous, bearer(token));
    assert.equal(user.username, `${provider.issuer}#jane`);
    assert.deepEqual(user.groups, ['oidc:dev', 'oidc:ops', 'system:authenticated']);
    const fetched = keyFetches();
    for (let i = 0; i < 5; i++) await whoIs(anonymous, bearer(await provider.token({ sub: `u${i}`, groups: 'single', hd: 'example.com' })));
    assert.equal(keyFetches(), fetched, 'no call to the provider per request or per new token');
    assert.equal(provider.hits.get('/realm/.well-known/openid-configuration'), 1);
  });

  test('azp naming the client ID does not stand for the audience, as upstream', async () => {
    const token = await provider.token({ sub: 'azp-user', aud: ['other-api'], azp: clientId, hd: 'example.com' });
    assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
    assert.match(await reviewError(s, token), /expected audience "plat-cluster" got \["other-api"\]/);
    const both = await provider.token({ sub: 'azp-user', aud: ['other-api', clientId], azp: 'other-api', hd: 'example.com' });
    assert.equal((await whoIs(anonymous, bearer(both))).username, `${provider.issuer}#azp-user`);
  });

  test('registered claims of the wrong JSON type refuse the token', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['aud list holding a number', { aud: [clientId, 7] }],
      ['aud an object', { aud: { [clientId]: true } }],
      ['sub a number', { sub: 42 }],
      ['jti a list', { jti: ['a'] }],
      ['exp a string', { exp: String(nowSeconds() + hour) }],
      ['nbf a string', { nbf: '0' }],
      ['iat a boolean', { iat: true }],
    ];
    for (const [what, claims] of cases) {
      const token = await provider.token({ sub: 'typed', hd: 'example.com', ...claims });
      assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
      assert.notEqual(await reviewError(s, token), undefined, what);
    }
  });

  test('key rotation: a token of the new key is accepted after one refresh; the old key is gone', async () => {
    const oldKey = provider.keys[0]!;
    const before = keyFetches();
    await provider.rotate();
    const token = await provider.token({ sub: 'after-rotation', hd: 'example.com' });
    assert.equal((await whoIs(anonymous, bearer(token))).username, `${provider.issuer}#after-rotation`);
    assert.equal(keyFetches(), before + 1);
    const stale = await provider.token({ sub: 'old-key', hd: 'example.com' }, oldKey);
    assertStatus(await selfReview(anonymous, bearer(stale)), 401, 'Unauthorized');
  });

  test('a key the provider never published is refused', async () => {
    const stranger = await newSigningKey('key-x');
    const token = await provider.token({ sub: 'mallory', hd: 'example.com' }, stranger);
    assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
    assert.match(await reviewError(s, token), /failed to verify signature/);
    // A known kid with another key's signature is refused as well.
    const forged = await provider.token({ sub: 'mallory', hd: 'example.com' }, { ...stranger, kid: provider.keys[0]!.kid });
    assertStatus(await selfReview(anonymous, bearer(forged)), 401, 'Unauthorized');
  });

  test('wrong issuer, wrong audience, expired, missing or different required claim: 401', async () => {
    const cases: [string, Record<string, unknown>, RegExp | undefined][] = [
      ['wrong issuer', { iss: 'https://elsewhere.example', sub: 'x', hd: 'example.com' }, undefined],
      ['wrong audience', { aud: 'another-client', sub: 'x', hd: 'example.com' }, /expected audience "plat-cluster" got \["another-client"\]/],
      ['expired', { exp: nowSeconds() - hour, iat: nowSeconds() - 2 * hour, sub: 'x', hd: 'example.com' }, /token is expired/],
      ['missing required claim', { sub: 'x' }, /required claim hd not present/],
      ['different required claim', { sub: 'x', hd: 'evil.example' }, /required claim hd value does not match. Got = evil.example, want = example.com/],
      ['no username claim', { hd: 'example.com' }, /parse username claims "sub": claim not present/],
      ['groups not strings', { sub: 'x', hd: 'example.com', groups: [1] }, /parse groups claim "groups"/],
    ];
    for (const [what, claims, reason] of cases) {
      const token = await provider.token(claims);
      assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
      if (reason) assert.match(await reviewError(s, token), reason, what);
      else assert.equal(await reviewError(s, token), 'invalid bearer token', what);
    }
  });
});

describe('OpenID Connect user names', () => {
  let provider: TestProvider;
  let ca: string;
  before(async () => {
    provider = await startProvider(tempDir(), clientId);
    ca = readFileSync(provider.caPath, 'utf8');
  });
  after(() => provider.close());

  const authenticator = (o: { usernameClaim: string; usernamePrefix?: string }) => new OidcAuthenticator({
    issuerUrl: provider.issuer, clientId, requiredClaims: [], signingAlgs: ['RS256'], caPem: ca, ...o,
  });

  test('prefix rules: issuer# for claims other than email, none for email, - for none, or the one given', () => {
    const issuerUrl = 'https://id.example';
    assert.equal(usernamePrefixOf({ issuerUrl, usernameClaim: 'sub' }), 'https://id.example#');
    assert.equal(usernamePrefixOf({ issuerUrl, usernameClaim: 'email' }), '');
    assert.equal(usernamePrefixOf({ issuerUrl, usernameClaim: 'sub', usernamePrefix: '-' }), '');
    assert.equal(usernamePrefixOf({ issuerUrl, usernameClaim: 'email', usernamePrefix: 'oidc:' }), 'oidc:');
  });

  test('email: taken as is, refused when email_verified is false or not a boolean', async () => {
    const a = authenticator({ usernameClaim: 'email' });
    const ok = await a.authenticateToken(await provider.token({ email: 'jane@example.com', email_verified: true }));
    assert.deepEqual(ok, { kind: 'user', user: { username: 'jane@example.com', groups: [] }, audiences: [] });
    const unstated = await a.authenticateToken(await provider.token({ email: 'joe@example.com' }));
    assert.equal(unstated.kind, 'user');
    assert.deepEqual(await a.authenticateToken(await provider.token({ email: 'x@example.com', email_verified: false })), { kind: 'rejected', reason: 'oidc: email not verified' });
    const notBool = await a.authenticateToken(await provider.token({ email: 'x@example.com', email_verified: 'yes' }));
    assert.equal(notBool.kind, 'rejected');
  });

  test('a custom prefix, and a provider whose discovery names another issuer is refused', async () => {
    const a = authenticator({ usernameClaim: 'sub', usernamePrefix: 'oidc:' });
    const r = await a.authenticateToken(await provider.token({ sub: 'jane' }));
    assert.equal(r.kind === 'user' && r.user.username, 'oidc:jane');
    // Same provider, trusted under a different spelling of its issuer: discovery disagrees.
    const other = new OidcAuthenticator({ issuerUrl: `${provider.issuer}/`, clientId, usernameClaim: 'sub', requiredClaims: [], signingAlgs: ['RS256'], caPem: ca });
    const refused = await other.authenticateToken(await provider.token({ sub: 'jane', iss: `${provider.issuer}/` }));
    assert.equal(refused.kind, 'rejected');
    assert.match(refused.kind === 'rejected' ? refused.reason : '', /not initialized: oidc: issuer did not match/);
  });

  test('an algorithm not allowed is refused even with a published key; allowed, it is accepted', async () => {
    const es = await newSigningKey('es-key', 'ES256');
    provider.keys = [provider.keys[0]!, es];
    const token = await provider.token({ sub: 'es' }, es);
    const rsOnly = await authenticator({ usernameClaim: 'sub' }).authenticateToken(token);
    assert.equal(rsOnly.kind, 'rejected');
    assert.match(rsOnly.kind === 'rejected' ? rsOnly.reason : '', /"alg" \(Algorithm\) Header Parameter value not allowed/);
    const both = new OidcAuthenticator({ issuerUrl: provider.issuer, clientId, usernameClaim: 'sub', requiredClaims: [], signingAlgs: ['RS256', 'ES256'], caPem: ca });
    assert.equal((await both.authenticateToken(token)).kind, 'user');
  });

  test('a provider not trusted by the CA given is not reached', async () => {
    const a = new OidcAuthenticator({ issuerUrl: provider.issuer, clientId, usernameClaim: 'sub', requiredClaims: [], signingAlgs: ['RS256'], caPem: (await newCa('other')).cert });
    const r = await a.authenticateToken(await provider.token({ sub: 'jane' }));
    assert.equal(r.kind, 'rejected');
    assert.match(r.kind === 'rejected' ? r.reason : '', /not initialized/);
  });
});
