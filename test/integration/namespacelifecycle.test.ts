// NamespaceLifecycle over HTTPS: what a client sees when it writes into a
// missing or terminating namespace, or tries to delete a reserved one.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { reservedNamespaces } from '../../src/machinery/vocabulary.js';
import { startTestServer, TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const mergePatch = (body: unknown) => ({ raw: JSON.stringify(body), headers: { 'Content-Type': 'application/merge-patch+json' } });

test('a create in a missing namespace answers 404 for the namespace, in a dry run too', async () => {
  for (const query of ['', '?dryRun=All']) {
    const r = await s.client.post(`/api/v1/namespaces/nope/configmaps${query}`, { metadata: { name: 'cm' }, data: { a: 'b' } });
    assertStatus(r, 404, 'NotFound');
    assert.equal(r.json.message, 'namespaces "nope" not found');
    assert.deepEqual(r.json.details, { name: 'nope', kind: 'namespaces' });
  }
});

test('a terminating namespace takes no new content, while updates and deletes of what is in it go on', async () => {
  // Our own finalizer on the namespace and on the config map hold both, so the namespace stays Terminating.
  const hold = 'example.com/hold';
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'doomed' }, spec: { finalizers: [hold] } })).status, 201);
  const cms = '/api/v1/namespaces/doomed/configmaps';
  assert.equal((await s.client.post(cms, { metadata: { name: 'held', finalizers: [hold] }, data: { a: 'b' } })).status, 201);
  assert.equal((await s.client.delete('/api/v1/namespaces/doomed')).status, 200);
  const ns = await s.client.get('/api/v1/namespaces/doomed');
  assert.equal(ns.json.status.phase, 'Terminating');

  const created = await s.client.post(cms, { metadata: { name: 'late' }, data: { a: 'b' } });
  assertStatus(created, 403, 'Forbidden');
  assert.equal(created.json.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
  assert.equal(created.json.details.name, 'late');
  assert.equal(created.json.details.kind, 'configmaps');
  assert.deepEqual(created.json.details.causes.map((c: any) => [c.reason, c.field]), [['NamespaceTerminating', 'metadata.namespace']]);
  assert.equal((await s.client.get(`${cms}/late`)).status, 404, 'nothing was stored');
  const named = await s.client.post(cms, { metadata: { generateName: 'late-' }, data: {} });
  assertStatus(named, 403, 'Forbidden');

  // Whether or not the namespace controller has asked to delete `held` yet, it may be changed and deleted.
  const labelled = await s.client.send('PATCH', `${cms}/held`, mergePatch({ metadata: { labels: { seen: 'yes' } } }));
  assert.equal(labelled.status, 200, labelled.text);
  const deleted = await s.client.delete(`${cms}/held`);
  assert.equal(deleted.status, 200, deleted.text);
  const released = await s.client.send('PATCH', `${cms}/held`, mergePatch({ metadata: { finalizers: null } }));
  assert.equal(released.status, 200, released.text);
  assert.equal((await s.client.get(`${cms}/held`)).status, 404, 'the object went once released');
  // The namespace itself can still be written (the controller reports through it).
  const nsLabelled = await s.client.send('PATCH', '/api/v1/namespaces/doomed', mergePatch({ metadata: { labels: { seen: 'yes' } } }));
  assert.equal(nsLabelled.status, 200, nsLabelled.text);
});

test('the reserved namespaces cannot be deleted and stay active', async () => {
  for (const name of reservedNamespaces) {
    const r = await s.client.delete(`/api/v1/namespaces/${name}`);
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
    assert.deepEqual(r.json.details, { name, kind: 'namespaces' });
    const ns = await s.client.get(`/api/v1/namespaces/${name}`);
    assert.equal(ns.status, 200);
    assert.equal(ns.json.status.phase, 'Active');
    assert.equal(ns.json.metadata.deletionTimestamp, undefined);
  }
});

test('an invalid object sent into a missing namespace hears about the namespace first', async () => {
  const r = await s.client.post('/api/v1/namespaces/nope/configmaps', { metadata: { name: 'Not_A_Name' }, data: { a: 'b' } });
  assertStatus(r, 404, 'NotFound');
  assert.equal(r.json.message, 'namespaces "nope" not found');
});
