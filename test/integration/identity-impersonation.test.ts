// Impersonation over HTTPS, on an app built with a test authorizer that
// denies some impersonations: each Impersonate-* header is asked about
// (verb impersonate on users, groups, serviceaccounts, userextras/<key>,
// uids), a denial is a 403 in upstream's words, and the request then runs as
// the impersonated user, all the way to authorization.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ensureKeyMaterial } from '../../src/pki/index.js';
import { openBackend, type Backend } from '../../src/storage/index.js';
import { CacheSet } from '../../src/storage/cache/index.js';
import { Registry } from '../../src/registry/registry.js';
import { builtinKinds } from '../../src/api/catalog.js';
import { selfSubjectReviewRest, tokenReviewRest } from '../../src/registry/authentication.js';
import { Health } from '../../src/server/health.js';
import { createApp } from '../../src/server/app.js';
import { UnionAuthenticator } from '../../src/auth/authn/authenticator.js';
import { X509Authenticator } from '../../src/auth/authn/x509.js';
import type { Attributes, Authorizer, Decision } from '../../src/auth/authz/authorizer.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { TestClient } from '../support/client.js';
import { tempDir } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';

const group = vocabulary.authenticationGroup;
/** Impersonations this test's authorizer refuses, as `resource[/subresource]:name`. */
const refused = new Set(['users:root', 'groups:admins', 'serviceaccounts:kube-system/builder', 'userextras/scopes:write', 'uids:0']);

class TestAuthorizer implements Authorizer {
  readonly name = 'test';
  readonly asked: Attributes[] = [];
  authorize(a: Attributes): Decision {
    this.asked.push(a);
    if (a.verb === 'create' && a.resource === 'tokenreviews' && a.user.username === 'jane') return { decision: 'deny', reason: '' };
    if (a.verb !== 'impersonate') return { decision: 'allow', reason: '' };
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const name = a.namespace ? `${a.namespace}/${a.name}` : a.name;
    return refused.has(`${resource}:${name}`) ? { decision: 'deny', reason: 'not on this test\'s list' } : { decision: 'allow', reason: '' };
  }
}

let server: Server;
let backend: Backend;
let caches: CacheSet;
let client: TestClient;
const authorizer = new TestAuthorizer();

before(async () => {
  const dir = tempDir();
  const keys = await ensureKeyMaterial(dir, { serviceAccountKeyFiles: [] });
  backend = openBackend({ kind: 'memory', dataDir: dir });
  caches = new CacheSet(backend);
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  registry.addRest(selfSubjectReviewRest());
  registry.addRest(tokenReviewRest(async () => ({ error: 'no token is valid here' }), []));
  const app = createApp({
    registry, health: new Health(), authorizer, log: pino({ level: 'silent' }), packageVersion: '0.0.0', serverAddress: () => '',
    authenticator: new UnionAuthenticator([new X509Authenticator()], { anonymous: false }),
  });
  server = createServer({ key: keys.servingKeyPem, cert: keys.servingCertPem, ca: keys.clientCaPem, requestCert: true, rejectUnauthorized: false }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  client = new TestClient({ server: `https://127.0.0.1:${port}`, ca: keys.caCertPem, cert: keys.adminCertPem, key: keys.adminKeyPem });
});

after(async () => {
  client.close();
  await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  await caches.stopAll();
  await backend.close();
});

async function whoami(headers: Record<string, string | string[]>): Promise<any> {
  authorizer.asked.length = 0;
  return client.send('POST', `/apis/${group}/v1/selfsubjectreviews`, { body: { apiVersion: `${group}/v1`, kind: 'SelfSubjectReview' }, headers: headers as Record<string, string> });
}

test('without impersonation headers the caller is itself', async () => {
  const r = await whoami({});
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.status.userInfo, { username: 'admin', groups: ['system:masters', 'system:authenticated'] });
  assert.deepEqual(authorizer.asked.map((a) => a.verb), ['create']);
});

test('a user, groups, extras and a uid, each asked about, become who the server sees', async () => {
  const r = await whoami({
    'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'ops'], 'Impersonate-Uid': 'u-1',
    'Impersonate-Extra-Scopes': ['read', 'view'], 'Impersonate-Extra-Example.com%2Fteam': 'blue',
  });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.status.userInfo, {
    username: 'jane', uid: 'u-1', groups: ['devs', 'ops', 'system:authenticated'],
    extra: { scopes: ['read', 'view'], 'example.com/team': ['blue'] },
  });
  const asked = authorizer.asked.map((a) => [a.verb, a.apiGroup, a.resource, a.subresource ?? '', a.namespace ?? '', a.name, a.user.username]);
  assert.deepEqual(asked, [
    ['impersonate', '', 'users', '', '', 'jane', 'admin'],
    ['impersonate', '', 'groups', '', '', 'devs', 'admin'],
    ['impersonate', '', 'groups', '', '', 'ops', 'admin'],
    ['impersonate', group, 'userextras', 'scopes', '', 'read', 'admin'],
    ['impersonate', group, 'userextras', 'scopes', '', 'view', 'admin'],
    ['impersonate', group, 'userextras', 'example.com/team', '', 'blue', 'admin'],
    ['impersonate', group, 'uids', '', '', 'u-1', 'admin'],
    ['create', group, 'selfsubjectreviews', '', '', undefined, 'jane'],
  ], 'the request itself is authorized as the impersonated user');
});

test('a service account name sets the account\'s groups unless groups are named; anonymous stays unauthenticated', async () => {
  const sa = await whoami({ 'Impersonate-User': 'system:serviceaccount:ns1:robot' });
  assert.deepEqual(sa.json.status.userInfo, { username: 'system:serviceaccount:ns1:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'] });
  const first = authorizer.asked[0]!;
  assert.deepEqual([first.resource, first.namespace, first.name], ['serviceaccounts', 'ns1', 'robot']);
  const named = await whoami({ 'Impersonate-User': 'system:serviceaccount:ns1:robot', 'Impersonate-Group': 'bots' });
  assert.deepEqual(named.json.status.userInfo.groups, ['bots', 'system:authenticated']);
  const anonymous = await whoami({ 'Impersonate-User': 'system:anonymous' });
  assert.deepEqual(anonymous.json.status.userInfo, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  const explicit = await whoami({ 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:unauthenticated' });
  assert.deepEqual(explicit.json.status.userInfo.groups, ['system:unauthenticated']);
});

test('each refused impersonation is a 403 in upstream\'s words', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ 'Impersonate-User': 'root' }, 'users "root" is forbidden: User "admin" cannot impersonate resource "users" in API group "" at the cluster scope: not on this test\'s list'],
    [{ 'Impersonate-User': 'jane', 'Impersonate-Group': 'admins' }, 'groups "admins" is forbidden: User "admin" cannot impersonate resource "groups" in API group "" at the cluster scope: not on this test\'s list'],
    [{ 'Impersonate-User': 'system:serviceaccount:kube-system:builder' }, 'serviceaccounts "builder" is forbidden: User "admin" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system": not on this test\'s list'],
    [{ 'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': 'write' }, `userextras.${group} "write" is forbidden: User "admin" cannot impersonate resource "userextras/scopes" in API group "${group}" at the cluster scope: not on this test's list`],
    [{ 'Impersonate-User': 'jane', 'Impersonate-Uid': '0' }, `uids.${group} "0" is forbidden: User "admin" cannot impersonate resource "uids" in API group "${group}" at the cluster scope: not on this test's list`],
  ];
  for (const [headers, message] of cases) {
    const r = await whoami(headers);
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, message);
    assert.ok(!authorizer.asked.some((a) => a.verb === 'create'), 'a refused impersonation stops the request before anything else');
  }
});

test('groups, extras or a uid without a user answer 400', async () => {
  const cases: Record<string, string>[] = [{ 'Impersonate-Group': 'devs' }, { 'Impersonate-Extra-Scopes': 'read' }, { 'Impersonate-Uid': 'u-1' }, { 'Impersonate-User': '', 'Impersonate-Group': 'devs' }];
  for (const headers of cases) {
    const r = await whoami(headers);
    assertStatus(r, 400, 'BadRequest');
    assert.match(r.json.message, /without impersonating a user$/);
  }
});

test('a TokenReview needs create on tokenreviews, as the configured authorizer decides', async () => {
  const body = { apiVersion: `${group}/v1`, kind: 'TokenReview', spec: { token: 'x' } };
  const allowed = await client.post(`/apis/${group}/v1/tokenreviews`, body);
  assert.equal(allowed.status, 201, allowed.text);
  assert.deepEqual(allowed.json.status, { authenticated: false, user: {}, error: 'no token is valid here' });
  const denied = await client.post(`/apis/${group}/v1/tokenreviews`, body, { 'Impersonate-User': 'jane' });
  assertStatus(denied, 403, 'Forbidden');
  assert.equal(denied.json.message, `tokenreviews.${group} is forbidden: User "jane" cannot create resource "tokenreviews" in API group "${group}" at the cluster scope`);
});
