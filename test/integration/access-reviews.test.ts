// Access reviews over HTTPS answer exactly as the real request is answered:
// SubjectAccessReview and LocalSubjectAccessReview (asked by the admin about
// a user), SelfSubjectAccessReview (asked by the user), and the rules of
// SelfSubjectRulesReview; kubectl auth can-i (with --list and --as) works
// unmodified; impersonation needs the impersonate right.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const authz = vocabulary.authorizationGroup;
const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
let server: TestServer;
let plain: TestClient;
const alice = { Authorization: 'Bearer t-alice' };

before(async () => {
  const tokens = tokenFile('t-alice,alice,uid-1,devs\n');
  server = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['RBAC'] });
  plain = server.client.anonymous();
  assert.equal((await server.client.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201);
  assert.equal((await server.client.post(`${rbac}/namespaces/team/roles`, {
    metadata: { name: 'cm' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }, { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['open'] }],
  })).status, 201);
  assert.equal((await server.client.post(`${rbac}/namespaces/team/rolebindings`, {
    metadata: { name: 'cm' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: 'cm' }, subjects: [{ kind: 'Group', name: 'devs' }],
  })).status, 201);
  await eventually('alice may list configmaps in team', async () => (await plain.get('/api/v1/namespaces/team/configmaps', alice)).status === 200);
});

after(async () => {
  plain.close();
  await server.close();
});

interface Case { verb: string; resource: string; namespace?: string; name?: string; path: string; method: string }
const cases: Case[] = [
  { verb: 'list', resource: 'configmaps', namespace: 'team', path: '/api/v1/namespaces/team/configmaps', method: 'GET' },
  { verb: 'get', resource: 'configmaps', namespace: 'team', name: 'x', path: '/api/v1/namespaces/team/configmaps/x', method: 'GET' },
  { verb: 'delete', resource: 'configmaps', namespace: 'team', name: 'x', path: '/api/v1/namespaces/team/configmaps/x', method: 'DELETE' },
  { verb: 'list', resource: 'configmaps', namespace: 'other', path: '/api/v1/namespaces/other/configmaps', method: 'GET' },
  { verb: 'get', resource: 'secrets', namespace: 'team', name: 'open', path: '/api/v1/namespaces/team/secrets/open', method: 'GET' },
  { verb: 'get', resource: 'secrets', namespace: 'team', name: 'closed', path: '/api/v1/namespaces/team/secrets/closed', method: 'GET' },
];

const attributes = (c: Case) => ({ verb: c.verb, resource: c.resource, ...(c.namespace ? { namespace: c.namespace } : {}), ...(c.name ? { name: c.name } : {}) });

test('every review answers as the real request does', async () => {
  for (const c of cases) {
    const real = await plain.send(c.method, c.path, { headers: alice });
    const allowed = real.status !== 403;
    const sar = await server.client.post(`/apis/${authz}/v1/subjectaccessreviews`, {
      apiVersion: `${authz}/v1`, kind: 'SubjectAccessReview', spec: { user: 'alice', groups: ['devs', 'system:authenticated'], resourceAttributes: attributes(c) },
    });
    assert.equal(sar.status, 201, sar.text);
    assert.equal(sar.json.status.allowed, allowed, `SubjectAccessReview ${JSON.stringify(c)}`);
    if (allowed) assert.match(sar.json.status.reason, /^RBAC: allowed by RoleBinding "cm\/team" of Role "cm" to Group "devs"$/);
    const lsar = await server.client.post(`/apis/${authz}/v1/namespaces/${c.namespace}/localsubjectaccessreviews`, {
      apiVersion: `${authz}/v1`, kind: 'LocalSubjectAccessReview', spec: { user: 'alice', groups: ['devs'], resourceAttributes: attributes(c) },
    });
    assert.equal(lsar.status, 201, lsar.text);
    assert.equal(lsar.json.status.allowed, allowed, `LocalSubjectAccessReview ${JSON.stringify(c)}`);
    assert.equal(lsar.json.metadata.namespace, c.namespace);
    const self = await plain.post(`/apis/${authz}/v1/selfsubjectaccessreviews`, { apiVersion: `${authz}/v1`, kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attributes(c) } }, alice);
    assert.equal(self.status, 201, self.text);
    assert.equal(self.json.status.allowed, allowed, `SelfSubjectAccessReview ${JSON.stringify(c)}`);
  }
  const path = await plain.post(`/apis/${authz}/v1/selfsubjectaccessreviews`, { spec: { nonResourceAttributes: { verb: 'get', path: '/version' } } }, alice);
  assert.equal(path.json.status.allowed, true);
  assert.equal((await plain.get('/version', alice)).status, 200);
});

test('the rules review lists what the user holds in the namespace', async () => {
  const r = await plain.post(`/apis/${authz}/v1/selfsubjectrulesreviews`, { apiVersion: `${authz}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: 'team' } }, alice);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status.incomplete, false);
  assert.ok(r.json.status.resourceRules.some((x: any) => x.resources.includes('configmaps') && x.verbs.includes('list')));
  assert.ok(r.json.status.resourceRules.some((x: any) => x.resources.includes('secrets') && x.resourceNames?.includes('open')));
  assert.ok(r.json.status.nonResourceRules.some((x: any) => x.nonResourceURLs.includes('/version')));
  const other = await plain.post(`/apis/${authz}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'other' } }, alice);
  assert.equal(other.json.status.resourceRules.some((x: any) => x.resources.includes('configmaps')), false);
  assertStatus(await plain.post(`/apis/${authz}/v1/selfsubjectrulesreviews`, { spec: {} }, alice), 400, 'BadRequest');
});

test('invalid reviews answer 422 as upstream; a local review for another namespace too', async () => {
  const mismatch = await server.client.post(`/apis/${authz}/v1/namespaces/team/localsubjectaccessreviews`, {
    spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } },
  });
  assertStatus(mismatch, 422, 'Invalid');
  assert.equal(mismatch.json.message, `LocalSubjectAccessReview.${vocabulary.authorizationGroup} "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`);
  const neither = await server.client.post(`/apis/${authz}/v1/subjectaccessreviews`, { spec: {} });
  assertStatus(neither, 422, 'Invalid');
  assert.deepEqual(neither.json.details.causes.map((c: any) => c.field), ['spec.resourceAttributes', 'spec.user']);
  const both = await plain.post(`/apis/${authz}/v1/selfsubjectaccessreviews`, { spec: { resourceAttributes: {}, nonResourceAttributes: {} } }, alice);
  assertStatus(both, 422, 'Invalid');
  const named = await server.client.post(`/apis/${authz}/v1/subjectaccessreviews`, { metadata: { name: 'x' }, spec: { user: 'a', resourceAttributes: {} } });
  assertStatus(named, 422, 'Invalid');
  assert.match(named.json.message, /metadata: Invalid value: .*must be empty/);
  // User data never becomes an object's prototype: an extra key named __proto__ is just a key.
  const proto = await server.client.send('POST', `/apis/${authz}/v1/subjectaccessreviews`, {
    raw: '{"spec":{"user":"alice","groups":["devs"],"extra":{"__proto__":["x"]},"resourceAttributes":{"verb":"list","resource":"configmaps","namespace":"team"}}}',
    headers: { 'Content-Type': 'application/json' },
  });
  assert.equal(proto.status, 201, proto.text);
  assert.equal(proto.json.status.allowed, true);
  // Asking about someone else needs the right to create SubjectAccessReviews.
  assertStatus(await plain.post(`/apis/${authz}/v1/subjectaccessreviews`, { spec: { user: 'x', resourceAttributes: {} } }, alice), 403, 'Forbidden');
});

test('kubectl auth can-i answers for the admin, --as a user, and lists with --list', async () => {
  const admin = await server.kubectl(['auth', 'can-i', 'delete', 'secrets', '-n', 'team']);
  assert.equal(admin.stdout.trim(), 'yes');
  const yes = await server.kubectl(['auth', 'can-i', 'list', 'configmaps', '-n', 'team', '--as', 'alice', '--as-group', 'devs']);
  assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
  const no = await server.kubectl(['auth', 'can-i', 'list', 'configmaps', '-n', 'other', '--as', 'alice', '--as-group', 'devs']);
  assert.equal(no.code, 1);
  assert.equal(no.stdout.trim(), 'no');
  const list = await server.kubectl(['auth', 'can-i', '--list', '-n', 'team', '--as', 'alice', '--as-group', 'devs']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^configmaps\s+\[\]\s+\[\]\s+\[get list\]$/m);
  assert.match(list.stdout, /^secrets\s+\[\]\s+\[open\]\s+\[get\]$/m);
  assert.match(list.stdout, /^\s+\[\/version\]\s+\[\]\s+\[get\]$/m);
});

test('impersonation is refused without the impersonate right and allowed with it', async () => {
  const as = { ...alice, 'Impersonate-User': 'bob' };
  const refused = await plain.get('/api/v1/namespaces/team/configmaps', as);
  assertStatus(refused, 403, 'Forbidden');
  assert.equal(refused.json.message, 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
  assert.equal((await server.client.post(`${rbac}/clusterroles`, { metadata: { name: 'impersonate-bob' }, rules: [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] }] })).status, 201);
  assert.equal((await server.client.post(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'alice-as-bob' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'impersonate-bob' }, subjects: [{ kind: 'User', name: 'alice' }],
  })).status, 201);
  // Allowed to act as bob, who himself may not list configmaps: the request is now judged as bob's.
  const asBob = await eventually('alice may impersonate bob', async () => {
    const r = await plain.get('/api/v1/namespaces/team/configmaps', as);
    return r.json?.message?.includes('User "bob"') ? r : undefined;
  });
  assertStatus(asBob, 403, 'Forbidden');
  const whoami = await plain.post(`/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' }, as);
  assert.equal(whoami.json.status.userInfo.username, 'bob');
  assertStatus(await plain.get('/version', { ...alice, 'Impersonate-User': 'carol' }), 403, 'Forbidden');
});
