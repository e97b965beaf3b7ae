// Bootstrap from a token with the TypeScript client, against a real server:
// cluster-info read anonymously and trusted only when the token's signature
// verifies, then the node-agent flow from the bootstrap token to an
// authenticated node identity (the CSR auto-approver approves it once the
// bootstrappers are bound to the node-client approval role, as kubeadm binds them).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, testControllers, type TestServer } from '../support/server.js';
import { createTokenSecret } from '../support/bootstrap.js';
import { eventually } from '../support/eventually.js';
import { ClusterInfoSignatureError, RemoteClient, StatusError, bootstrapNodeAgent, discoverCluster } from '../../src/client/index.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const token = 'join01.0123456789abcdef';
let s: TestServer;

before(async () => {
  s = await startTestServer({ enableBootstrapTokenAuth: true, controllers: [...testControllers, 'bootstrapsigner'] });
  await createTokenSecret(s, token, { usageSigning: true });
  await eventually('cluster-info is signed for the token', async () => {
    const r = await s.client.get(`/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps/cluster-info`);
    return r.status === 200 && r.json.data?.['jws-kubeconfig-join01'] !== undefined;
  });
});
after(() => s.close());

test('cluster-info is trusted only with a signature that verifies with the token', async () => {
  const cluster = await discoverCluster(s.url, token);
  assert.equal(cluster.server, s.url);
  assert.equal(cluster.caPem, s.client.creds.ca);
  await assert.rejects(discoverCluster(s.url, 'join01.0123456789abcdee'), (e: unknown) => e instanceof ClusterInfoSignatureError && e.message === 'the signature does not verify with this token');
  await assert.rejects(discoverCluster(s.url, 'other1.0123456789abcdef'), (e: unknown) => e instanceof ClusterInfoSignatureError && e.message === 'the ConfigMap holds no signature for token other1');
  await assert.rejects(discoverCluster(s.url, 'not-a-token'), ClusterInfoSignatureError);
});

test('the node-agent flow: a CSR made with the bootstrap token is approved and issued, and its kubeconfig is the node', async () => {
  const cluster = await discoverCluster(s.url, token);
  const certificates = vocabulary.certificatesGroup;
  // What kubeadm binds: bootstrappers may make requests, and have their node-client requests approved.
  for (const [name, role] of [['bootstrappers-request', 'system:node-bootstrapper'], ['bootstrappers-approve', `system:${certificates}:certificatesigningrequests:nodeclient`]]) {
    const r = await s.client.post(`/apis/${vocabulary.rbacGroup}/v1/clusterrolebindings`, {
      apiVersion: `${vocabulary.rbacGroup}/v1`, kind: 'ClusterRoleBinding', metadata: { name },
      roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: vocabulary.rbacGroup, kind: 'Group', name: 'system:bootstrappers' }],
    });
    assert.equal(r.status, 201, r.text);
  }
  const issued = await bootstrapNodeAgent(cluster, token, 'node-7', { timeoutMs: 15_000 });
  const csr = (await s.client.get(`/apis/${certificates}/v1/certificatesigningrequests/${issued.requestName}`)).json;
  assert.equal(csr.spec.username, 'system:bootstrap:join01');
  assert.equal(csr.spec.signerName, vocabulary.apiserverClientNodeagentSigner);

  const path = join(tempDir(), 'node.kubeconfig');
  writeFileSync(path, issued.kubeconfig);
  const node = await RemoteClient.fromKubeconfig({ paths: [path] });
  const review = await node.requestJson('POST', `/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, { body: { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' } });
  assert.equal(review.status.userInfo.username, 'system:node:node-7');
  assert.ok(review.status.userInfo.groups.includes('system:nodes'));
  node.close();
});

test('a denied request ends the wait with the reason', async () => {
  const cluster = await discoverCluster(s.url, token);
  // Without the approval binding the auto-approver leaves the request pending, for the test to deny.
  const removed = await s.client.delete(`/apis/${vocabulary.rbacGroup}/v1/clusterrolebindings/bootstrappers-approve`);
  assert.equal(removed.status, 200, removed.text);
  const waiting = bootstrapNodeAgent(cluster, token, 'node-8', { timeoutMs: 15_000 });
  const outcome = waiting.then(() => undefined, (e: unknown) => e);
  const csrs = `/apis/${vocabulary.certificatesGroup}/v1/certificatesigningrequests`;
  const pending = await eventually('the request is made', async () => {
    const list = (await s.client.get(csrs)).json;
    return list.items.find((c: any) => c.spec.username === 'system:bootstrap:join01' && !c.status?.certificate);
  });
  pending.status = { conditions: [{ type: 'Denied', status: 'True', reason: 'NotThisOne', message: 'refused by the test' }] };
  const denied = await s.client.put(`${csrs}/${pending.metadata.name}/approval`, pending);
  assert.equal(denied.status, 200, denied.text);
  const e = await outcome;
  assert.ok(e instanceof StatusError, String(e));
  assert.equal(e.message, `certificate signing request ${pending.metadata.name} was denied: NotThisOne refused by the test`);
});
