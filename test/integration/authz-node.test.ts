// The Node authorizer and NodeRestriction against a real server
// (--authorization-mode=Node,RBAC): a node agent reads what its own pods
// lead to and nothing else, lists pods only by its node, writes only its own
// Node (never its taints or restricted labels), its pods' status, its own
// Lease and tokens for its own pods, with upstream's messages. One node
// agent's identity comes from a CertificateSigningRequest, as a real one's.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, testControllers, tokenFile, type TestServer } from '../support/server.js';
import { TestClient, type Response } from '../support/client.js';
import { createTokenSecret } from '../support/bootstrap.js';
import { eventually } from '../support/eventually.js';
import { bootstrapNodeAgent, discoverCluster } from '../../src/client/index.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const ns = 'work';
const joinToken = 'nodejn.0123456789abcdef';
let s: TestServer;

/** Requests as a bearer token's user. */
function as(token: string) {
  const anonymous = s.client.anonymous();
  const headers = { Authorization: `Bearer ${token}` };
  return {
    get: (path: string) => anonymous.send('GET', path, { headers }),
    post: (path: string, body: unknown) => anonymous.send('POST', path, { headers, body }),
    put: (path: string, body: unknown) => anonymous.send('PUT', path, { headers, body }),
    patch: (path: string, body: unknown) => anonymous.send('PATCH', path, { headers: { ...headers, 'Content-Type': 'application/merge-patch+json' }, body }),
    delete: (path: string) => anonymous.send('DELETE', path, { headers }),
    close: () => anonymous.close(),
  };
}
let n1: ReturnType<typeof as>;
let alice: ReturnType<typeof as>;

async function created(path: string, body: Record<string, unknown>): Promise<any> {
  const r = await s.client.post(path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

function pod(name: string, node: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: node, serviceAccountName: 'runner', containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

function assertForbidden(r: Response, message: string): void {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal(r.json.message, message);
}

const forbiddenGet = (resource: string, name: string, why: string) =>
  `${resource} "${name}" is forbidden: User "system:node:n1" cannot get resource "${resource}" in API group "" in the namespace "${ns}": ${why}`;

before(async () => {
  const tokens = tokenFile([
    'node-one-token,system:node:n1,n1,"system:nodes"',
    'alice-token,alice,alice,""',
    'nameless-token,system:node:,nameless,"system:nodes"',
  ].join('\n') + '\n');
  s = await startTestServer({
    authorizationMode: ['Node', 'RBAC'], tokenAuthFile: tokens, enableAdmissionPlugins: ['NodeRestriction'],
    enableBootstrapTokenAuth: true, controllers: [...testControllers, 'bootstrapsigner'],
  });
  n1 = as('node-one-token');
  alice = as('alice-token');
  await created('/api/v1/namespaces', { metadata: { name: ns } });
  await created('/api/v1/namespaces', { metadata: { name: vocabulary.nodeLeaseNamespace } });
  await created(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'runner' } });
  for (const name of ['n1', 'n2']) await created('/api/v1/nodes', { metadata: { name } });
  for (const name of ['mine', 'theirs', 'volume-key']) await created(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name }, stringData: { k: 'v' } });
  await created(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'settings' }, data: { k: 'v' } });
  await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
    metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  await created('/api/v1/persistentvolumes', {
    metadata: { name: 'disk' },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], claimRef: { namespace: ns, name: 'data' },
      csi: { driver: 'disk.example.com', volumeHandle: 'h1', nodePublishSecretRef: { name: 'volume-key', namespace: ns } },
    },
  });
  await created(`/api/v1/namespaces/${ns}/pods`, pod('web', 'n1', {
    containers: [{ name: 'c', image: 'busybox', env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'mine', key: 'k' } } }] }],
    volumes: [{ name: 'settings', configMap: { name: 'settings' } }, { name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
  }));
  await created(`/api/v1/namespaces/${ns}/pods`, pod('other', 'n2', {
    containers: [{ name: 'c', image: 'busybox', envFrom: [{ secretRef: { name: 'theirs' } }] }],
  }));
  // The graph is fed by informers: wait until the node reads its pod's secret.
  await eventually('the node authorizer knows the pods', async () => (await n1.get(`/api/v1/namespaces/${ns}/secrets/mine`)).status === 200);
});

after(async () => {
  n1?.close();
  alice?.close();
  await s?.close();
});

test('a node reads the secrets, config maps, claims and volumes its pods lead to, and no others', async () => {
  const base = `/api/v1/namespaces/${ns}`;
  assert.equal((await n1.get(`${base}/secrets/mine`)).status, 200);
  assert.equal((await n1.get(`${base}/configmaps/settings`)).status, 200);
  assert.equal((await n1.get(`${base}/persistentvolumeclaims/data`)).status, 200);
  assert.equal((await n1.get('/api/v1/persistentvolumes/disk')).status, 200);
  // node ← pod ← claim ← volume ← secret
  assert.equal((await n1.get(`${base}/secrets/volume-key`)).status, 200);
  assertForbidden(await n1.get(`${base}/secrets/theirs`), forbiddenGet('secrets', 'theirs', "no relationship found between node 'n1' and this object"));
  // One object by a metadata.name field selector is that object's read; a whole list is not.
  assert.equal((await n1.get(`${base}/secrets?fieldSelector=metadata.name%3Dmine`)).status, 200);
  const all = await n1.get(`${base}/secrets`);
  assert.equal(all.status, 403, all.text);
  assert.match(all.json.message, /cannot list resource "secrets" in API group "" in the namespace "work": No Object name found$/);
  const write = await n1.put(`${base}/secrets/mine`, { metadata: { name: 'mine' }, stringData: { k: 'changed' } });
  assert.equal(write.status, 403, write.text);
  assert.match(write.json.message, /can only read resources of this type$/);
});

test('a node lists and watches pods only by its own node name, and reads its own Node only', async () => {
  const byNode = await n1.get(`/api/v1/pods?fieldSelector=spec.nodeName%3Dn1`);
  assert.equal(byNode.status, 200, byNode.text);
  assert.deepEqual(byNode.json.items.map((p: any) => p.metadata.name), ['web']);
  const everything = await n1.get('/api/v1/pods');
  assert.equal(everything.status, 403, everything.text);
  assert.match(everything.json.message, /can only list\/watch pods with spec.nodeName field selector$/);
  assert.equal((await n1.get(`/api/v1/pods?fieldSelector=spec.nodeName%3Dn2`)).status, 403);
  assert.equal((await n1.get(`/api/v1/namespaces/${ns}/pods/web`)).status, 200);
  assert.equal((await n1.get(`/api/v1/namespaces/${ns}/pods/other`)).status, 403);
  assert.equal((await n1.get('/api/v1/nodes/n1')).status, 200);
  const other = await n1.get('/api/v1/nodes/n2');
  assert.equal(other.status, 403);
  assert.match(other.json.message, /: node 'n1' cannot read 'n2', only its own Node object$/);
  // Rules every node holds: services for its containers' environment.
  assert.equal((await n1.get('/api/v1/services')).status, 200);
});

test('users who are not node agents get nothing from the Node authorizer, and a node agent with no name is refused', async () => {
  const r = await alice.get(`/api/v1/namespaces/${ns}/secrets/mine`);
  assert.equal(r.status, 403);
  assert.equal(r.json.message, `secrets "mine" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "${ns}"`);
  const nameless = as('nameless-token');
  const n = await nameless.get('/api/v1/nodes/n1');
  nameless.close();
  assert.equal(n.status, 403);
  assert.match(n.json.message, /: unknown node for user "system:node:"$/);
});

test('NodeRestriction: a node updates its own Node but not its taints, restricted labels or another Node, and never deletes it', async () => {
  const ok = await n1.patch('/api/v1/nodes/n1', { metadata: { labels: { [`${vocabulary.hostnameLabel}`]: 'n1', 'kubernetes.io/arch': 'amd64' } } });
  assert.equal(ok.status, 200, ok.text);
  const status = await n1.patch('/api/v1/nodes/n1/status', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  assert.equal(status.status, 200, status.text);
  assertForbidden(await n1.patch('/api/v1/nodes/n1', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }),
    'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
  const restricted = `${vocabulary.nodeRestrictionLabelDomain}/pool`;
  assertForbidden(await n1.patch('/api/v1/nodes/n1', { metadata: { labels: { [restricted]: 'gold' } } }),
    `nodes "n1" is forbidden: is not allowed to modify labels: ${restricted}`);
  assertForbidden(await n1.patch('/api/v1/nodes/n2', { metadata: { labels: { a: 'b' } } }), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
  // Nodes hold no right to delete Nodes; granted one through RBAC, NodeRestriction still refuses (the specification's rule).
  assertForbidden(await n1.delete('/api/v1/nodes/n1'), 'nodes "n1" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope');
  await created(`/apis/${vocabulary.rbacGroup}/v1/clusterroles`, { metadata: { name: 'node-deleter' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] }] });
  await created(`/apis/${vocabulary.rbacGroup}/v1/clusterrolebindings`, {
    metadata: { name: 'node-deleter' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'node-deleter' },
    subjects: [{ apiGroup: vocabulary.rbacGroup, kind: 'User', name: 'system:node:n1' }],
  });
  const refused = await eventually('the binding is in force', async () => {
    const r = await n1.delete('/api/v1/nodes/n1');
    return /cannot delete resource/.test(r.json?.message ?? '') ? undefined : r;
  });
  assertForbidden(refused, 'nodes "n1" is forbidden: node "n1" is not allowed to delete nodes');
  assert.equal((await s.client.get('/api/v1/nodes/n1')).status, 200);
});

test('NodeRestriction: pod status only of its own pods, mirror pods only, tokens only for its own pods, its own Lease only', async () => {
  const base = `/api/v1/namespaces/${ns}`;
  assert.equal((await n1.patch(`${base}/pods/web/status`, { status: { phase: 'Running' } })).status, 200);
  assertForbidden(await n1.patch(`${base}/pods/other/status`, { status: { phase: 'Running' } }),
    'pods "other" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
  assertForbidden(await n1.post(`${base}/pods`, pod('static', 'n1')),
    `pods "static" is forbidden: pod does not have "${vocabulary.mirrorPodAnnotation}" annotation, node "n1" can only create mirror pods`);
  assertForbidden(await n1.delete(`${base}/pods/other`), 'pods "other" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');

  const web = (await s.client.get(`${base}/pods/web`)).json;
  const tokenFor = (p: any) => ({
    apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'TokenRequest',
    spec: { audiences: ['api'], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: p.metadata.name, uid: p.metadata.uid } },
  });
  const token = await n1.post(`${base}/serviceaccounts/runner/token`, tokenFor(web));
  assert.equal(token.status, 201, token.text);
  const other = (await s.client.get(`${base}/pods/other`)).json;
  assertForbidden(await n1.post(`${base}/serviceaccounts/runner/token`, tokenFor(other)),
    'serviceaccounts "runner" is forbidden: node requested token bound to a pod scheduled on a different node');
  assertForbidden(await n1.post(`${base}/serviceaccounts/runner/token`, { ...tokenFor(web), spec: { audiences: ['api'] } }),
    'serviceaccounts "runner" is forbidden: node requested token not bound to a pod');

  const leases = `/apis/${vocabulary.coordinationGroup}/v1/namespaces/${vocabulary.nodeLeaseNamespace}/leases`;
  const lease = (name: string) => ({ apiVersion: `${vocabulary.coordinationGroup}/v1`, kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } });
  assert.equal((await n1.post(leases, lease('n1'))).status, 201);
  assertForbidden(await n1.post(leases, lease('n2')), 'leases.coordination.plat.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
  const elsewhere = await n1.get(`/apis/${vocabulary.coordinationGroup}/v1/namespaces/${ns}/leases/n1`);
  assert.equal(elsewhere.status, 403);
  assert.match(elsewhere.json.message, /can only access leases in the "plat-node-lease" system namespace$/);
});

test('what a pod led to is no longer readable once the pod is gone', async () => {
  const base = `/api/v1/namespaces/${ns}`;
  await created(`${base}/secrets`, { metadata: { name: 'short-lived' }, stringData: { k: 'v' } });
  await created(`${base}/pods`, pod('brief', 'n1', { imagePullSecrets: [{ name: 'short-lived' }] }));
  await eventually('the new pod leads to its secret', async () => (await n1.get(`${base}/secrets/short-lived`)).status === 200);
  assert.equal((await s.client.delete(`${base}/pods/brief?gracePeriodSeconds=0`)).status, 200);
  await eventually('the deleted pod leads nowhere', async () => (await n1.get(`${base}/secrets/short-lived`)).status === 403);
});

test('a node agent whose certificate came through a CertificateSigningRequest reads its pods\' secret and nothing else', async () => {
  await createTokenSecret(s, joinToken, { usageSigning: true });
  await eventually('cluster-info is signed for the token', async () =>
    (await s.client.get(`/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps/cluster-info`)).json?.data?.['jws-kubeconfig-nodejn'] !== undefined);
  for (const [name, role] of [['node-request', 'system:node-bootstrapper'], ['node-approve', `system:${vocabulary.certificatesGroup}:certificatesigningrequests:nodeclient`]]) {
    await created(`/apis/${vocabulary.rbacGroup}/v1/clusterrolebindings`, {
      metadata: { name }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: vocabulary.rbacGroup, kind: 'Group', name: 'system:bootstrappers' }],
    });
  }
  const issued = await bootstrapNodeAgent(await discoverCluster(s.url, joinToken), joinToken, 'n2', { timeoutMs: 15_000 });
  const path = join(tempDir(), 'n2.kubeconfig');
  writeFileSync(path, issued.kubeconfig);
  const node = TestClient.fromKubeconfig(path);
  try {
    assert.equal((await node.get(`/api/v1/namespaces/${ns}/secrets/theirs`)).status, 200);
    const refused = await node.get(`/api/v1/namespaces/${ns}/secrets/mine`);
    assert.equal(refused.status, 403);
    assert.match(refused.json.message, /User "system:node:n2" cannot get resource "secrets".*: no relationship found between node 'n2' and this object$/);
    const status = await node.send('PATCH', '/api/v1/nodes/n2/status', { headers: { 'Content-Type': 'application/merge-patch+json' }, body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    assert.equal(status.status, 200, status.text);
    const deleted = await node.delete('/api/v1/nodes/n2');
    assert.equal(deleted.status, 403, deleted.text);
  } finally {
    node.close();
  }
});
