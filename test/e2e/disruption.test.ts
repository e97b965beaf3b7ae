// Disruption budgets with the real kubectl: the disruption controller keeps
// each budget's status current, evictions that would break a budget answer
// 429 (kubectl drain --dry-run=server reports them), and evictions it allows
// take its allowance and delete the pod. No node agent runs: the test writes
// the pods' ready status itself.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

const ns = '/api/v1/namespaces/default';
const pdbPath = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';

async function budgetStatus(): Promise<any> {
  return (await s.client.get(`${pdbPath}/web`)).json.status;
}

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  await ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } }));
  const rc = await s.client.post(`${ns}/replicationcontrollers`, {
    metadata: { name: 'web' }, spec: { replicas: 2, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
  assert.equal(rc.status, 201, rc.text);
  for (const name of ['web-1', 'web-2']) {
    const made = await s.client.post(`${ns}/pods`, {
      metadata: { name, labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: rc.json.metadata.uid, controller: true }] },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx' }] },
    });
    assert.equal(made.status, 201, made.text);
    const ready = { ...made.json, status: { ...made.json.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.equal((await s.client.send('PUT', `${ns}/pods/${name}/status`, { body: ready })).status, 200);
  }
});

test('the disruption controller fills a budget\'s status; get pdb shows it', async () => {
  await ok(['create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=2']);
  const status = await eventually('the budget is computed', async () => {
    const st = await budgetStatus();
    return st?.observedGeneration === 1 && st;
  });
  assert.deepEqual([status.expectedPods, status.desiredHealthy, status.currentHealthy, status.disruptionsAllowed], [2, 2, 2, 0]);
  assert.deepEqual(status.conditions.map((c: any) => [c.type, c.status, c.reason]), [['DisruptionAllowed', 'False', 'InsufficientPods']]);
  assert.match(await ok(['get', 'pdb']), /^web\s+2\s+N\/A\s+0\s+\S+$/m);
  assert.match(await ok(['describe', 'pdb', 'web']), /Min available:\s+2/);
});

test('an eviction the budget does not allow is a 429; drain --dry-run=server reports it', async () => {
  const r = await s.client.post(`${ns}/pods/web-1/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1' } });
  assert.equal(r.status, 429, r.text);
  assert.equal(r.json.reason, 'TooManyRequests');
  assert.equal(r.json.message, 'Cannot evict pod as it would violate the pod\'s disruption budget.');
  assert.deepEqual(r.json.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }]);
  const drain = await s.kubectl(['drain', 'node-a', '--dry-run=server', '--timeout=3s']);
  assert.notEqual(drain.code, 0);
  assert.match(drain.stderr, /Cannot evict pod as it would violate the pod's disruption budget\./);
  // A dry run changed nothing: the node is schedulable, both pods are there.
  assert.doesNotMatch(await ok(['get', 'node', 'node-a']), /SchedulingDisabled/);
  assert.equal((await ok(['get', 'pods', '-l', 'app=web', '-o', 'name'])).trim().split('\n').length, 2);
});

test('an eviction the budget allows takes its allowance and deletes the pod', async () => {
  await ok(['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
  await eventually('one disruption is allowed', async () => (await budgetStatus())?.disruptionsAllowed === 1);
  const drain = await ok(['drain', 'node-a', '--dry-run=server', '--timeout=10s']);
  assert.match(drain, /evicting pod default\/web-1 \(server dry run\)/);
  assert.match(drain, /node\/node-a drained \(server dry run\)/);
  assert.equal((await budgetStatus()).disruptionsAllowed, 1, 'a dry run takes nothing');
  const r = await s.client.post(`${ns}/pods/web-1/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1' } });
  assert.equal(r.status, 201, r.text);
  // As upstream, a running pod is deleted gracefully: it stays, Terminating, until its node agent (none here) is done with it.
  const going = await s.client.get(`${ns}/pods/web-1`);
  assert.equal(going.status, 200);
  assert.ok(going.json.metadata.deletionTimestamp);
  assert.equal(going.json.metadata.deletionGracePeriodSeconds, 30);
  // As upstream (PodDisruptionConditions), the pod says why it goes.
  const target = going.json.status.conditions.find((c: any) => c.type === 'DisruptionTarget');
  assert.deepEqual([target?.status, target?.reason, target?.message], ['True', 'EvictionByEvictionAPI', 'Eviction API: evicting']);
  assert.match(await ok(['get', 'pod', 'web-1']), /^web-1\s+0\/1\s+Terminating\s/m);
  const after = await eventually('the budget sees one healthy pod', async () => {
    const st = await budgetStatus();
    return st?.currentHealthy === 1 && st;
  });
  assert.equal(after.disruptionsAllowed, 0);
  const again = await s.client.post(`${ns}/pods/web-2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-2' } });
  assert.equal(again.status, 429);
});

test('pods no budget covers, or not running, are evicted at once; a mismatched name is a 400', async () => {
  await ok(['run', 'loose', '--image=nginx']);
  const r = await s.client.post(`${ns}/pods/loose/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } });
  assert.equal(r.status, 400);
  assert.equal(r.json.message, 'name in URL does not match name in Eviction object');
  const evicted = await s.client.post(`${ns}/pods/loose/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'loose' } });
  assert.equal(evicted.status, 201, evicted.text);
  assert.equal((await s.client.post(`${ns}/pods/ghost/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ghost' } })).status, 404);
});

test('a pod two budgets cover is not evicted: a 500 Status without reason, as upstream', async () => {
  await ok(['create', 'poddisruptionbudget', 'web-too', '--selector=app=web', '--max-unavailable=1']);
  const r = await s.client.post(`${ns}/pods/web-2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-2' } });
  assert.equal(r.status, 500, r.text);
  assert.equal(r.json.status, 'Failure');
  assert.equal(r.json.reason, undefined);
  assert.equal(r.json.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  assert.equal((await s.client.get(`${ns}/pods/web-2`)).json.metadata.deletionTimestamp, undefined, 'the pod stays');
});
