// The registry as a runtime catalog: a kind with status and scale
// sub-resources, a review object and a create sub-resource answering another
// kind are added to a running server, served, listed in discovery and
// described in OpenAPI v2 and v3 with the verbs their REST objects have; then
// removed, and gone from all of them. Nothing in server/ names them.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { defineKind, type KindDefinition } from '../../src/api/kind.js';
import { t } from '../../src/api/schema.js';
import { fieldErrors } from '../../src/machinery/errors.js';
import { createSubresource, reviewResource, type RestObject } from '../../src/registry/rest.js';
import { startTestServer, TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { envelope, gadgetGroup, gadgets } from '../support/gadgets.js';

const group = gadgetGroup;

const gadgetReviews: KindDefinition = defineKind({
  group, version: 'v1', kind: 'GadgetReview', plural: 'gadgetreviews', scope: 'Cluster', verbs: ['create'],
  definitionName: 'test.gadgets.v1.GadgetReview',
  schema: t.object({ ...envelope, spec: t.object({ color: t.string() }), status: t.object({ allowed: t.bool(), reason: t.string() }) }),
  strategy: { validate: (r) => (r.spec?.color ? [] : [fieldErrors.required('spec.color')]) },
});

const gadgetTokens: KindDefinition = defineKind({
  group, version: 'v1', kind: 'GadgetToken', plural: 'gadgettokens', scope: 'Namespaced', verbs: ['create'],
  definitionName: 'test.gadgets.v1.GadgetToken',
  schema: t.object({ ...envelope, spec: t.object({ audience: t.string() }), status: t.object({ token: t.string() }) }),
});

let s: TestServer;
let review: RestObject;
let token: RestObject;
const base = `/apis/${group}/v1/namespaces/default/gadgets`;

before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

function addAll(): void {
  const store = s.registry.addKind(gadgets);
  review = reviewResource(gadgetReviews, (r, user) => ({ allowed: r.spec.color === 'green', reason: `asked by ${user?.username}` }));
  s.registry.addRest(review);
  token = createSubresource(store, 'token', gadgetTokens, (parent, request) => ({
    ...request, metadata: { name: parent.metadata!.name, namespace: parent.metadata!.namespace },
    status: { token: `${parent.metadata!.uid}:${request.spec.audience}` },
  }));
  s.registry.addRest(token);
}

test('kinds and REST objects added at run time are served, discovered and described', async () => {
  addAll();
  // Served.
  const made = await s.client.post(base, { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { replicas: 1, color: 'red' }, status: { ready: 9 } });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.status, undefined, 'status is not set through the main resource');
  const status = await s.client.put(`${base}/g1/status`, { ...made.json, spec: { replicas: 5, color: 'blue' }, status: { ready: 1 } });
  assert.equal(status.status, 200, status.text);
  assert.deepEqual(status.json.status, { ready: 1 });
  assert.deepEqual(status.json.spec, { replicas: 1, color: 'red' }, 'a status write changes only status');
  const scale = await s.client.get(`${base}/g1/scale`);
  assert.equal(scale.status, 200, scale.text);
  assert.equal(scale.json.kind, 'Scale');
  assert.deepEqual(scale.json.spec, { replicas: 1 });
  const scaled = await s.client.send('PATCH', `${base}/g1/scale`, { raw: '{"spec":{"replicas":4}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(scaled.status, 200, scaled.text);
  assert.equal(scaled.json.spec.replicas, 4);
  const after = await s.client.get(`${base}/g1`);
  assert.deepEqual(after.json.spec, { replicas: 4, color: 'red' }, 'the scale wrote back only replicas');
  assert.ok(after.json.metadata.managedFields.some((e: any) => e.subresource === 'scale'));
  assertStatus(await s.client.send('DELETE', `${base}/g1/scale`), 405, 'MethodNotAllowed');
  assertStatus(await s.client.send('PATCH', `${base}/g1/scale?fieldManager=m`, { raw: '{}', headers: { 'Content-Type': 'application/apply-patch+yaml' } }), 415, 'UnsupportedMediaType');

  assertStatus(await s.client.post(`/apis/${group}/v1/gadgetreviews`, { apiVersion: `${group}/v1`, kind: 'GadgetReview', spec: {} }), 422, 'Invalid');
  const reviewed = await s.client.post(`/apis/${group}/v1/gadgetreviews`, { apiVersion: `${group}/v1`, kind: 'GadgetReview', spec: { color: 'green' } });
  assert.equal(reviewed.status, 201, reviewed.text);
  assert.deepEqual(reviewed.json.status, { allowed: true, reason: 'asked by admin' });
  assertStatus(await s.client.get(`/apis/${group}/v1/gadgetreviews`), 405, 'MethodNotAllowed');
  const tokenAnswer = await s.client.post(`${base}/g1/token`, { apiVersion: `${group}/v1`, kind: 'GadgetToken', spec: { audience: 'x' } });
  assert.equal(tokenAnswer.status, 201, tokenAnswer.text);
  assert.equal(tokenAnswer.json.kind, 'GadgetToken');
  assert.equal(tokenAnswer.json.status.token, `${after.json.metadata.uid}:x`);
  assertStatus(await s.client.post(`${base}/missing/token`, { spec: { audience: 'x' } }), 404, 'NotFound');

  // Discovered, with the verbs of each REST object.
  const groups = await s.client.get('/apis');
  assert.ok(groups.json.groups.some((g: any) => g.name === group));
  const resources = (await s.client.get(`/apis/${group}/v1`)).json.resources as any[];
  const byName = new Map(resources.map((r) => [r.name, r]));
  assert.deepEqual(byName.get('gadgets').verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  assert.deepEqual(byName.get('gadgets').shortNames, ['gd']);
  assert.deepEqual(byName.get('gadgets/status').verbs, ['get', 'patch', 'update']);
  assert.deepEqual({ ...byName.get('gadgets/scale'), verbs: undefined }, { name: 'gadgets/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: undefined });
  assert.deepEqual(byName.get('gadgets/token').verbs, ['create']);
  assert.equal(byName.get('gadgets/token').kind, 'GadgetToken');
  assert.deepEqual(byName.get('gadgetreviews').verbs, ['create']);
  assert.equal(byName.get('gadgetreviews').storageVersionHash, undefined, 'a review stores nothing');

  // Described in OpenAPI v2 and v3.
  const v2 = (await s.client.get('/openapi/v2')).json;
  assert.ok(v2.paths[`${base.replace('/namespaces/default/', '/namespaces/{namespace}/')}/{name}/scale`].patch);
  assert.match(v2.paths[`/apis/${group}/v1/namespaces/{namespace}/gadgets/{name}/token`].post.operationId, /^create\w+V1NamespacedGadgetToken$/);
  assert.ok(v2.paths[`/apis/${group}/v1/gadgetreviews`].post);
  assert.equal(v2.paths[`/apis/${group}/v1/gadgetreviews`].get, undefined);
  assert.ok(v2.definitions['test.autoscaling.v1.Scale'], 'the view kind is defined');
  const index = (await s.client.get('/openapi/v3')).json;
  const docUrl = index.paths[`apis/${group}/v1`].serverRelativeURL;
  const v3 = (await s.client.get(docUrl)).json;
  assert.ok(v3.paths[`/apis/${group}/v1/namespaces/{namespace}/gadgets/{name}/status`].put);
  assert.ok(v3.components.schemas['test.gadgets.v1.GadgetReview']);
});

test('removed, they are gone from routes, discovery and OpenAPI', async () => {
  s.registry.removeRest(review);
  s.registry.removeRest(token);
  s.registry.removeKind(gadgets);
  assertStatus(await s.client.get(`${base}/g1`), 404, 'NotFound');
  assertStatus(await s.client.get(`${base}/g1/scale`), 404, 'NotFound');
  assertStatus(await s.client.post(`/apis/${group}/v1/gadgetreviews`, { spec: { color: 'green' } }), 404, 'NotFound');
  assert.equal((await s.client.get(`/apis/${group}/v1`)).status, 404);
  assert.ok(!(await s.client.get('/apis')).json.groups.some((g: any) => g.name === group));
  const v2 = (await s.client.get('/openapi/v2')).json;
  assert.ok(!Object.keys(v2.paths).some((p) => p.includes(group)));
  assert.equal((await s.client.get('/openapi/v3')).json.paths[`apis/${group}/v1`], undefined);
  // Added again, its objects are still in the store.
  addAll();
  assert.equal((await s.client.get(`${base}/g1`)).json.spec.replicas, 4);
});

test('objects the watch cache shares are frozen; writers work on their own copies', async () => {
  const store = s.registry.store('', 'v1', 'configmaps')!;
  assert.equal((await s.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'shared' }, data: { a: '1' } })).status, 201);
  const list = await store.listStored('default', { resourceVersion: '0' });
  const shared = list.items.find((i) => i.object.metadata!.name === 'shared')!.object;
  assert.ok(Object.isFrozen(shared) && Object.isFrozen(shared.data), 'the shared object is frozen, deeply');
  assert.throws(() => { (shared.data as Record<string, string>).a = 'changed'; }, TypeError);
  const updated = await s.client.put('/api/v1/namespaces/default/configmaps/shared', { ...shared, data: { a: '2' } });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.json.data.a, '2');
});
