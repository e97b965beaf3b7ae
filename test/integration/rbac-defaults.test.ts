// The default policy over HTTPS: anonymous requests reach health and version
// only; signed-in users discover the API; a ClusterRole labelled for `view`
// is aggregated into it (and through edit into admin); on a restart a
// default role a user edited is restored, unless annotated autoupdate "false".

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import type { ServerOptions } from '../../src/server/options.js';

const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
const group = vocabulary.rbacGroup;
const dataDir = tempDir();
let options: Partial<ServerOptions>;
let server: TestServer;
let plain: TestClient;
const alice = { Authorization: 'Bearer t-alice' };

before(async () => {
  const tokens = tokenFile('t-alice,alice,uid-1\n');
  options = { tokenAuthFile: tokens, authorizationMode: ['RBAC'], storageBackend: 'sqlite', dataDir };
  server = await startTestServer(options);
  plain = server.client.anonymous();
});

after(async () => {
  plain.close();
  await server.close();
});

test('anonymous requests read /version, /readyz, /healthz and /livez, and nothing else', async () => {
  for (const path of ['/version', '/readyz', '/healthz', '/livez']) assert.equal((await plain.get(path)).status, 200, path);
  const namespaces = await plain.get('/api/v1/namespaces');
  assertStatus(namespaces, 403, 'Forbidden');
  assert.equal(namespaces.json.message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
  assertStatus(await plain.get('/api'), 403, 'Forbidden');
  assertStatus(await plain.get('/readyz/ping'), 403, 'Forbidden');
});

test('signed-in users discover the API and learn who they are, and no more', async () => {
  assert.equal((await plain.get('/apis', alice)).status, 200);
  assert.equal((await plain.get(`/apis/${group}/v1`, alice)).status, 200);
  const whoami = await plain.post(`/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' }, alice);
  assert.equal(whoami.status, 201, whoami.text);
  assertStatus(await plain.get('/api/v1/namespaces/default/configmaps', alice), 403, 'Forbidden');
});

test('the default roles and bindings exist, labelled and annotated for autoupdate', async () => {
  const admin = (await server.client.get(`${rbac}/clusterrolebindings/cluster-admin`)).json;
  assert.deepEqual(admin.subjects, [{ kind: 'Group', apiGroup: group, name: 'system:masters' }]);
  assert.equal(admin.metadata.labels[vocabulary.bootstrappingLabel], 'rbac-defaults');
  assert.equal(admin.metadata.annotations[vocabulary.rbacAutoupdateAnnotation], 'true');
  const names = (await server.client.get(`${rbac}/clusterroles`)).json.items.map((r: any) => r.metadata.name);
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer',
    'system:auth-delegator', 'system:service-account-issuer-discovery', 'system:node-bootstrapper', `system:${vocabulary.certificatesGroup}:apiserver-client-approver`]) {
    assert.ok(names.includes(name), name);
  }
  const roles = (await server.client.get(`/apis/${group}/v1/namespaces/${vocabulary.systemNamespace}/roles`)).json.items.map((r: any) => r.metadata.name);
  assert.ok(roles.includes('system:controller:bootstrap-signer'));
});

test('view gathers the aggregate-to-view roles, edit gathers view, admin gathers edit', async () => {
  const rulesOf = async (name: string) => (await server.client.get(`${rbac}/clusterroles/${name}`)).json.rules ?? [];
  const has = (rules: any[], resource: string, verb: string) => rules.some((r) => r.resources?.includes(resource) && (r.verbs.includes(verb) || r.verbs.includes('*')));
  await eventually('view reads configmaps', async () => has(await rulesOf('view'), 'configmaps', 'list'));
  await eventually('edit writes secrets and reads configmaps', async () => { const r = await rulesOf('edit'); return has(r, 'secrets', 'create') && has(r, 'configmaps', 'list'); });
  await eventually('admin writes roles', async () => has(await rulesOf('admin'), 'roles', 'create'));
  assert.equal(has(await rulesOf('view'), 'secrets', 'get'), false, 'view never reads secrets');

  assert.equal((await server.client.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201);
  assert.equal((await server.client.post(`${rbac}/namespaces/team/rolebindings`, {
    metadata: { name: 'alice-views' }, roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice' }],
  })).status, 201);
  await eventually('alice may list configmaps in team', async () => (await plain.get('/api/v1/namespaces/team/configmaps', alice)).status === 200);
  assertStatus(await plain.get('/api/v1/namespaces/team/secrets', alice), 403, 'Forbidden');
  assert.equal((await server.client.post(`${rbac}/clusterroles`, {
    metadata: { name: 'secret-peeker', labels: { [`${vocabulary.rbacAggregateToLabelPrefix}view`]: 'true' } },
    rules: [{ verbs: ['list'], apiGroups: [''], resources: ['secrets'] }],
  })).status, 201);
  await eventually('view gathers secret-peeker, so alice may list secrets', async () => (await plain.get('/api/v1/namespaces/team/secrets', alice)).status === 200);
  assert.ok(has(await rulesOf('admin'), 'secrets', 'list'));
  // Taking the label away takes the rule away again.
  const peeker = (await server.client.get(`${rbac}/clusterroles/secret-peeker`)).json;
  delete peeker.metadata.labels;
  assert.equal((await server.client.send('PUT', `${rbac}/clusterroles/secret-peeker`, { body: peeker })).status, 200);
  await eventually('view forgets secret-peeker', async () => !has(await rulesOf('view'), 'secrets', 'list'));
});

test('a restart restores an edited default role, but keeps one annotated autoupdate "false"', async () => {
  const discovery = (await server.client.get(`${rbac}/clusterroles/system:discovery`)).json;
  discovery.rules = [{ verbs: ['get'], nonResourceURLs: ['/apis', '/apis/*'] }, { verbs: ['get'], nonResourceURLs: ['/mine'] }];
  assert.equal((await server.client.send('PUT', `${rbac}/clusterroles/system:discovery`, { body: discovery })).status, 200);
  const basic = (await server.client.get(`${rbac}/clusterroles/system:basic-user`)).json;
  basic.rules = [];
  basic.metadata.annotations[vocabulary.rbacAutoupdateAnnotation] = 'false';
  assert.equal((await server.client.send('PUT', `${rbac}/clusterroles/system:basic-user`, { body: basic })).status, 200);
  const binding = (await server.client.get(`${rbac}/clusterrolebindings/system:public-info-viewer`)).json;
  binding.subjects = binding.subjects.filter((s: any) => s.name !== 'system:unauthenticated');
  assert.equal((await server.client.send('PUT', `${rbac}/clusterrolebindings/system:public-info-viewer`, { body: binding })).status, 200);

  plain.close();
  await server.close();
  server = await startTestServer(options);
  plain = server.client.anonymous();

  const restored = (await server.client.get(`${rbac}/clusterroles/system:discovery`)).json;
  const urls = restored.rules.flatMap((r: any) => r.nonResourceURLs);
  for (const url of ['/version', '/api', '/healthz', '/mine']) assert.ok(urls.includes(url), url);
  const kept = (await server.client.get(`${rbac}/clusterroles/system:basic-user`)).json;
  assert.deepEqual(kept.rules ?? [], []);
  assert.equal((await plain.get('/version')).status, 200, 'the anonymous subject is back');
});
