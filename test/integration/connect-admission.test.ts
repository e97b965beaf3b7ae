// Admission of the CONNECT sub-resources, as upstream's connect handler:
// after authorization and before the sub-resource does anything, with the
// request's options as the object (PodExecOptions for pods/exec). A real
// HTTPS validating webhook that matches CONNECT on pods/exec and denies is
// what kubectl exec reports; without it, the node agent's unreachable answer
// stays. DenyEscalatingExec and DenyExecOnPrivileged act on exec and attach.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configure, deny, eventually, unconfigure, webhookEntry, webhookSuite } from '../support/webhook.js';
import { startTestServer, type TestServer } from '../support/server.js';

const suite = webhookSuite();
const pods = '/api/v1/namespaces/default/pods';
const unreachable = /the node agent at 192\.0\.2\.10:10250 cannot be reached/;

async function nodeAndPod(s: TestServer, name: string, spec: Record<string, unknown> = {}): Promise<void> {
  if ((await s.client.get('/api/v1/nodes/node-a')).status === 404) {
    const node = await s.client.post('/api/v1/nodes', { metadata: { name: 'node-a' } });
    assert.equal(node.status, 201, node.text);
    node.json.status = { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }] };
    assert.equal((await s.client.put('/api/v1/nodes/node-a/status', node.json)).status, 200);
  }
  const made = await s.client.post(pods, { metadata: { name }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'busybox' }], ...spec } });
  assert.equal(made.status, 201, made.text);
}

const connectRule = (resources: string[]) => ({ rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources }], namespaceSelector: {} });

test('a validating webhook on CONNECT pods/exec denies kubectl exec; the answer without it stays', async () => {
  const s = suite.server;
  const scene = suite.scene();
  await nodeAndPod(s, 'web');
  const before = await s.kubectl(['exec', 'web', '--', 'true']);
  assert.notEqual(before.code, 0);
  assert.match(before.stderr, unreachable);

  suite.hooks.on('/no-exec', deny({ message: 'exec is not allowed here', code: 403 }));
  await configure(scene, 'validating', 'no-exec', webhookEntry(scene, 'no-exec.example.com', '/no-exec', 'any', connectRule(['pods/exec'])));
  const execPath = `${pods}/web/exec?command=true&stdout=true&container=c`;
  await eventually('the webhook denies exec', async () => (await s.client.post(execPath, {})).status === 403);
  const denied = await s.kubectl(['exec', 'web', '--', 'ls', '/']);
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, /admission webhook "no-exec\.example\.com" denied the request: exec is not allowed here/);

  // What the webhook saw: the options as the object, the pods resource, no options and no old object.
  const review = suite.hooks.callsTo('/no-exec').at(-1)!.review.request;
  assert.equal(review.operation, 'CONNECT');
  assert.deepEqual(review.kind, { group: '', version: 'v1', kind: 'PodExecOptions' });
  assert.deepEqual(review.resource, { group: '', version: 'v1', resource: 'pods' });
  assert.equal(review.subResource, 'exec');
  assert.equal(review.name, 'web');
  assert.equal(review.namespace, 'default');
  assert.deepEqual(review.object, { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, stderr: true, container: 'c', command: ['ls', '/'] });
  assert.equal(review.oldObject, null);
  assert.equal(review.options, null);

  // Admission comes before the pod is looked up (as upstream): a missing pod is denied too.
  assert.equal((await s.client.post(`${pods}/ghost/exec?command=true&stdout=true`, {})).status, 403);
  // attach is another sub-resource: the rule does not match it.
  const attach = await s.kubectl(['attach', 'web']);
  assert.match(attach.stderr, unreachable);

  await unconfigure(scene, 'validating', 'no-exec');
  await eventually('exec answers as before', async () => (await s.client.post(execPath, {})).status === 500);
  assert.match((await s.kubectl(['exec', 'web', '--', 'true'])).stderr, unreachable);
});

test('every verb of the proxy sub-resources is a CONNECT', async () => {
  const s = suite.server;
  const scene = suite.scene();
  const service = await s.client.post('/api/v1/namespaces/default/services', { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } });
  assert.equal(service.status, 201, service.text);
  suite.hooks.on('/no-proxy', deny({ message: 'no proxying' }));
  await configure(scene, 'validating', 'no-proxy', webhookEntry(scene, 'no-proxy.example.com', '/no-proxy', 'any', {
    ...connectRule(['services/proxy', 'nodes/proxy', 'pods/proxy']),
  }));
  await eventually('the webhook denies proxying', async () => (await s.client.get('/api/v1/namespaces/default/services/svc/proxy/')).status === 403);
  for (const [method, path, kind] of [
    ['GET', '/api/v1/namespaces/default/services/svc/proxy/', 'ServiceProxyOptions'],
    ['DELETE', '/api/v1/nodes/node-a/proxy/', 'NodeProxyOptions'],
    ['PUT', `${pods}/web/proxy/`, 'PodProxyOptions'],
  ] as const) {
    const r = await s.client.send(method, path, { body: method === 'PUT' ? {} : undefined });
    assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    assert.match(r.json.message, /admission webhook "no-proxy\.example\.com" denied the request: no proxying$/);
    const review = suite.hooks.callsTo('/no-proxy').at(-1)!.review.request;
    assert.equal(review.operation, 'CONNECT');
    assert.equal(review.kind.kind, kind);
  }
  await unconfigure(scene, 'validating', 'no-proxy');
});

test('DenyEscalatingExec and DenyExecOnPrivileged refuse exec and attach into pods with host access', async () => {
  const escalating = await startTestServer({ enableAdmissionPlugins: ['DenyEscalatingExec'] });
  const privilegedOnly = await startTestServer({ enableAdmissionPlugins: ['DenyExecOnPrivileged'] });
  try {
    for (const s of [escalating, privilegedOnly]) {
      await nodeAndPod(s, 'plain');
      await nodeAndPod(s, 'host-net', { hostNetwork: true });
      await nodeAndPod(s, 'priv', { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] });
      const priv = await s.kubectl(['exec', 'priv', '--', 'true']);
      assert.match(priv.stderr, /pods "priv" is forbidden: cannot exec into or attach to a privileged container/);
      const attach = await s.client.post(`${pods}/priv/attach?stdout=true`, {});
      assert.equal(attach.status, 403);
      assert.match((await s.kubectl(['exec', 'plain', '--', 'true'])).stderr, unreachable);
    }
    assert.match((await escalating.kubectl(['exec', 'host-net', '--', 'true'])).stderr, /pods "host-net" is forbidden: cannot exec into or attach to a container using host network/);
    assert.match((await privilegedOnly.kubectl(['exec', 'host-net', '--', 'true'])).stderr, unreachable);
    const missing = await escalating.client.post(`${pods}/ghost/exec?command=true&stdout=true`, {});
    assert.equal(missing.status, 403);
    assert.equal(missing.json.message, 'pods "ghost" is forbidden: pods "ghost" not found');
  } finally {
    await escalating.close();
    await privilegedOnly.close();
  }
});
