// Graceful deletion of pods, as upstream's registry: a delete of a pod a node
// runs marks it (deletionTimestamp that many seconds ahead, and
// deletionGracePeriodSeconds) and keeps it, Terminating, for the node agent to
// finish; no node agent runs here, so it stays until a delete with grace 0.
// Pods no node runs, and pods that are done, go at once.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  await s.kubectlOk(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } }));
});
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);
const path = '/api/v1/namespaces/default/pods';

/** A pod bound to node-a (through spec.nodeName on create, as upstream allows), with `spec` merged in. */
async function scheduledPod(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  const made = await s.client.post(path, { metadata: { name }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx' }], ...spec } });
  assert.equal(made.status, 201, made.text);
  return made.json;
}

test('kubectl delete of a pod no node runs removes it at once', async () => {
  await ok(['run', 'unscheduled', '--image=nginx']);
  assert.match(await ok(['delete', 'pod', 'unscheduled', '--timeout=20s']), /pod "unscheduled" deleted/);
  assert.equal((await s.client.get(`${path}/unscheduled`)).status, 404);
});

test('a running pod is marked with its termination grace period and stays Terminating', async () => {
  await scheduledPod('web');
  const before = Date.now();
  assert.match(await ok(['delete', 'pod', 'web', '--wait=false']), /pod "web" deleted/);
  const pod = (await s.client.get(`${path}/web`)).json;
  assert.equal(pod.metadata.deletionGracePeriodSeconds, 30);
  const deadline = Date.parse(pod.metadata.deletionTimestamp);
  assert.ok(deadline >= Math.floor(before / 1000) * 1000 + 29_000, `deadline ${pod.metadata.deletionTimestamp} is about 30 s ahead`);
  assert.match(await ok(['get', 'pod', 'web']), /^web\s+0\/1\s+Terminating\s/m);
  // A status write (what a node agent does while the pod stops) keeps it.
  const status = await s.client.send('PUT', `${path}/web/status`, { body: { ...pod, status: { ...pod.status, phase: 'Running' } } });
  assert.equal(status.status, 200, status.text);
  assert.equal((await s.client.get(`${path}/web`)).status, 200);
});

test('a second delete may shorten the period, never lengthen it', async () => {
  const marked = (await s.client.get(`${path}/web`)).json.metadata;
  const longer = await s.client.send('DELETE', `${path}/web`, { body: { gracePeriodSeconds: 60 } });
  assert.equal(longer.status, 200, longer.text);
  assert.equal(longer.json.metadata.deletionGracePeriodSeconds, 30);
  assert.equal(longer.json.metadata.deletionTimestamp, marked.deletionTimestamp);
  const shorter = await s.client.send('DELETE', `${path}/web`, { body: { gracePeriodSeconds: 10 } });
  assert.equal(shorter.status, 200, shorter.text);
  assert.equal(shorter.json.metadata.deletionGracePeriodSeconds, 10);
  // The deadline moves back by the 20 seconds taken off.
  assert.equal(Date.parse(shorter.json.metadata.deletionTimestamp), Date.parse(marked.deletionTimestamp) - 20_000);
  assert.equal((await s.client.get(`${path}/web`)).json.metadata.deletionGracePeriodSeconds, 10);
});

test('kubectl delete --grace-period=0 --force removes a Terminating pod at once', async () => {
  const r = await s.kubectl(['delete', 'pod', 'web', '--grace-period=0', '--force']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Immediate deletion does not wait for confirmation/);
  assert.equal((await s.client.get(`${path}/web`)).status, 404);
});

test('the period comes from the request, else the pod; finished pods go at once; a negative period is 1 s', async () => {
  await scheduledPod('short', { terminationGracePeriodSeconds: 5 });
  const short = await s.client.send('DELETE', `${path}/short`);
  assert.equal(short.json.metadata.deletionGracePeriodSeconds, 5);
  await scheduledPod('asked');
  assert.equal((await s.client.send('DELETE', `${path}/asked?gracePeriodSeconds=7`)).json.metadata.deletionGracePeriodSeconds, 7);
  await scheduledPod('negative');
  const negative = await s.client.send('DELETE', `${path}/negative`, { body: { gracePeriodSeconds: -5 } });
  assert.equal(negative.status, 200, negative.text);
  assert.equal(negative.json.metadata.deletionGracePeriodSeconds, 1);
  const done = await scheduledPod('done');
  assert.equal((await s.client.send('PUT', `${path}/done/status`, { body: { ...done, status: { phase: 'Succeeded' } } })).status, 200);
  assert.equal((await s.client.send('DELETE', `${path}/done`)).status, 200);
  assert.equal((await s.client.get(`${path}/done`)).status, 404);
  await scheduledPod('immediate');
  assert.equal((await s.client.send('DELETE', `${path}/immediate?gracePeriodSeconds=0`)).status, 200);
  assert.equal((await s.client.get(`${path}/immediate`)).status, 404);
  for (const name of ['short', 'asked', 'negative']) await ok(['delete', 'pod', name, '--grace-period=0', '--force']);
});

test('a dry run marks nothing; a finalizer holds a pod deleted with grace 0 until it is removed', async () => {
  await scheduledPod('dry');
  const dry = await s.client.send('DELETE', `${path}/dry?dryRun=All`);
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.json.metadata.deletionGracePeriodSeconds, 30);
  assert.equal((await s.client.get(`${path}/dry`)).json.metadata.deletionTimestamp, undefined);
  await ok(['delete', 'pod', 'dry', '--grace-period=0', '--force']);

  const held = await s.client.post(path, { metadata: { name: 'held', finalizers: ['example.com/hold'] }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx' }] } });
  assert.equal(held.status, 201, held.text);
  const marked = await s.client.send('DELETE', `${path}/held?gracePeriodSeconds=0`);
  assert.equal(marked.json.metadata.deletionGracePeriodSeconds, 0);
  assert.equal((await s.client.get(`${path}/held`)).status, 200);
  await ok(['patch', 'pod', 'held', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  assert.equal((await s.client.get(`${path}/held`)).status, 404);
});
