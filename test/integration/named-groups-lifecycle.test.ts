// The namespace controller and the garbage collector on the named-group
// kinds: the namespaced ones go with their namespace, and objects owned by
// another (a CSINode by its Node, an EndpointSlice by its Service) go with
// their owner.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { namedGroupKinds } from '../../src/api/namedgroups.js';
import { namedGroupSamples } from '../support/named-group-samples.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const pathOf = (group: string, plural: string, namespace?: string) => `/apis/${group}/v1${namespace ? `/namespaces/${namespace}` : ''}/${plural}`;

/** A sample ready to create: no server-set metadata, no finalizers or owners, in `namespace`. */
function creatable(kind: string, namespace: string | undefined): Record<string, any> {
  const { status: _status, ...sample } = structuredClone(namedGroupSamples.find((o) => o.kind === kind)!);
  sample.metadata = { name: 'demo', ...(namespace ? { namespace } : {}), labels: { app: 'web' } };
  return sample;
}

test('deleting a namespace deletes every namespaced named-group object in it', async () => {
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201);
  const namespaced = namedGroupKinds.filter((k) => k.scope === 'Namespaced');
  assert.deepEqual(namespaced.map((k) => k.kind).sort(), ['CSIStorageCapacity', 'EndpointSlice', 'Ingress', 'NetworkPolicy']);
  for (const kind of namespaced) {
    const r = await s.client.post(pathOf(kind.group, kind.plural, 'doomed'), creatable(kind.kind, 'doomed'));
    assert.equal(r.status, 201, `${kind.kind}: ${r.text}`);
  }
  assert.equal((await s.client.delete('/api/v1/namespaces/doomed')).status, 200);
  await eventually('the namespace is gone', async () => (await s.client.get('/api/v1/namespaces/doomed')).status === 404, 30_000);
  for (const kind of namespaced) {
    assert.equal((await s.client.get(`${pathOf(kind.group, kind.plural, 'doomed')}/demo`)).status, 404, kind.kind);
  }
});

test('the garbage collector deletes a CSINode with its Node, and cluster-scoped kinds with their owners', async () => {
  const node = await s.client.post('/api/v1/nodes', { metadata: { name: 'node-a' } });
  assert.equal(node.status, 201);
  const owner = { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: node.json.metadata.uid };
  const clusterScoped = namedGroupKinds.filter((k) => k.scope === 'Cluster' && k.kind !== 'PriorityClass');
  for (const kind of clusterScoped) {
    const body = creatable(kind.kind, undefined);
    body.metadata.name = kind.kind === 'CSINode' ? 'node-a' : 'owned.example.com';
    body.metadata.ownerReferences = [owner];
    const r = await s.client.post(pathOf(kind.group, kind.plural), body);
    assert.equal(r.status, 201, `${kind.kind}: ${r.text}`);
  }
  assert.equal((await s.client.delete('/api/v1/nodes/node-a')).status, 200);
  for (const kind of clusterScoped) {
    const name = kind.kind === 'CSINode' ? 'node-a' : 'owned.example.com';
    await eventually(`${kind.kind} goes with its Node`, async () => (await s.client.get(`${pathOf(kind.group, kind.plural)}/${name}`)).status === 404);
  }
  // The system priority classes are not anybody's: still there.
  assert.equal((await s.client.get(`${pathOf(vocabulary.schedulingGroup, 'priorityclasses')}/system-node-critical`)).status, 200);
});
