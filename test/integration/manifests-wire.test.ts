// What clients written for upstream read on the wire: bodies as upstream's
// encoder writes them, the upstream group names in discovery, the labels
// kubectl and published manifests select by, empty maps and lists left out,
// and the group name the client used in what the server answers.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  const ns = await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wire' } });
  assert.equal(ns.status, 201, ns.text);
});
after(async () => { await s.close(); });

test('JSON bodies end with a newline as upstream\'s encoder writes them: an error Status byte for byte, a get, a list, a create', async () => {
  const missing = await s.client.get('/api/v1/namespaces/wire/configmaps/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.text, '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}\n');
  const created = await s.client.post('/api/v1/namespaces/wire/configmaps', { metadata: { name: 'one' }, data: { a: 'b' } });
  assert.equal(created.status, 201, created.text);
  for (const r of [created, await s.client.get('/api/v1/namespaces/wire/configmaps/one'), await s.client.get('/api/v1/namespaces/wire/configmaps')]) {
    assert.equal(r.status, 200 + (r === created ? 1 : 0), r.text);
    assert.ok(r.text.endsWith('}\n'), JSON.stringify(r.text.slice(-20)));
    assert.equal(r.text.indexOf('\n'), r.text.length - 1, 'one line, then the newline');
  }
  // /version is written indented and without a newline, as upstream's raw JSON writer does.
  const version = await s.client.get('/version');
  assert.equal(version.text, JSON.stringify(version.json, null, 2));
});

test('namespaces carry upstream\'s kubernetes.io/metadata.name beside ours: selectors written for upstream pick them, and nobody changes it', async () => {
  const ns = (await s.client.get('/api/v1/namespaces/wire')).json;
  assert.equal(ns.metadata.labels['kubernetes.io/metadata.name'], 'wire');
  assert.equal(ns.metadata.labels[vocabulary.namespaceNameLabel], 'wire');
  // A webhook's namespaceSelector written for upstream, excluding its own namespace.
  const others = await s.client.get(`/api/v1/namespaces?labelSelector=${encodeURIComponent('kubernetes.io/metadata.name notin (wire)')}`);
  assert.equal(others.status, 200, others.text);
  assert.ok(others.json.items.length > 0);
  assert.ok(!others.json.items.some((n: any) => n.metadata.name === 'wire'), 'its own namespace is excluded');
  const relabelled = await s.client.send('PATCH', '/api/v1/namespaces/wire', {
    body: { metadata: { labels: { 'kubernetes.io/metadata.name': 'elsewhere' } } }, headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(relabelled.status, 200, relabelled.text);
  assert.equal(relabelled.json.metadata.labels['kubernetes.io/metadata.name'], 'wire', 'the label always names the namespace');
});

test('empty maps and lists of built-in kinds are left out on write, as upstream\'s typed encoding omits them; required ones and structs stay', async () => {
  const cm = await s.client.post('/api/v1/namespaces/wire/configmaps', { metadata: { name: 'emptied', annotations: { a: 'b' }, labels: {} }, data: {} });
  assert.equal(cm.status, 201, cm.text);
  assert.equal(cm.json.metadata.labels, undefined);
  assert.equal(cm.json.data, undefined);
  // A strategic merge patch that removes every annotation leaves none, not an empty map.
  const patched = await s.client.send('PATCH', '/api/v1/namespaces/wire/configmaps/emptied', {
    body: { metadata: { annotations: { a: null } } }, headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.ok(!('annotations' in patched.json.metadata), patched.text);
  assert.ok(!(await s.client.get('/api/v1/namespaces/wire/configmaps/emptied')).text.includes('"annotations"'));
  const made = await s.client.post('/api/v1/namespaces/wire/endpoints', { metadata: { name: 'manual' }, subsets: [{ addresses: [{ ip: '10.2.0.1' }], ports: [{ port: 80 }] }] });
  assert.equal(made.status, 201, made.text);
  const ep = await s.client.put('/api/v1/namespaces/wire/endpoints/manual', { metadata: { name: 'manual' }, subsets: [] });
  assert.equal(ep.status, 200, ep.text);
  assert.ok(!('subsets' in ep.json), ep.text);
  // An empty selector is a struct that selects everything, and a slice's endpoints are required: both stay.
  const slice = await s.client.post(`/apis/${vocabulary.endpointDiscoveryGroup}/v1/namespaces/wire/endpointslices`, { metadata: { name: 'none' }, addressType: 'IPv4', endpoints: [] });
  assert.equal(slice.status, 201, slice.text);
  assert.deepEqual(slice.json.endpoints, []);
  const pdb = await s.client.post(`/apis/policy/v1/namespaces/wire/poddisruptionbudgets`, { metadata: { name: 'all' }, spec: { selector: {}, maxUnavailable: 1 } });
  assert.equal(pdb.status, 201, pdb.text);
  assert.deepEqual(pdb.json.spec.selector, {});
});

test('a write in the upstream name of a group is recorded and told of in that name: managedFields apiVersion, the apply conflict', async () => {
  const leases = '/apis/coordination.k8s.io/v1/namespaces/wire/leases';
  const made = await s.client.send('POST', `${leases}?fieldManager=alice`, { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'named' }, spec: { holderIdentity: 'a' } } });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json.metadata.managedFields.map((e: any) => [e.manager, e.apiVersion]), [['alice', 'coordination.k8s.io/v1']]);
  const conflict = await s.client.send('PATCH', `${leases}/named?fieldManager=bob`, {
    raw: JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'named' }, spec: { holderIdentity: 'b' } }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal(conflict.json.message, 'Apply failed with 1 conflict: conflict with "alice" using coordination.k8s.io/v1: .spec.holderIdentity');
  const applied = await s.client.send('PATCH', `/apis/${vocabulary.coordinationGroup}/v1/namespaces/wire/leases/named?fieldManager=bob&force=true`, {
    raw: JSON.stringify({ apiVersion: `${vocabulary.coordinationGroup}/v1`, kind: 'Lease', metadata: { name: 'named' }, spec: { holderIdentity: 'b' } }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  assert.equal(applied.status, 200, applied.text);
  assert.deepEqual(applied.json.metadata.managedFields.map((e: any) => [e.manager, e.apiVersion]).sort(), [['alice', 'coordination.k8s.io/v1'], ['bob', `${vocabulary.coordinationGroup}/v1`]]);
});

test('OpenAPI v2 and v3 carry upstream\'s defaults of list-map keys: protocol TCP, required scalars their zero value', async () => {
  const v3 = (await s.client.get('/openapi/v3/api/v1')).json.components.schemas;
  const v2 = (await s.client.get('/openapi/v2')).json.definitions;
  for (const schemas of [v3, v2]) {
    const named = (suffix: string) => schemas[Object.keys(schemas).find((n) => n.endsWith(`.core.v1.${suffix}`))!];
    assert.equal(named('ContainerPort').properties.protocol.default, 'TCP');
    assert.equal(named('ContainerPort').properties.containerPort.default, 0);
    assert.equal(named('ServicePort').properties.protocol.default, 'TCP');
    assert.equal(named('Container').properties.name.default, '');
    assert.equal(named('ContainerPort').properties.hostIP.default, undefined, 'optional fields have none');
  }
});
