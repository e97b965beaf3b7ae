// Escalation prevention over HTTPS: a user who may write roles and bindings
// can grant only what it holds; more is refused with upstream's message
// naming what it lacks, unless it holds `escalate` (roles) or `bind` (the
// referenced role); system:masters may do anything.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
const group = vocabulary.rbacGroup;
let server: TestServer;
let plain: TestClient;
const alice = { Authorization: 'Bearer t-alice' };

async function admin(path: string, body: unknown): Promise<void> {
  const r = await server.client.post(path, body);
  assert.equal(r.status, 201, r.text);
}

/** Grants alice a ClusterRole's rules in `team` and waits until the index has it. */
async function grantAlice(name: string, rules: unknown[]): Promise<void> {
  await admin(`${rbac}/clusterroles`, { metadata: { name }, rules });
  await admin(`${rbac}/namespaces/team/rolebindings`, { metadata: { name }, roleRef: { apiGroup: group, kind: 'ClusterRole', name }, subjects: [{ kind: 'User', name: 'alice' }] });
}

before(async () => {
  const tokens = tokenFile('t-alice,alice,uid-1,devs\n');
  server = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['RBAC'] });
  plain = server.client.anonymous();
  await admin('/api/v1/namespaces', { metadata: { name: 'team' } });
  await grantAlice('rbac-writer', [
    { verbs: ['create', 'update', 'get'], apiGroups: [group], resources: ['roles', 'rolebindings'] },
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] },
  ]);
  await admin(`${rbac}/clusterroles`, { metadata: { name: 'secret-admin' }, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }] });
  await eventually('alice may create roles', async () => (await plain.get(`${rbac}/namespaces/team/roles/none`, alice)).status === 404);
});

after(async () => {
  plain.close();
  await server.close();
});

const role = (name: string, verbs: string[]) => ({ metadata: { name }, rules: [{ verbs, apiGroups: [''], resources: ['secrets'] }] });

test('a role granting only held rules is created; more is refused, naming what is not held', async () => {
  const held = await plain.post(`${rbac}/namespaces/team/roles`, role('reader', ['get', 'list']), alice);
  assert.equal(held.status, 201, held.text);
  const more = await plain.post(`${rbac}/namespaces/team/roles`, role('deleter', ['get', 'delete', 'deletecollection']), alice);
  assertStatus(more, 403, 'Forbidden');
  assert.equal(more.json.message, `roles.${group} "deleter" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["delete" "deletecollection"]}`);
  assert.deepEqual(more.json.details, { name: 'deleter', group, kind: 'roles' });
  // An update that adds rules is checked the same way; one that only relabels bookkeeping is not refused for what it already had.
  const current = (await plain.get(`${rbac}/namespaces/team/roles/reader`, alice)).json;
  const widened = await plain.send('PUT', `${rbac}/namespaces/team/roles/reader`, { body: { ...current, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] }, headers: alice });
  assertStatus(widened, 403, 'Forbidden');
  assert.match(widened.json.message, /not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/);
});

test('a binding to a role whose rules the user lacks is refused; to a missing role it is 404', async () => {
  const binding = (name: string, ref: string) => ({ metadata: { name }, roleRef: { apiGroup: group, kind: 'ClusterRole', name: ref }, subjects: [{ kind: 'User', name: 'bob' }] });
  const refused = await plain.post(`${rbac}/namespaces/team/rolebindings`, binding('bob-admin', 'secret-admin'), alice);
  assertStatus(refused, 403, 'Forbidden');
  assert.match(refused.json.message, new RegExp(`^rolebindings\\.${group.replace(/\./g, '\\.')} "bob-admin" is forbidden: user "alice" .* not currently held:\\n\\{APIGroups:\\[""\\], Resources:\\["secrets"\\], Verbs:\\["\\*"\\]\\}$`));
  const missing = await plain.post(`${rbac}/namespaces/team/rolebindings`, binding('bob-none', 'no-such-role'), alice);
  assertStatus(missing, 404, 'NotFound');
  assert.equal(missing.json.message, `clusterrole.${group} "no-such-role" not found`);
  // A binding to a role whose rules alice holds is fine.
  await admin(`${rbac}/clusterroles`, { metadata: { name: 'secret-lister' }, rules: [{ verbs: ['list'], apiGroups: [''], resources: ['secrets'] }] });
  assert.equal((await plain.post(`${rbac}/namespaces/team/rolebindings`, binding('bob-lists', 'secret-lister'), alice)).status, 201);
});

test('`bind` on the referenced role lets a user bind it; `escalate` lets it write any role', async () => {
  await grantAlice('binder', [{ verbs: ['bind'], apiGroups: [group], resources: ['clusterroles'], resourceNames: ['secret-admin'] }]);
  const body = { metadata: { name: 'bob-secret-admin' }, roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'secret-admin' }, subjects: [{ kind: 'User', name: 'bob' }] };
  await eventually('alice may bind secret-admin', async () => (await plain.post(`${rbac}/namespaces/team/rolebindings`, body, alice)).status === 201);
  await grantAlice('escalator', [{ verbs: ['escalate'], apiGroups: [group], resources: ['roles'] }]);
  await eventually('alice may write any role', async () => (await plain.post(`${rbac}/namespaces/team/roles`, role('everything', ['*']), alice)).status === 201);
});

test('system:masters writes any role and binding', async () => {
  await admin(`${rbac}/clusterroles`, { metadata: { name: 'root' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] } });
  await admin(`${rbac}/clusterrolebindings`, { metadata: { name: 'root' }, roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'cluster-admin-like' }, subjects: [{ kind: 'User', name: 'x' }] });
});

test('setting an aggregationRule needs cluster-admin rights, as it can gather anything', async () => {
  await admin(`${rbac}/clusterroles`, { metadata: { name: 'clusterrole-writer' }, rules: [{ verbs: ['create'], apiGroups: [group], resources: ['clusterroles'] }] });
  await admin(`${rbac}/clusterrolebindings`, { metadata: { name: 'alice-writes-clusterroles' }, roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'clusterrole-writer' }, subjects: [{ kind: 'User', name: 'alice' }] });
  await eventually('alice may create a plain ClusterRole', async () => (await plain.post(`${rbac}/clusterroles`, { metadata: { name: 'empty' } }, alice)).status === 201);
  const gathering = await plain.post(`${rbac}/clusterroles`, { metadata: { name: 'gatherer' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { any: 'thing' } }] } }, alice);
  assertStatus(gathering, 403, 'Forbidden');
  assert.equal(gathering.json.message, `clusterroles.${group} "gatherer" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
});
