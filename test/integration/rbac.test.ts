// RBAC end to end with static-token users: a user is refused until a Role
// and RoleBinding (made with the real kubectl, which names the upstream
// group) grant it, and then only in that namespace; bindings through groups
// and ClusterRoleBindings; validation and printer columns as upstream.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
let server: TestServer;
let plain: TestClient;

before(async () => {
  const tokens = tokenFile('t-alice,alice,uid-1,devs\nt-bob,bob,uid-2\n');
  server = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['RBAC'] });
  plain = server.client.anonymous();
  for (const ns of ['team', 'other']) assert.equal((await server.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
});

after(async () => {
  plain.close();
  await server.close();
});

const as = (token: string) => ({ Authorization: `Bearer ${token}` });

test('a user may list secrets only once a Role and RoleBinding grant it, and only in that namespace', async () => {
  const refused = await plain.get('/api/v1/namespaces/team/secrets', as('t-alice'));
  assertStatus(refused, 403, 'Forbidden');
  assert.equal(refused.json.message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team"');
  const role = await server.kubectl(['create', 'role', 'secret-reader', '--verb=get,list', '--resource=secrets', '-n', 'team']);
  assert.equal(role.code, 0, role.stderr);
  const binding = await server.kubectl(['create', 'rolebinding', 'alice-reads', '--role=secret-reader', '--user=alice', '-n', 'team']);
  assert.equal(binding.code, 0, binding.stderr);
  await eventually('alice may list secrets in team', async () => (await plain.get('/api/v1/namespaces/team/secrets', as('t-alice'))).status === 200);
  assertStatus(await plain.get('/api/v1/namespaces/other/secrets', as('t-alice')), 403, 'Forbidden');
  assertStatus(await plain.get('/api/v1/secrets', as('t-alice')), 403, 'Forbidden');
  assertStatus(await plain.send('DELETE', '/api/v1/namespaces/team/secrets/x', { headers: as('t-alice') }), 403, 'Forbidden');
  assertStatus(await plain.get('/api/v1/namespaces/team/secrets', as('t-bob')), 403, 'Forbidden');
  // Deleting the binding takes the right away again.
  assert.equal((await server.client.send('DELETE', `${rbac}/namespaces/team/rolebindings/alice-reads`)).status, 200);
  await eventually('alice is refused again', async () => (await plain.get('/api/v1/namespaces/team/secrets', as('t-alice'))).status === 403);
});

test('a ClusterRoleBinding to a group grants everywhere; the kubectl tables show upstream\'s columns', async () => {
  assert.equal((await server.client.post(`${rbac}/clusterroles`, {
    metadata: { name: 'cm-reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }],
  })).status, 201);
  assert.equal((await server.client.post(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'devs-read-cm' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'cm-reader' },
    subjects: [{ kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'robot', namespace: 'team' }],
  })).status, 201);
  await eventually('devs may list configmaps anywhere', async () => (await plain.get('/api/v1/namespaces/other/configmaps', as('t-alice'))).status === 200);
  assert.equal((await plain.get('/api/v1/configmaps', as('t-alice'))).status, 200);
  assertStatus(await plain.get('/api/v1/configmaps', as('t-bob')), 403, 'Forbidden');
  const wide = await server.kubectl(['get', 'clusterrolebinding', 'devs-read-cm', '-o', 'wide']);
  assert.equal(wide.code, 0, wide.stderr);
  assert.match(wide.stdout, /NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS/);
  assert.match(wide.stdout, /devs-read-cm\s+ClusterRole\/cm-reader\s+\S+\s+devs\s+team\/robot/);
  const roles = await server.kubectl(['get', 'clusterrole', 'cm-reader']);
  assert.match(roles.stdout, /NAME\s+CREATED AT\ncm-reader\s+\d{4}-/);
});

test('validation: rules, subjects and roleRef as upstream; roleRef cannot change', async () => {
  const badRole = await server.client.post(`${rbac}/namespaces/team/roles`, {
    metadata: { name: 'bad' }, rules: [{ apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }],
  });
  assertStatus(badRole, 422, 'Invalid');
  assert.deepEqual(badRole.json.details.causes.map((c: any) => c.field), ['rules[0].verbs', 'rules[1].nonResourceURLs']);
  assert.match(badRole.json.message, /namespaced rules cannot apply to non-resource URLs/);
  const slash = await server.client.post(`${rbac}/clusterroles`, { metadata: { name: 'a/b' }, rules: [] });
  assert.equal(slash.status, 422);
  const badBinding = await server.client.post(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'bad' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: 'x' },
    subjects: [{ kind: 'ServiceAccount', name: 'robot' }, { kind: 'Robot', name: 'r' }],
  });
  assertStatus(badBinding, 422, 'Invalid');
  assert.deepEqual(badBinding.json.details.causes.map((c: any) => c.field), ['roleRef.kind', 'subjects[0].namespace', 'subjects[1].kind']);
  const created = await server.client.post(`${rbac}/namespaces/team/rolebindings`, {
    metadata: { name: 'fixed' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'carol' }],
  });
  assert.equal(created.status, 201, created.text);
  // Upstream's defaults fill in the RBAC group.
  assert.equal(created.json.roleRef.apiGroup, vocabulary.rbacGroup);
  assert.equal(created.json.subjects[0].apiGroup, vocabulary.rbacGroup);
  const changed = await server.client.send('PUT', `${rbac}/namespaces/team/rolebindings/fixed`, { body: { ...created.json, roleRef: { ...created.json.roleRef, name: 'edit' } } });
  assertStatus(changed, 422, 'Invalid');
  assert.match(changed.json.message, /roleRef: Invalid value: .*cannot change roleRef/);
});

test('kubectl create clusterrole and clusterrolebinding, and kubectl auth reconcile of upstream manifests, work unmodified', async () => {
  const role = await server.kubectl(['create', 'clusterrole', 'pod-watcher', '--verb=get', '--resource=configmaps,serviceaccounts/token', '--non-resource-url=/logs/*']);
  assert.equal(role.code, 0, role.stderr);
  assert.match(role.stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/pod-watcher created/);
  const binding = await server.kubectl(['create', 'clusterrolebinding', 'bob-watches', '--clusterrole=pod-watcher', '--user=bob', '--group=ops', '--serviceaccount=team:robot']);
  assert.equal(binding.code, 0, binding.stderr);
  const stored = (await server.client.get(`${rbac}/clusterrolebindings/bob-watches`)).json;
  assert.deepEqual(stored.subjects.map((s: any) => `${s.kind}:${s.namespace ?? ''}:${s.name}`), ['User::bob', 'Group::ops', 'ServiceAccount:team:robot']);

  const dir = tempDir();
  const manifest = join(dir, 'rbac.yaml');
  writeFileSync(manifest, [
    'apiVersion: rbac.authorization.k8s.io/v1', 'kind: Role', 'metadata:', '  name: reconciled', '  namespace: team',
    'rules:', '- apiGroups: [""]', '  resources: ["configmaps"]', '  verbs: ["get", "list"]', '---',
    'apiVersion: rbac.authorization.k8s.io/v1', 'kind: RoleBinding', 'metadata:', '  name: reconciled', '  namespace: team',
    'subjects:', '- kind: User', '  name: bob', '  apiGroup: rbac.authorization.k8s.io',
    'roleRef:', '  kind: Role', '  name: reconciled', '  apiGroup: rbac.authorization.k8s.io', '',
  ].join('\n'));
  const first = await server.kubectl(['auth', 'reconcile', '-f', manifest]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /role\.rbac\.authorization\.k8s\.io\/reconciled reconciled/);
  await eventually('bob may list configmaps in team', async () => (await plain.get('/api/v1/namespaces/team/configmaps', as('t-bob'))).status === 200);
  // A second run finds nothing to do; a rule removed meanwhile comes back.
  const current = (await server.client.get(`${rbac}/namespaces/team/roles/reconciled`)).json;
  assert.equal((await server.client.send('PUT', `${rbac}/namespaces/team/roles/reconciled`, { body: { ...current, rules: [] } })).status, 200);
  const second = await server.kubectl(['auth', 'reconcile', '-f', manifest]);
  assert.equal(second.code, 0, second.stderr);
  const restored = (await server.client.get(`${rbac}/namespaces/team/roles/reconciled`)).json;
  assert.deepEqual(restored.rules.flatMap((r: any) => r.verbs).sort(), ['get', 'list']);
});

test('a watch through the upstream group name sends its objects and bookmarks in that version', async () => {
  const upstream = '/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles';
  const watch = await server.client.watch(`${upstream}?watch=true&allowWatchBookmarks=true&timeoutSeconds=2`);
  const ours = await server.client.watch(`${rbac}/namespaces/team/roles?watch=true&timeoutSeconds=2`);
  const created = await server.client.post(upstream, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'watched' }, rules: [],
  });
  assert.equal(created.status, 201);
  assert.equal(created.json.apiVersion, 'rbac.authorization.k8s.io/v1');
  // The streams start with the roles already there; the new one follows.
  const find = async (stream: typeof watch) => {
    for (let n = 1; ; n++) {
      const events = await stream.waitFor(n);
      const found = events.find((e) => e.object?.metadata?.name === 'watched');
      if (found || events.length < n) return found;
    }
  };
  const theirs = await find(watch);
  assert.equal(theirs?.type, 'ADDED');
  assert.equal(theirs.object.apiVersion, 'rbac.authorization.k8s.io/v1');
  // Watchers by our name, sharing the event, still get our version.
  const mine = await find(ours);
  assert.equal(mine?.object.apiVersion, `${vocabulary.rbacGroup}/v1`);
  const bookmarks = (await watch.waitEnd(5000)).filter((e) => e.type === 'BOOKMARK');
  assert.ok(bookmarks.length >= 1, 'a bookmark before the stream ends');
  for (const b of bookmarks) assert.equal(b.object.apiVersion, 'rbac.authorization.k8s.io/v1');
  ours.close();
});
