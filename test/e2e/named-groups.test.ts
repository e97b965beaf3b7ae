// The networking, discovery, storage, scheduling and node kinds with the real
// kubectl: its typed commands post to upstream group names (networking.k8s.io,
// scheduling.k8s.io), which the server serves beside its own; the two system
// priority classes exist from the start.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

test('get priorityclass shows the two system classes created at start', async () => {
  const out = await ok(['get', 'priorityclass']);
  assert.match(out, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/m);
  assert.match(out, /^system-cluster-critical\s+2000000000\s+false\s+\S+\s+PreemptLowerPriority$/m);
  assert.match(out, /^system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority$/m);
  const ready = await s.client.get('/readyz?verbose');
  assert.match(ready.text, /\[\+\]poststarthook\/scheduling\/bootstrap-system-priority-classes ok/);
});

test('create priorityclass posts to scheduling.k8s.io; the value is immutable and system- names are reserved', async () => {
  assert.match(await ok(['create', 'priorityclass', 'high', '--value=1000', '--description=high priority', '--preemption-policy=Never']), /priorityclass.scheduling.k8s.io\/high created/);
  assert.match(await ok(['get', 'pc', 'high']), /^high\s+1000\s+false\s+\S+\s+Never$/m);
  const changed = await s.kubectl(['patch', 'pc', 'high', '--type=merge', '-p', '{"value":2000}']);
  assert.notEqual(changed.code, 0);
  assert.match(changed.stderr, /value: Forbidden: may not be changed in an update\./);
  const reserved = await s.kubectl(['create', 'priorityclass', 'system-mine', '--value=10']);
  assert.match(reserved.stderr, /metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only\. error: system-mine is not a known system priority class/);
  const tooHigh = await s.kubectl(['create', 'priorityclass', 'huge', '--value=1000000001']);
  assert.match(tooHigh.stderr, /value: Forbidden: maximum allowed value of a user defined priority is 1000000000/);
});

test('create ingress posts to networking.k8s.io; get -o wide, describe and explain read it', async () => {
  assert.match(await ok(['create', 'ingress', 'web', '--class=nginx', '--rule=foo.com/bar=svc1:8080', '--rule=bar.com/*=svc2:http,tls=my-cert']), /ingress.networking.k8s.io\/web created/);
  const stored = (await s.client.get(`/apis/${vocabulary.networkingGroup}/v1/namespaces/default/ingresses/web`)).json;
  assert.deepEqual(stored.spec.rules.map((r: any) => [r.host, r.http.paths[0].path, r.http.paths[0].pathType]), [['foo.com', '/bar', 'Exact'], ['bar.com', '/', 'Prefix']]);
  assert.equal(stored.metadata.generation, 1);
  const wide = await ok(['get', 'ingress', '-o', 'wide']);
  assert.match(wide, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/m);
  assert.match(wide, /^web\s+nginx\s+foo\.com,bar\.com\s+80, 443\s+\S+$/m);
  // The status is written through its sub-resource (by whoever implements the class).
  const withStatus = { ...stored, status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } } };
  const put = await s.client.send('PUT', `/apis/${vocabulary.networkingGroup}/v1/namespaces/default/ingresses/web/status`, { body: withStatus });
  assert.equal(put.status, 200, put.text);
  assert.match(await ok(['get', 'ing', 'web']), /^web\s+nginx\s+foo\.com,bar\.com\s+192\.0\.2\.10\s+80, 443\s+\S+$/m);
  const described = await ok(['describe', 'ingress', 'web']);
  assert.match(described, /Ingress Class:\s+nginx/);
  assert.match(described, /foo\.com\s*\n\s+\/bar\s+svc1:8080/);
  const explained = await ok(['explain', 'ingress.spec']);
  assert.match(explained, /GROUP:\s+networking\.k8s\.io/);
  assert.match(explained, /ingressClassName\s+<string>/);
  assert.match(explained, /rules\s+<\[\]IngressRule>/);
  const bad = await s.kubectl(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'bad' },
    spec: { rules: [{ host: '10.0.0.1', http: { paths: [{ path: 'x', pathType: 'Prefix', backend: { service: { name: 'svc', port: {} } } }] } }] },
  }));
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /spec.rules\[0\].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address/);
  assert.match(bad.stderr, /spec.rules\[0\].http.paths\[0\].path: Invalid value: "x": must be an absolute path/);
  assert.match(bad.stderr, /spec.rules\[0\].http.paths\[0\].backend: Required value: port name or number is required/);
});

test('the other kinds answer kubectl get under their short names and columns', async () => {
  await ok(['apply', '-f', '-'], [
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny', namespace: 'default' }, spec: { podSelector: { matchLabels: { app: 'web' } } } },
    { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'example.com/ingress', parameters: { kind: 'Config', name: 'c' } } },
    { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast', annotations: { [vocabulary.defaultStorageClassAnnotation]: 'true' } }, provisioner: 'example.com/disk' },
    { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'disk.example.com' }, spec: {} },
    { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' },
  ].map((o) => JSON.stringify(o)).join('\n'));
  assert.match(await ok(['get', 'netpol']), /^deny\s+app=web\s+\S+$/m);
  assert.match(await ok(['get', 'ingressclass']), /^nginx\s+example\.com\/ingress\s+Config\/c\s+\S+$/m);
  assert.match(await ok(['get', 'sc']), /^fast \(default\)\s+example\.com\/disk\s+Delete\s+Immediate\s+false\s+\S+$/m);
  assert.match(await ok(['get', 'csidriver']), /^disk\.example\.com\s+true\s+false\s+false\s+<unset>\s+false\s+Persistent\s+\S+$/m);
  assert.match(await ok(['get', 'runtimeclass']), /^gvisor\s+runsc\s+\S+$/m);
  // kubectl's describe reads upstream's default-class annotation, not ours: only the server's columns mark the default.
  assert.match(await ok(['describe', 'sc', 'fast']), /Provisioner:\s+example\.com\/disk/);
  assert.match(await ok(['describe', 'netpol', 'deny']), /PodSelector:\s+app=web/);
  assert.match(await ok(['describe', 'pc', 'system-node-critical']), /Value:\s+2000001000/);
  assert.match(await ok(['describe', 'runtimeclass', 'gvisor']), /Handler:\s+runsc/);
  const policy = JSON.parse(await ok(['get', 'netpol', 'deny', '-o', 'json']));
  assert.deepEqual(policy.spec.policyTypes, ['Ingress']);
  const immutable = await s.kubectl(['patch', 'sc', 'fast', '--type=merge', '-p', '{"provisioner":"other.com/disk"}']);
  assert.match(immutable.stderr, /provisioner: Forbidden: updates to provisioner are forbidden\./);
  const controller = await s.kubectl(['patch', 'ingressclass', 'nginx', '--type=merge', '-p', '{"spec":{"controller":"example.com/other"}}']);
  assert.match(controller.stderr, /spec.controller: Invalid value: "example.com\/other": field is immutable/);
});
