// The pod garbage collector: no node agent finishes a graceful deletion here,
// as none does upstream for a node that is gone. Pods bound to a node that
// does not exist go (Failed, DisruptionTarget, then removed with grace 0)
// once the quarantine has passed; a pod on a node that exists stays
// Terminating; a pod being deleted that no node runs goes at once.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { InformerFactory } from '../../src/client/informer.js';
import { PodGarbageCollector } from '../../src/controllers/podgc.js';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let gc: PodGarbageCollector;
let informers: InformerFactory;
const pods = '/api/v1/namespaces/default/pods';

before(async () => {
  s = await startTestServer({ controllers: ['*', '-pod-garbage-collector'] });
  const client = new InProcessClient(s.registry, 'test-podgc');
  informers = new InformerFactory(client);
  gc = new PodGarbageCollector(client, () => undefined, informers, { quarantineMs: 300, terminatedPodThreshold: 3 });
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

test('a terminating pod on a node that is not ready and tainted out-of-service goes; on a node merely not ready it stays', async () => {
  assert.equal((await s.client.post('/api/v1/nodes', { metadata: { name: 'node-down' } })).status, 201);
  await podOn('stuck', 'node-down', { finalizers: ['example.com/watch'] });
  await s.client.delete(`${pods}/stuck`);
  await new Promise((r) => setTimeout(r, 500));
  assert.ok((await s.client.get(`${pods}/stuck`)).json.metadata.deletionTimestamp, 'Terminating: the node is not tainted');
  await s.kubectlOk(['taint', 'node', 'node-down', `${vocabulary.outOfServiceTaint}=nodeshutdown:NoExecute`]);
  const failed = await eventually('the pod is marked Failed and deleted with grace 0', async () => {
    const pod = (await s.client.get(`${pods}/stuck`)).json;
    return pod.status?.phase === 'Failed' && pod.metadata.deletionGracePeriodSeconds === 0 && pod;
  });
  assert.equal(failed.status.conditions?.find((c: any) => c.type === 'DisruptionTarget'), undefined, 'no disruption condition, as upstream');
  await s.kubectlOk(['patch', 'pod', 'stuck', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  assert.equal((await s.client.get(`${pods}/stuck`)).status, 404);
});

test('finished pods beyond the threshold go, evicted ones first, then the oldest', async () => {
  assert.equal((await s.client.post('/api/v1/nodes', { metadata: { name: 'node-b' } })).status, 201);
  const finish = async (name: string, status: Record<string, unknown>) => {
    await podOn(name, 'node-b');
    const pod = (await s.client.get(`${pods}/${name}`)).json;
    const r = await s.client.put(`${pods}/${name}/status`, { ...pod, status: { ...pod.status, ...status } });
    assert.equal(r.status, 200, r.text);
  };
  await finish('done-1', { phase: 'Succeeded' });
  await finish('done-2', { phase: 'Succeeded' });
  await finish('done-3', { phase: 'Failed' });
  await podOn('running', 'node-b');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(await names(), ['done-1', 'done-2', 'done-3', 'running'], 'three finished pods: at the threshold');
  await finish('evicted', { phase: 'Failed', reason: 'Evicted' });
  await eventually('the evicted pod goes first', async () => !(await names()).includes('evicted'));
  await finish('done-4', { phase: 'Succeeded' });
  await eventually('then the oldest', async () => !(await names()).includes('done-1'));
  assert.deepEqual(await names(), ['done-2', 'done-3', 'done-4', 'running']);
});

async function names(): Promise<string[]> {
  const list = (await s.client.get(`${pods}?fieldSelector=spec.nodeName=node-b`)).json;
  return list.items.map((p: any) => p.metadata.name).sort();
}
