// Service-account tokens over HTTPS: the token request sub-resource, tokens
// used as bearer tokens, TokenReview (audiences, bad tokens answered in
// status), SelfSubjectReview, and tokens that stop working when what they
// depend on is gone or when they expire.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';
import { boundTokenClaims } from '../../src/machinery/serviceaccount.js';
import { createTokenSigner } from '../../src/pki/index.js';

const group = vocabulary.authenticationGroup;
const issuer = `https://${product.name}.default.svc.cluster.local`;
let s: TestServer;
let capped: TestServer;
let bare: TestClient;

before(async () => {
  const file = tokenFile('t-alice,alice,uid-1,"devs"\n');
  // Tokens are under test, not authorization: their users may do anything (AlwaysAllow, anonymous requests off).
  s = await startTestServer({ tokenAuthFile: file, authorizationMode: ['AlwaysAllow'] });
  capped = await startTestServer({ serviceAccountMaxTokenExpirationMs: 3600_000, authorizationMode: ['AlwaysAllow'] });
  bare = s.client.anonymous();
  for (const server of [s, capped]) {
    assert.equal((await server.client.post('/api/v1/namespaces', { metadata: { name: 'ns1' } })).status, 201);
    assert.equal((await server.client.post('/api/v1/namespaces/ns1/serviceaccounts', { metadata: { name: 'robot' } })).status, 201);
  }
});

after(async () => {
  bare.close();
  await s.close();
  await capped.close();
});

const tokenPath = (name = 'robot', ns = 'ns1') => `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function requestToken(spec: Record<string, unknown> = {}, server = s, name = 'robot'): Promise<any> {
  const r = await server.client.post(tokenPath(name), { apiVersion: `${group}/v1`, kind: 'TokenRequest', spec });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function whoami(headers: Record<string, string>, client = bare): Promise<any> {
  const r = await client.post(`/apis/${group}/v1/selfsubjectreviews`, { apiVersion: `${group}/v1`, kind: 'SelfSubjectReview' }, headers);
  return r.status === 201 ? r.json.status.userInfo : r;
}

async function review(token: string, audiences?: string[]): Promise<any> {
  const r = await s.client.post(`/apis/${group}/v1/tokenreviews`, { apiVersion: `${group}/v1`, kind: 'TokenReview', spec: { token, audiences } });
  assert.equal(r.status, 201, r.text);
  return r.json.status;
}

test('a token request answers a signed token for the account, its audiences and lifetime', async () => {
  const account = (await s.client.get('/api/v1/namespaces/ns1/serviceaccounts/robot')).json;
  const answer = await requestToken({ audiences: ['vault'], expirationSeconds: 1200 });
  assert.equal(answer.kind, 'TokenRequest');
  assert.equal(answer.apiVersion, `${group}/v1`);
  assert.deepEqual({ name: answer.metadata.name, namespace: answer.metadata.namespace }, { name: 'robot', namespace: 'ns1' });
  assert.deepEqual(answer.spec, { audiences: ['vault'], expirationSeconds: 1200 });
  const claims = decodeJwt(answer.status.token);
  assert.equal(claims.iss, issuer);
  assert.deepEqual(claims.aud, ['vault']);
  assert.equal(claims.sub, 'system:serviceaccount:ns1:robot');
  assert.equal(claims.exp! - claims.iat!, 1200);
  assert.equal(claims.nbf, claims.iat);
  assert.deepEqual(claims[product.domain], { namespace: 'ns1', serviceaccount: { name: 'robot', uid: account.metadata.uid } });
  assert.equal(Date.parse(answer.status.expirationTimestamp) / 1000, claims.exp);

  const defaults = await requestToken();
  assert.deepEqual(defaults.spec, { audiences: [issuer], expirationSeconds: 3600 }, 'the server\'s audiences and an hour by default');
  const d = decodeJwt(defaults.status.token);
  assert.equal(d.exp! - d.iat!, 3600);
});

test('upstream clients\' apiVersion is accepted and answered in kind', async () => {
  const r = await s.client.post(tokenPath(), { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1');
  const who = await s.client.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(who.status, 201, who.text);
  assert.equal(who.json.apiVersion, 'authentication.k8s.io/v1');
  assert.equal(who.json.status.userInfo.username, 'admin');
  // Discovered too, as upstream names it: kubectl create -f of a review written for upstream maps its kind through discovery.
  assert.ok((await s.client.get('/apis')).json.groups.some((g: any) => g.name === 'authentication.k8s.io'), 'the alias is discovered');
  assertStatus(await s.client.post(tokenPath(), { apiVersion: 'other.k8s.io/v1', kind: 'TokenRequest', spec: {} }), 400, 'BadRequest');
});

test('bad token requests: too short, mismatched names, missing accounts and objects, foreign kinds, other uids', async () => {
  const tooShort = await s.client.post(tokenPath(), { spec: { expirationSeconds: 60 } });
  assertStatus(tooShort, 422, 'Invalid');
  assert.match(tooShort.json.message, /spec\.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes/);
  assertStatus(await s.client.post(tokenPath(), { spec: { expirationSeconds: 2 ** 32 + 1 } }), 422, 'Invalid');
  const renamed = await s.client.post(tokenPath(), { metadata: { name: 'other' }, spec: {} });
  assertStatus(renamed, 422, 'Invalid');
  assert.match(renamed.json.message, /metadata\.name: Invalid value: "other": must match the service account name if specified/);
  assertStatus(await s.client.post(tokenPath('ghost'), { spec: {} }), 404, 'NotFound');
  const noSecret = await s.client.post(tokenPath(), { spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'missing' } } });
  assertStatus(noSecret, 404, 'NotFound');
  assert.equal(noSecret.json.message, 'secrets "missing" not found');
  const cm = await s.client.post(tokenPath(), { spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } } });
  assertStatus(cm, 400, 'BadRequest');
  assert.equal(cm.json.message, 'cannot bind token for serviceaccount "robot" to object of type /v1, Kind=ConfigMap');
  // Pods are served: a missing one is not found, as upstream.
  const noPod = await s.client.post(tokenPath(), { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p' } } });
  assertStatus(noPod, 404, 'NotFound');
  assert.equal(noPod.json.message, 'pods "p" not found');
  assert.equal((await s.client.post('/api/v1/namespaces/ns1/secrets', { metadata: { name: 'anchor' } })).status, 201);
  const otherUid = await s.client.post(tokenPath(), { spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'anchor', uid: 'not-its-uid' } } });
  assertStatus(otherUid, 409, 'Conflict');
  assertStatus(await s.client.post(tokenPath(), { spec: { audiences: 'vault' } }), 400, 'BadRequest');
  assertStatus(await s.client.post(tokenPath(), { apiVersion: `${group}/v1`, kind: 'TokenReview', spec: {} }), 400, 'BadRequest');
  assertStatus(await s.client.send('GET', tokenPath()), 405, 'MethodNotAllowed');
});

test('a capped server shortens long requests and says so in a warning', async () => {
  const r = await capped.client.post(tokenPath(), { spec: { expirationSeconds: 7200 } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.spec.expirationSeconds, 3600);
  const claims = decodeJwt(r.json.status.token);
  assert.equal(claims.exp! - claims.iat!, 3600);
  assert.match(String(r.headers.warning), /requested expiration of 7200 seconds shortened to 3600 seconds/);
});

test('a token is a bearer credential of its account, seen as such by SelfSubjectReview', async () => {
  const { status } = await requestToken();
  const account = (await s.client.get('/api/v1/namespaces/ns1/serviceaccounts/robot')).json;
  const me = await whoami(bearer(status.token));
  assert.equal(me.username, 'system:serviceaccount:ns1:robot');
  assert.equal(me.uid, account.metadata.uid);
  assert.deepEqual(me.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated']);
  assert.deepEqual(me.extra, { [`${group}/credential-id`]: [`JTI=${decodeJwt(status.token).jti}`] });
  assert.equal((await bare.get('/api/v1/namespaces/ns1/serviceaccounts', bearer(status.token))).status, 200);
  // A token for someone else does not open this server.
  const forVault = (await requestToken({ audiences: ['vault'] })).status.token;
  assertStatus(await bare.get('/api/v1/namespaces', bearer(forVault)), 401, 'Unauthorized');
  assert.deepEqual(await whoami(bearer('t-alice')), { username: 'alice', uid: 'uid-1', groups: ['devs', 'system:authenticated'] });
});

test('TokenReview: authenticated for an audience the token has, refused for another; bad tokens answered in status', async () => {
  const token = (await requestToken({ audiences: ['vault', 'db'] })).status.token;
  const ok = await review(token, ['vault', 'mail']);
  assert.equal(ok.authenticated, true);
  assert.deepEqual(ok.audiences, ['vault']);
  assert.equal(ok.user.username, 'system:serviceaccount:ns1:robot');
  assert.deepEqual(ok.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated']);
  const other = await review(token, ['mail']);
  assert.equal(other.authenticated, false);
  assert.equal(other.error, 'token audiences ["vault" "db"] is invalid for the target audiences ["mail"]');
  assert.equal(other.user.username, undefined);
  const forUs = await review((await requestToken()).status.token);
  assert.deepEqual([forUs.authenticated, forUs.audiences], [true, [issuer]], 'no audiences asked: the server\'s own');
  assert.deepEqual(await review('garbage'), { authenticated: false, user: {}, error: 'invalid bearer token' });
  const alice = await review('t-alice');
  assert.deepEqual([alice.authenticated, alice.user.username, alice.audiences], [true, 'alice', [issuer]]);
  assert.equal((await review('t-alice', ['vault'])).authenticated, false, 'static tokens are for this server only');
  const empty = await s.client.post(`/apis/${group}/v1/tokenreviews`, { spec: { token: '' } });
  assertStatus(empty, 400, 'BadRequest');
  assert.equal(empty.json.message, `token is required for TokenReview in ${group}/v1`);
  assertStatus(await s.client.get(`/apis/${group}/v1/tokenreviews`), 405, 'MethodNotAllowed');
  assertStatus(await bare.post(`/apis/${group}/v1/tokenreviews`, { spec: { token } }), 401, 'Unauthorized');
});

test('discovery lists the token sub-resource and the reviews', async () => {
  const core = (await s.client.get('/api/v1')).json.resources as any[];
  const token = core.find((r) => r.name === 'serviceaccounts/token');
  assert.deepEqual({ group: token.group, version: token.version, kind: token.kind, verbs: token.verbs }, { group, version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
  const authn = (await s.client.get(`/apis/${group}/v1`)).json.resources as any[];
  assert.deepEqual(authn.map((r) => [r.name, r.kind, r.namespaced, r.verbs]).sort(), [
    ['selfsubjectreviews', 'SelfSubjectReview', false, ['create']],
    ['tokenreviews', 'TokenReview', false, ['create']],
  ]);
});

test('a token stops working when its bound secret or its account is deleted, and stays dead when the account is recreated', async () => {
  assert.equal((await s.client.post('/api/v1/namespaces/ns1/serviceaccounts', { metadata: { name: 'temp' } })).status, 201);
  assert.equal((await s.client.post('/api/v1/namespaces/ns1/secrets', { metadata: { name: 'bound' } })).status, 201);
  const secretBound = (await requestToken({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound' } }, s, 'temp')).status.token;
  const plain = (await requestToken({}, s, 'temp')).status.token;
  const secret = (await s.client.get('/api/v1/namespaces/ns1/secrets/bound')).json;
  assert.deepEqual((decodeJwt(secretBound)[product.domain] as any).secret, { name: 'bound', uid: secret.metadata.uid });
  assert.equal((await whoami(bearer(secretBound))).username, 'system:serviceaccount:ns1:temp');
  assert.equal((await s.client.delete('/api/v1/namespaces/ns1/secrets/bound')).status, 200);
  assertStatus(await bare.get('/api/v1/namespaces', bearer(secretBound)), 401, 'Unauthorized');
  assert.deepEqual(await review(secretBound), { authenticated: false, user: {}, error: 'service account token has been invalidated' });
  assert.equal((await whoami(bearer(plain))).username, 'system:serviceaccount:ns1:temp');

  assert.equal((await s.client.delete('/api/v1/namespaces/ns1/serviceaccounts/temp')).status, 200);
  assertStatus(await bare.get('/api/v1/namespaces', bearer(plain)), 401, 'Unauthorized');
  assert.equal((await review(plain)).error, 'serviceaccounts "temp" not found');
  assert.equal((await s.client.post('/api/v1/namespaces/ns1/serviceaccounts', { metadata: { name: 'temp' } })).status, 201);
  assertStatus(await bare.get('/api/v1/namespaces', bearer(plain)), 401, 'Unauthorized');
  assert.match((await review(plain)).error, /^service account UID \(.+\) does not match claim \(.+\)$/);
});

test('an expired token is refused; one signed by the server\'s key file and still valid is accepted', async () => {
  const account = (await s.client.get('/api/v1/namespaces/ns1/serviceaccounts/robot')).json;
  const signer = await createTokenSigner(readFileSync(join(s.dataDir, 'pki', 'sa.key'), 'utf8'), issuer);
  const token = (lifetimeSeconds: number, now: number) => signer.sign(boundTokenClaims({
    namespace: 'ns1', account: { name: 'robot', uid: account.metadata.uid }, audiences: [issuer], lifetimeSeconds, now, id: `t-${now}`,
  }));
  const expired = await token(600, Date.now() - 3600_000);
  assertStatus(await bare.get('/api/v1/namespaces', bearer(expired)), 401, 'Unauthorized');
  assert.deepEqual(await review(expired), { authenticated: false, user: {}, error: 'service account token has expired' });
  const valid = await token(600, Date.now());
  assert.equal((await bare.get('/api/v1/namespaces', bearer(valid))).status, 200);
});

test('a token whose registered claims have the wrong JSON type is refused (a string exp never expiring, among others)', async () => {
  const account = (await s.client.get('/api/v1/namespaces/ns1/serviceaccounts/robot')).json;
  const signer = await createTokenSigner(readFileSync(join(s.dataDir, 'pki', 'sa.key'), 'utf8'), issuer);
  const claims = (now: number) => boundTokenClaims({
    namespace: 'ns1', account: { name: 'robot', uid: account.metadata.uid }, audiences: [issuer], lifetimeSeconds: 600, now, id: `typed-${now}`,
  });
  const longAgo = Date.now() - 24 * 3600_000;
  const cases: [string, (c: Record<string, unknown>) => void][] = [
    ['exp a string, long past', (c) => { c.exp = String(c.exp); }],
    ['nbf a string', (c) => { c.nbf = String(c.nbf); }],
    ['iat an object', (c) => { c.iat = { at: c.iat }; }],
    ['sub a list', (c) => { c.sub = [c.sub]; }],
    ['aud holding a number', (c) => { c.aud = [issuer, 1]; }],
  ];
  for (const [what, spoil] of cases) {
    const c = claims(what.includes('long past') ? longAgo : Date.now());
    spoil(c);
    const token = await signer.sign(c);
    assertStatus(await bare.get('/api/v1/namespaces', bearer(token)), 401, 'Unauthorized');
    assert.match((await review(token)).error, /^claim "(exp|nbf|iat|sub|aud)" is /, what);
  }
});
