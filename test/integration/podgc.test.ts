// The pod garbage collector: no node agent finishes a graceful deletion here,
// as none does upstream for a node that is gone. Pods bound to a node that
// does not exist go (Failed, DisruptionTarget, then removed with grace 0)
// once the quarantine has passed; a pod on a node that exists stays
// Terminating; a pod being deleted that no node runs goes at once.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { InProcessClient } from '../../src/server/inprocess.js';
import { InformerFactory } from '../../src/client/informer.js';
import { PodGarbageCollector } from '../../src/controllers/podgc.js';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
let gc: PodGarbageCollector;
let informers: InformerFactory;
const pods = '/api/v1/namespaces/default/pods';

before(async () => {
  s = await startTestServer({ controllers: ['*', '-pod-garbage-collector'] });
  const client = new InProcessClient(s.registry, 'test-podgc');
  informers = new InformerFactory(client);
  gc = new PodGarbageCollector(client, () => undefined, informers, { quarantineMs: 300 });
  await gc.start();
});
after(async () => {
  await gc.stop();
  informers.stopAll();
  await s.close();
});

async function podOn(name: string, nodeName: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await s.client.post(pods, { metadata: { name, ...extra }, spec: { nodeName, containers: [{ name: 'c', image: 'nginx' }] } });
  assert.equal(r.status, 201, r.text);
}

test('a pod on a node that exists stays Terminating; once the node is deleted it is removed, marked Failed first', async () => {
  assert.equal((await s.client.post('/api/v1/nodes', { metadata: { name: 'node-a' } })).status, 201);
  await podOn('web', 'node-a', { finalizers: ['example.com/watch'] });
  await s.client.delete(`${pods}/web`);
  await new Promise((r) => setTimeout(r, 800));
  const held = (await s.client.get(`${pods}/web`)).json;
  assert.ok(held.metadata.deletionTimestamp, 'still there, Terminating');
  assert.equal(held.status.phase, 'Pending');
  assert.equal((await s.client.delete('/api/v1/nodes/node-a')).status, 200);
  const failed = await eventually('the pod is marked Failed', async () => {
    const pod = (await s.client.get(`${pods}/web`)).json;
    return pod.status?.phase === 'Failed' && pod;
  });
  const condition = failed.status.conditions.find((c: any) => c.type === 'DisruptionTarget');
  assert.deepEqual([condition.status, condition.reason, condition.message], ['True', 'DeletionByPodGC', 'PodGC: node no longer exists']);
  assert.equal(failed.metadata.deletionGracePeriodSeconds, 0, 'deleted with grace 0; only the finalizer holds it');
  await s.kubectlOk(['patch', 'pod', 'web', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  assert.equal((await s.client.get(`${pods}/web`)).status, 404);
});

test('a pod bound to a node that never existed goes after the quarantine', async () => {
  await podOn('orphan', 'ghost-node');
  await eventually('the orphan is removed', async () => (await s.client.get(`${pods}/orphan`)).status === 404);
});
