// One stored kind served at two versions (test/support/gadgets.ts: v1 is
// stored, v2 renames two fields): every version pair round-trips exactly,
// and objects are read, listed, watched and written through either version,
// each seeing the other's writes in its own shape. Discovery lists both, the
// preferred one first, with one storage version hash; OpenAPI describes both.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { gadgetGroup, versionedGadgets } from '../support/gadgets.js';
import { VersionCodec } from '../../src/api/codec.js';
import { configure, eventually, labelledNamespace, patchWith, startWebhookServer, unconfigure, webhookEntry } from '../support/webhook.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  s.registry.addKind(versionedGadgets);
});
after(async () => { await s.close(); });

const at = (version: string, name = '') => `/apis/${gadgetGroup}/${version}/namespaces/default/gadgets${name ? `/${name}` : ''}`;
const send = (method: string, path: string, contentType: string, body: unknown) =>
  s.client.send(method, path, { raw: JSON.stringify(body), headers: { 'Content-Type': contentType } });

test('every version pair round-trips exactly, managedFields and all', () => {
  const codec = new VersionCodec(versionedGadgets, versionedGadgets.versions[1]!);
  const managedFields = [{ manager: 'm', operation: 'Apply', apiVersion: `${gadgetGroup}/v1`, time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:color': {} } } }];
  const objects = [
    { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'a', namespace: 'ns', labels: { x: 'y' }, managedFields }, spec: { color: 'red', replicas: 3 }, status: { ready: 2 } },
    { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'b' } },
    { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'c' }, spec: {} },
  ];
  for (const stored of objects) {
    const v2 = codec.fromStored(stored);
    assert.equal(v2.apiVersion, `${gadgetGroup}/v2`);
    assert.deepEqual(codec.toStored(v2), stored, 'v1 → v2 → v1');
    assert.deepEqual(codec.fromStored(codec.toStored(v2)), v2, 'v2 → v1 → v2');
  }
  assert.deepEqual(codec.fromStored(objects[0]!).spec, { colour: 'red', count: 3 });
  // The stored object handed in is never changed (cached objects are shared and frozen).
  const frozen = Object.freeze({ ...objects[0]!, spec: Object.freeze({ color: 'blue' }) });
  assert.doesNotThrow(() => codec.fromStored(frozen));
});

test('an object written at one version is read, listed and written at the other, each in its own shape', async () => {
  const created = await s.client.post(at('v2'), { apiVersion: `${gadgetGroup}/v2`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { colour: 'red', count: 2 } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.apiVersion, `${gadgetGroup}/v2`);
  assert.deepEqual(created.json.spec, { colour: 'red', count: 2 });
  const v1 = (await s.client.get(at('v1', 'g1'))).json;
  assert.equal(v1.apiVersion, `${gadgetGroup}/v1`);
  assert.deepEqual(v1.spec, { color: 'red', replicas: 2 });
  assert.equal(v1.metadata.uid, created.json.metadata.uid);

  const replaced = await s.client.put(at('v1', 'g1'), { ...v1, spec: { color: 'green', replicas: 3 } });
  assert.equal(replaced.status, 200, replaced.text);
  assert.deepEqual((await s.client.get(at('v2', 'g1'))).json.spec, { colour: 'green', count: 3 });

  const merged = await send('PATCH', at('v2', 'g1'), 'application/merge-patch+json', { spec: { colour: 'blue' } });
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.json.spec, { colour: 'blue', count: 3 });
  const json = await send('PATCH', at('v2', 'g1'), 'application/json-patch+json', [{ op: 'replace', path: '/spec/count', value: 5 }]);
  assert.equal(json.status, 200, json.text);
  const strategic = await send('PATCH', at('v2', 'g1'), 'application/strategic-merge-patch+json', { spec: { colour: 'black' } });
  assert.equal(strategic.status, 200, strategic.text);
  assert.deepEqual((await s.client.get(at('v1', 'g1'))).json.spec, { color: 'black', replicas: 5 });

  const status = await s.client.put(`${at('v2', 'g1')}/status`, { ...(await s.client.get(at('v2', 'g1'))).json, status: { ready: 5 } });
  assert.equal(status.status, 200, status.text);
  assert.equal(status.json.apiVersion, `${gadgetGroup}/v2`);
  assert.equal((await s.client.get(at('v1', 'g1'))).json.status.ready, 5);

  for (const [version, field] of [['v1', 'color'], ['v2', 'colour']]) {
    const list = (await s.client.get(at(version!))).json;
    assert.equal(list.apiVersion, `${gadgetGroup}/${version}`);
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0].spec[field!], 'black');
    assert.ok(list.metadata.resourceVersion);
  }
});

test('a field of the other version is unknown at this one; a body of the other apiVersion is refused', async () => {
  const strict = await s.client.post(`${at('v2')}?fieldValidation=Strict`, { apiVersion: `${gadgetGroup}/v2`, kind: 'Gadget', metadata: { name: 'mixed' }, spec: { color: 'red' } });
  assertStatus(strict, 400, 'BadRequest');
  assert.match(strict.json.message, /unknown field "spec\.color"/);
  const wrong = await s.client.post(at('v2'), { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'wrong' }, spec: { color: 'red' } });
  assertStatus(wrong, 400, 'BadRequest');
  assert.match(wrong.json.message, /does not match the expected API version/);
});

test('a watch at either version sees every write in its own shape; Tables at the other version work', async () => {
  const v2 = await s.client.watch(`${at('v2')}?watch=true&fieldSelector=metadata.name%3Dw1`);
  const v1 = await s.client.watch(`${at('v1')}?watch=true&fieldSelector=metadata.name%3Dw1`);
  assert.equal((await s.client.post(at('v1'), { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'w1' }, spec: { color: 'red', replicas: 1 } })).status, 201);
  assert.equal((await send('PATCH', at('v2', 'w1'), 'application/merge-patch+json', { spec: { count: 4 } })).status, 200);
  await eventually('both watches saw two events', () => v1.events.length >= 2 && v2.events.length >= 2);
  assert.deepEqual(v2.events.map((e: any) => [e.type, e.object.apiVersion, e.object.spec]), [
    ['ADDED', `${gadgetGroup}/v2`, { colour: 'red', count: 1 }],
    ['MODIFIED', `${gadgetGroup}/v2`, { colour: 'red', count: 4 }],
  ]);
  assert.deepEqual(v1.events.map((e: any) => [e.type, e.object.apiVersion, e.object.spec]), [
    ['ADDED', `${gadgetGroup}/v1`, { color: 'red', replicas: 1 }],
    ['MODIFIED', `${gadgetGroup}/v1`, { color: 'red', replicas: 4 }],
  ]);
  v1.close();
  v2.close();
  const table = await s.client.get(at('v2', 'w1'), { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.equal(table.status, 200, table.text);
  assert.equal(table.json.rows[0].object.metadata.name, 'w1');
});

test('server-side apply at either version: creates, updates, and conflicts with another manager\'s fields across versions', async () => {
  const apply = (version: string, manager: string, spec: Record<string, unknown>, force = false) => s.client.send('PATCH', `${at(version, 'ssa')}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
    raw: JSON.stringify({ apiVersion: `${gadgetGroup}/${version}`, kind: 'Gadget', metadata: { name: 'ssa' }, spec }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  const created = await apply('v2', 'alice', { colour: 'red' });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.spec, { colour: 'red' });
  const conflict = await apply('v1', 'bob', { color: 'blue' });
  assertStatus(conflict, 409, 'Conflict');
  assert.match(conflict.json.message, /conflict with "alice"/);
  const forced = await apply('v1', 'bob', { color: 'blue' }, true);
  assert.equal(forced.status, 200, forced.text);
  assert.deepEqual((await s.client.get(at('v2', 'ssa'))).json.spec, { colour: 'blue' });
  const managers = forced.json.metadata.managedFields.map((m: any) => m.manager).sort();
  assert.deepEqual(managers, ['bob']);
});

test('managedFields across versions: each entry keeps the version it was written in, and is read in it', async () => {
  const apply = (version: string, manager: string, spec: Record<string, unknown>, force = false) => s.client.send('PATCH', `${at(version, 'mf')}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
    raw: JSON.stringify({ apiVersion: `${gadgetGroup}/${version}`, kind: 'Gadget', metadata: { name: 'mf' }, spec }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  const entries = (obj: any) => Object.fromEntries(obj.metadata.managedFields.map((e: any) => [`${e.manager}/${e.operation}`, { apiVersion: e.apiVersion, fields: e.fieldsV1 }]));
  assert.equal((await apply('v2', 'alice', { colour: 'red' })).status, 201);
  // bob's ordinary write at v1: his entry says v1, alice's still v2 with v2's field names.
  const updated = await send('PATCH', `${at('v1', 'mf')}?fieldManager=bob`, 'application/merge-patch+json', { spec: { replicas: 4 } });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual(entries(updated.json), {
    'alice/Apply': { apiVersion: `${gadgetGroup}/v2`, fields: { 'f:spec': { 'f:colour': {} } } },
    'bob/Update': { apiVersion: `${gadgetGroup}/v1`, fields: { 'f:spec': { 'f:replicas': {} } } },
  });
  // Read at v2, the entries are the same (they are not converted).
  assert.deepEqual(entries((await s.client.get(at('v2', 'mf'))).json), entries(updated.json));
  // carol applies at v1 a field alice owns at v2: the conflict names it in alice's version.
  const conflict = await apply('v1', 'carol', { color: 'blue' });
  assertStatus(conflict, 409, 'Conflict');
  assert.equal(conflict.json.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.colour');
  assert.deepEqual(conflict.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.colour' }]);
  // bob's update at v1 took spec.replicas: an update at v2 by dave of spec.count takes it from bob (read at v1).
  const taken = await send('PATCH', `${at('v2', 'mf')}?fieldManager=dave`, 'application/merge-patch+json', { spec: { count: 5 } });
  assert.equal(taken.status, 200, taken.text);
  assert.deepEqual(Object.keys(entries(taken.json)).sort(), ['alice/Apply', 'dave/Update']);
  assert.equal(entries(taken.json)['dave/Update'].apiVersion, `${gadgetGroup}/v2`);
  // alice applies again at v1 without the colour she owned at v2: it is pruned (her last set read at v2).
  const moved = await apply('v1', 'alice', { replicas: 5 }, true);
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual(moved.json.spec, { replicas: 5 });
  assert.equal(entries(moved.json)['alice/Apply'].apiVersion, `${gadgetGroup}/v1`);
  assert.deepEqual(entries(moved.json)['alice/Apply'].fields, { 'f:spec': { 'f:replicas': {} } });
});

test('an entry of a version the kind does not have is dropped by the write that meets it, as upstream', async () => {
  const created = await s.client.post(at('v1'), {
    apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'gone', managedFields: [
      { manager: 'old', operation: 'Update', apiVersion: `${gadgetGroup}/v0`, time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:color': {} } } },
    ] }, spec: { color: 'red' },
  });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.metadata.managedFields.map((e: any) => `${e.manager} ${e.apiVersion}`), [`${created.json.metadata.managedFields[0].manager} ${gadgetGroup}/v1`]);
  assert.ok(!created.json.metadata.managedFields.some((e: any) => e.manager === 'old'));
});

test('field selectors name fields as the version read names them, in lists and watches', async () => {
  for (const [name, colour] of [['fs-red', 'red'], ['fs-blue', 'blue']]) {
    assert.equal((await s.client.post(at('v2'), { apiVersion: `${gadgetGroup}/v2`, kind: 'Gadget', metadata: { name, labels: { fs: 'yes' } }, spec: { colour } })).status, 201);
  }
  const names = (list: any) => list.json.items.map((g: any) => g.metadata.name);
  assert.deepEqual(names(await s.client.get(`${at('v2')}?labelSelector=fs&fieldSelector=spec.colour%3Dred`)), ['fs-red']);
  assert.deepEqual(names(await s.client.get(`${at('v1')}?labelSelector=fs&fieldSelector=spec.color%3Dblue`)), ['fs-blue']);
  assert.deepEqual(names(await s.client.get(`${at('v2')}?labelSelector=fs&fieldSelector=spec.colour!%3Dred,metadata.name%3Dfs-blue`)), ['fs-blue']);
  assertStatus(await s.client.get(`${at('v2')}?fieldSelector=spec.color%3Dred`), 400, 'BadRequest', 'field label not supported: spec.color');
  assertStatus(await s.client.get(`${at('v1')}?fieldSelector=spec.colour%3Dred`), 400, 'BadRequest', 'field label not supported: spec.colour');
  // A watch at v2 selects by v2's name: a change of colour to red is the object arriving.
  const watch = await s.client.watch(`${at('v2')}?watch=true&labelSelector=fs&fieldSelector=spec.colour%3Dred&resourceVersion=0`);
  try {
    const [first] = await watch.waitFor(1);
    assert.deepEqual([first.type, first.object.metadata.name], ['ADDED', 'fs-red']);
    assert.equal((await send('PATCH', at('v1', 'fs-blue'), 'application/merge-patch+json', { spec: { color: 'red' } })).status, 200);
    const [, second] = await watch.waitFor(2);
    assert.deepEqual([second.type, second.object.metadata.name, second.object.spec.colour], ['ADDED', 'fs-blue', 'red']);
  } finally {
    watch.close();
  }
});

test('discovery lists both versions, the preferred first, with one storage version hash; OpenAPI describes both', async () => {
  const group = (await s.client.get(`/apis/${gadgetGroup}`)).json;
  assert.deepEqual(group.versions.map((v: any) => v.version), ['v2', 'v1']);
  assert.equal(group.preferredVersion.version, 'v2');
  const hashes = await Promise.all(['v1', 'v2'].map(async (v) => (await s.client.get(`/apis/${gadgetGroup}/${v}`)).json.resources.find((r: any) => r.name === 'gadgets').storageVersionHash));
  assert.equal(hashes[0], hashes[1]);
  assert.ok(hashes[0]);
  const doc = (await s.client.get('/openapi/v2')).json;
  assert.ok(doc.paths[`/apis/${gadgetGroup}/v2/namespaces/{namespace}/gadgets/{name}`]);
  assert.deepEqual(Object.keys(doc.definitions['test.gadgets.v2.Gadget'].properties.spec.properties).sort(), ['colour', 'count']);
  assert.deepEqual(doc.definitions['test.gadgets.v2.Gadget']['x-kubernetes-group-version-kind'], [{ group: gadgetGroup, kind: 'Gadget', version: 'v2' }]);
});

test('a webhook matched at the other version (matchPolicy Equivalent) sees the object converted, and its patch comes back converted', async () => {
  const hooks = await startWebhookServer();
  try {
    const scene = { client: s.client, hooks };
    const ns = await labelledNamespace(scene, 'equivalent');
    hooks.on('/paint', (review, call) => patchWith(() => [{ op: 'replace', path: '/spec/colour', value: 'painted' }])(review, call));
    await configure(scene, 'mutating', 'paint', webhookEntry(scene, 'paint.example.com', '/paint', ns, {
      rules: [{ operations: ['CREATE'], apiGroups: [gadgetGroup], apiVersions: ['v2'], resources: ['gadgets'] }], matchPolicy: 'Equivalent',
    }));
    const v1 = `/apis/${gadgetGroup}/v1/namespaces/${ns}/gadgets`;
    await eventually('the webhook is called', async () => {
      await s.client.post(`${v1}?dryRun=All`, { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { generateName: 'probe-' }, spec: { color: 'x' } });
      return hooks.callsTo('/paint').length > 0;
    });
    const r = await s.client.post(v1, { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'painted' }, spec: { color: 'red', replicas: 1 } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.spec, { color: 'painted', replicas: 1 });
    const review = hooks.callsTo('/paint').at(-1)!.review.request;
    assert.equal(review.object.apiVersion, `${gadgetGroup}/v2`);
    assert.deepEqual(review.object.spec, { colour: 'red', count: 1 });
    assert.deepEqual(review.kind, { group: gadgetGroup, version: 'v2', kind: 'Gadget' });
    assert.deepEqual(review.requestKind, { group: gadgetGroup, version: 'v1', kind: 'Gadget' });
    await unconfigure(scene, 'mutating', 'paint');
  } finally {
    await hooks.close();
  }
});

test('a request at the other version is reviewed at that version: an Exact rule for it matches, and the review names it', async () => {
  const hooks = await startWebhookServer();
  try {
    const scene = { client: s.client, hooks };
    const ns = await labelledNamespace(scene, 'exact-v2');
    await configure(scene, 'validating', 'v2-only', webhookEntry(scene, 'v2-only.example.com', '/v2-only', ns, {
      rules: [{ operations: ['CREATE'], apiGroups: [gadgetGroup], apiVersions: ['v2'], resources: ['gadgets'] }], matchPolicy: 'Exact',
    }));
    const base = (v: string) => `/apis/${gadgetGroup}/${v}/namespaces/${ns}/gadgets`;
    await eventually('the webhook is called', async () => {
      await s.client.post(`${base('v2')}?dryRun=All`, { apiVersion: `${gadgetGroup}/v2`, kind: 'Gadget', metadata: { generateName: 'probe-' } });
      return hooks.callsTo('/v2-only').length > 0;
    });
    const before = hooks.callsTo('/v2-only').length;
    assert.equal((await s.client.post(base('v1'), { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'at-v1' }, spec: { color: 'red' } })).status, 201);
    assert.equal(hooks.callsTo('/v2-only').length, before, 'a request at v1 does not match an Exact v2 rule');
    assert.equal((await s.client.post(base('v2'), { apiVersion: `${gadgetGroup}/v2`, kind: 'Gadget', metadata: { name: 'at-v2' }, spec: { colour: 'red' } })).status, 201);
    const review = hooks.callsTo('/v2-only').at(-1)!.review.request;
    assert.equal(review.name, 'at-v2');
    assert.deepEqual(review.requestKind, { group: gadgetGroup, version: 'v2', kind: 'Gadget' });
    assert.deepEqual(review.kind, { group: gadgetGroup, version: 'v2', kind: 'Gadget' });
    assert.deepEqual(review.object.spec, { colour: 'red' });
    await unconfigure(scene, 'validating', 'v2-only');
  } finally {
    await hooks.close();
  }
});
