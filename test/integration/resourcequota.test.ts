// ResourceQuota end to end on one server: the quota controller fills
// status.hard and status.used, the admission plugin refuses what would go
// past a cap with upstream's messages and charges what it admits, a create
// that fails after admission gives its charge back, scopes and the counts of
// custom resources, and the controller's recount after deletions.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { InformerFactory } from '../../src/client/informer.js';
import { ResourceQuotaController } from '../../src/controllers/resourcequota.js';

let s: TestServer;
before(async () => {
  // Claims of the bronze class need a quota that caps them (upstream's limitedResources).
  const config = join(tempDir(), 'admission.yaml');
  writeFileSync(config, JSON.stringify({
    apiVersion: 'apiserver.config.plat.io/v1', kind: 'AdmissionConfiguration',
    plugins: [{ name: 'ResourceQuota', configuration: {
      apiVersion: 'apiserver.config.plat.io/v1', kind: 'ResourceQuotaConfiguration',
      limitedResources: [{ resource: 'persistentvolumeclaims', matchContains: ['bronze.storageclass'] }],
    } }],
  }));
  s = await startTestServer({ admissionControlConfigFile: config });
});
after(async () => { await s.close(); });

let nsCount = 0;
async function namespace(): Promise<string> {
  const name = `quota-${++nsCount}`;
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name } })).status, 201);
  return name;
}

/** Creates a quota and waits for the controller to fill its status (admission refuses what a quota without use counts). */
async function quota(ns: string, name: string, spec: Record<string, unknown>): Promise<any> {
  const r = await s.client.post(`/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name }, spec });
  assert.equal(r.status, 201, r.text);
  return eventually(`quota ${ns}/${name} has its status`, async () => {
    const q = (await s.client.get(`/api/v1/namespaces/${ns}/resourcequotas/${name}`)).json;
    return q.status?.used && Object.keys(q.status.used).length === Object.keys(q.spec.hard).length ? q : undefined;
  });
}

async function used(ns: string, name: string): Promise<Record<string, string>> {
  return (await s.client.get(`/api/v1/namespaces/${ns}/resourcequotas/${name}`)).json.status.used;
}

const pod = (name: string, spec: Record<string, unknown> = {}, resources?: Record<string, unknown>) => ({
  metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) }], ...spec },
});

test('pods=1: the status mirrors the caps, the first pod is charged, the second refused with upstream\'s message', async () => {
  const ns = await namespace();
  const q = await quota(ns, 'q', { hard: { pods: '1' } });
  assert.deepEqual(q.status, { hard: { pods: '1' }, used: { pods: '0' } });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('p1'))).status, 201);
  assert.deepEqual(await used(ns, 'q'), { pods: '1' });
  const second = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('p2'));
  assertStatus(second, 403, 'Forbidden', 'pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
  assert.deepEqual(await used(ns, 'q'), { pods: '1' }, 'a refused create is not charged');
});

test('20 concurrent creates for the last 3 units: exactly 3 are admitted and status.used is exact', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { pods: '4', 'requests.memory': '1Gi' } });
  const sized = { requests: { memory: '256Mi' } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('first', {}, sized))).status, 201);
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => s.client.post(`/api/v1/namespaces/${ns}/pods`, pod(`p${i}`, {}, sized))));
  assert.equal(replies.filter((r) => r.status === 201).length, 3);
  assert.equal(replies.filter((r) => r.status === 403).length, 17);
  assert.deepEqual(await used(ns, 'q'), { pods: '4', 'requests.memory': '1Gi' });
});

test('a dry run is checked but never charged', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { pods: '1' } });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('p1'))).status, 201);
  assert.deepEqual(await used(ns, 'q'), { pods: '0' });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('p1'))).status, 201);
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('p2')), 403, 'Forbidden');
});

test('a create whose write fails after admission (the name is taken) gives its charge back', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { configmaps: '3', 'count/configmaps': '3' } });
  const cm = { metadata: { name: 'same' }, data: { a: 'b' } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, cm)).status, 201);
  assert.deepEqual(await used(ns, 'q'), { configmaps: '1', 'count/configmaps': '1' });
  for (let i = 0; i < 3; i++) assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, cm), 409, 'AlreadyExists');
  assert.deepEqual(await used(ns, 'q'), { configmaps: '1', 'count/configmaps': '1' }, 'each failed write gave its unit back');
  for (const name of ['two', 'three']) assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name } })).status, 201);
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'four' } }), 403, 'Forbidden',
    'configmaps "four" is forbidden: exceeded quota: q, requested: configmaps=1,count/configmaps=1, used: configmaps=3,count/configmaps=3, limited: configmaps=3,count/configmaps=3');
});

test('requests and limits: pods must state what is capped, and their sums are charged', async () => {
  const ns = await namespace();
  await quota(ns, 'compute', { hard: { 'requests.cpu': '1', 'limits.memory': '1Gi', 'requests.example.com/gpu': '2' } });
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('bare')), 403, 'Forbidden',
    'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c');
  const sized = { requests: { cpu: '600m', 'example.com/gpu': '1' }, limits: { memory: '512Mi', 'example.com/gpu': '1' } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('a', {}, sized))).status, 201);
  assert.deepEqual(await used(ns, 'compute'), { 'limits.memory': '512Mi', 'requests.cpu': '600m', 'requests.example.com/gpu': '1' });
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('b', {}, sized)), 403, 'Forbidden',
    'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
  const small = { requests: { cpu: '400m', 'example.com/gpu': '1' }, limits: { memory: '512Mi', 'example.com/gpu': '1' } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('c', {}, small))).status, 201);
  assert.deepEqual(await used(ns, 'compute'), { 'limits.memory': '1Gi', 'requests.cpu': '1', 'requests.example.com/gpu': '2' });
});

test('scopes: a BestEffort quota counts only best-effort pods; a PriorityClass selector only pods of those classes', async () => {
  const ns = await namespace();
  await quota(ns, 'besteffort', { hard: { pods: '1' }, scopes: ['BestEffort'] });
  await quota(ns, 'high', { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
  const burstable = { requests: { cpu: '10m' } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('be'))).status, 201);
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('be2')), 403, 'Forbidden',
    'pods "be2" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1');
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('burst', {}, burstable))).status, 201);
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('burst2', {}, burstable))).status, 201);
  assert.deepEqual(await used(ns, 'besteffort'), { pods: '1' });
  assert.deepEqual(await used(ns, 'high'), { pods: '0' });
});

test('count/<resource>.<group> caps the objects of a custom resource', async () => {
  const ns = await namespace();
  assert.equal((await s.client.post(crdPath, widgetCrd())).status, 201);
  const widgets = `/apis/${widgetGroup}/v1/namespaces/${ns}/widgets`;
  await eventually('widgets served', async () => (await s.client.get(widgets)).status === 200);
  const name = `count/widgets.${widgetGroup}`;
  await quota(ns, 'w', { hard: { [name]: '1' } });
  const widget = (n: string) => ({ apiVersion: `${widgetGroup}/v1`, kind: 'Widget', metadata: { name: n }, spec: {} });
  assert.equal((await s.client.post(widgets, widget('w1'))).status, 201);
  assertStatus(await s.client.post(widgets, widget('w2')), 403, 'Forbidden',
    `widgets.${widgetGroup} "w2" is forbidden: exceeded quota: w, requested: ${name}=1, used: ${name}=1, limited: ${name}=1`);
  assert.equal((await s.client.send('DELETE', `${widgets}/w1`)).status, 200);
  await eventually('the controller recounts widgets', async () => (await used(ns, 'w'))[name] === '0');
  assert.equal((await s.client.post(widgets, widget('w2'))).status, 201);
});

test('the controller recounts after deletions, and kubectl describe quota shows the rows', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { pods: '2', services: '1', 'services.nodeports': '1' } });
  for (const name of ['a', 'b']) assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod(name))).status, 201);
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('c')), 403, 'Forbidden');
  assert.equal((await s.client.send('DELETE', `/api/v1/namespaces/${ns}/pods/a?gracePeriodSeconds=0`)).status, 200);
  await eventually('pods recounted', async () => (await used(ns, 'q')).pods === '1');
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('c'))).status, 201);
  const svc = { metadata: { name: 's' }, spec: { type: 'NodePort', selector: { app: 'x' }, ports: [{ port: 80 }] } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/services`, svc)).status, 201);
  const described = await s.kubectlOk(['describe', 'quota', 'q', '-n', ns]);
  assert.match(described, /Resource\s+Used\s+Hard/);
  assert.match(described, /pods\s+2\s+2/);
  assert.match(described, /services\s+1\s+1/);
  assert.match(described, /services\.nodeports\s+1\s+1/);
});

test('services: an update that changes the type is charged the difference', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { services: '2', 'services.nodeports': '1', 'services.loadbalancers': '0' } });
  const svc = { metadata: { name: 's' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } };
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/services`, svc)).status, 201);
  assert.deepEqual(await used(ns, 'q'), { services: '1', 'services.loadbalancers': '0', 'services.nodeports': '0' });
  const path = `/api/v1/namespaces/${ns}/services/s`;
  const merge = (body: unknown) => ({ raw: JSON.stringify(body), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assertStatus(await s.client.send('PATCH', path, merge({ spec: { type: 'LoadBalancer' } })), 403, 'Forbidden',
    'services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0');
  assert.equal((await s.client.send('PATCH', path, merge({ spec: { type: 'NodePort' } }))).status, 200);
  assert.deepEqual(await used(ns, 'q'), { services: '1', 'services.loadbalancers': '0', 'services.nodeports': '1' }, 'the update is not charged as a second service');
});

test('claims: storage per class, product-named, and a limited class needs a covering quota', async () => {
  const ns = await namespace();
  const gold = 'gold.storageclass.storage.plat.io/requests.storage';
  await quota(ns, 'q', { hard: { 'requests.storage': '10Gi', [gold]: '3Gi', persistentvolumeclaims: '5' } });
  const claim = (name: string, cls: string, size: string) => ({
    metadata: { name }, spec: { storageClassName: cls, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('a', 'gold', '2Gi'))).status, 201);
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('b', 'gold', '2Gi')), 403, 'Forbidden',
    `persistentvolumeclaims "b" is forbidden: exceeded quota: q, requested: ${gold}=2Gi, used: ${gold}=2Gi, limited: ${gold}=3Gi`);
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('c', 'silver', '5Gi'))).status, 201);
  assert.deepEqual(await used(ns, 'q'), { [gold]: '2Gi', persistentvolumeclaims: '2', 'requests.storage': '7Gi' });
  assertStatus(await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('d', 'bronze', '1Gi')), 403, 'Forbidden',
    'persistentvolumeclaims "d" is forbidden: insufficient quota to consume: bronze.storageclass.storage.plat.io/persistentvolumeclaims,bronze.storageclass.storage.plat.io/requests.storage');
  await quota(ns, 'bronze', { hard: { 'bronze.storageclass.storage.plat.io/requests.storage': '1Gi', 'bronze.storageclass.storage.plat.io/persistentvolumeclaims': '1' } });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('d', 'bronze', '1Gi'))).status, 201);
});

test('a full resync corrects a use that no event brings back', async () => {
  const ns = await namespace();
  await quota(ns, 'q', { hard: { pods: '5' } });
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('a'))).status, 201);
  const client = new InProcessClient(s.registry, 'test-resourcequota');
  const informers = new InformerFactory(client);
  const controller = new ResourceQuotaController(client, () => undefined, informers, { resyncMs: 200 });
  await controller.start();
  try {
    await eventually('the new controller counted once', async () => (await used(ns, 'q')).pods === '1');
    // A use written by hand changes only the status: no recount, until the resync.
    const q = (await s.client.get(`/api/v1/namespaces/${ns}/resourcequotas/q`)).json;
    const wrong = await s.client.send('PUT', `/api/v1/namespaces/${ns}/resourcequotas/q/status`, { body: { ...q, status: { ...q.status, used: { pods: '4' } } } });
    assert.equal(wrong.status, 200, wrong.text);
    await eventually('the resync recounted', async () => (await used(ns, 'q')).pods === '1');
  } finally {
    await controller.stop();
    informers.stopAll();
  }
});
