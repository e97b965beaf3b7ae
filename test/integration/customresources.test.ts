// CustomResourceDefinitions served in-process: a definition in upstream's
// form is established and its kind served by the same code as built-in
// kinds (defaults, pruning, schema and CEL validation with upstream's
// messages, status and scale, Table columns, selectable fields, discovery
// with categories, OpenAPI); a changed definition takes effect without a
// restart; two definitions claiming the same names; deletion removes every
// custom object first.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

let s: TestServer;
const widgets = `/apis/${widgetGroup}/v1/namespaces/default/widgets`;

before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

async function established(name: string): Promise<any> {
  return eventually(`${name} established`, async () => {
    const r = await s.client.get(`${crdPath}/${name}`);
    return r.json.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True') ? r.json : undefined;
  });
}

function widget(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: `${widgetGroup}/v1`, kind: 'Widget', metadata: { name }, spec };
}

test('a definition in upstream form is established and its kind served like a built-in one', async () => {
  const made = await s.client.post(crdPath, widgetCrd());
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.apiVersion, 'apiextensions.k8s.io/v1');
  assert.deepEqual(made.json.status.storedVersions, ['v1']);
  assert.ok(made.json.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'], 'markers are kept as sent');
  const crd = await established('widgets.stable.example.com');
  assert.deepEqual(crd.status.acceptedNames.kind, 'Widget');
  assert.ok(crd.status.conditions.some((c: any) => c.type === 'NamesAccepted' && c.status === 'True'));

  const w = await s.client.post(widgets, { ...widget('w1', { replicas: 2, unknown: 1 }), status: { replicas: 5 } });
  assert.equal(w.status, 201, w.text);
  assert.deepEqual(w.json.spec, { color: 'red', replicas: 2, maxReplicas: 10 }, 'defaults filled, unknown fields pruned');
  assert.equal(w.json.status, undefined, 'status is not written through the main resource');
  assert.equal(w.json.metadata.generation, 1);
  assert.match(String(w.headers['warning']), /unknown field \\"spec\.unknown\\"/);

  const st = await s.client.put(`${widgets}/w1/status`, { ...w.json, status: { replicas: 2 } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json.metadata.generation, 1, 'a status write does not bump generation');
  const scale = await s.client.get(`${widgets}/w1/scale`);
  assert.equal(scale.status, 200, scale.text);
  assert.deepEqual([scale.json.kind, scale.json.spec, scale.json.status], ['Scale', { replicas: 2 }, { replicas: 2 }]);
  const scaled = await s.client.send('PATCH', `${widgets}/w1/scale`, { raw: '{"spec":{"replicas":4}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(scaled.status, 200, scaled.text);
  const after = await s.client.get(`${widgets}/w1`);
  assert.equal(after.json.spec.replicas, 4);
  assert.equal(after.json.metadata.generation, 2);

  const table = await s.client.get(widgets, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.equal(table.status, 200, table.text);
  assert.deepEqual(table.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Color', 'Replicas', 'Age']);
  assert.deepEqual(table.json.rows[0].cells.slice(0, 3), ['w1', 'red', 4]);

  await s.client.post(widgets, widget('w2', { color: 'blue' }));
  const blue = await s.client.get(`${widgets}?fieldSelector=spec.color%3Dblue`);
  assert.equal(blue.status, 200, blue.text);
  assert.deepEqual(blue.json.items.map((i: any) => i.metadata.name), ['w2']);

  const discovery = await s.client.get(`/apis/${widgetGroup}/v1`);
  const resource = discovery.json.resources.find((r: any) => r.name === 'widgets');
  assert.deepEqual([resource.kind, resource.shortNames, resource.categories], ['Widget', ['wix'], ['all', 'gizmos']]);
  assert.ok(discovery.json.resources.some((r: any) => r.name === 'widgets/scale'));
  const openapi = await s.client.get(`/openapi/v3/apis/${widgetGroup}/v1`);
  assert.equal(openapi.status, 200, openapi.text);
  assert.ok(JSON.stringify(openapi.json).includes('The colour of the widget.'));

  assertStatus(await s.client.send('PATCH', `${widgets}/w1`, { raw: '{}', headers: { 'Content-Type': 'application/strategic-merge-patch+json' } }), 415, 'UnsupportedMediaType');
  assertStatus(await s.client.send('POST', widgets, { raw: 'k8s\0', headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' } }), 415, 'UnsupportedMediaType');
  assertStatus(await s.client.get(`${widgets}/w1`, { Accept: 'application/vnd.kubernetes.protobuf' }), 406, 'NotAcceptable');
});

test('objects that break the schema get upstream\'s messages', async () => {
  await established('widgets.stable.example.com');
  const cases: [string, Record<string, unknown>, string][] = [
    ['type', { replicas: 'two' }, 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
    ['enum', { color: 'pink' }, 'spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"'],
    ['pattern', { name: 'UPPER' }, 'spec.name: Invalid value: "UPPER": spec.name in body should match \'^[a-z]+$\''],
    ['minimum', { replicas: -1 }, 'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'],
    ['CEL rule', { replicas: 20 }, 'spec: Invalid value: "object": replicas must not exceed maxReplicas'],
  ];
  for (const [what, spec, message] of cases) {
    const r = await s.client.post(widgets, widget(`bad-${what.replace(/ /g, '-').toLowerCase()}`, spec));
    assertStatus(r, 422, 'Invalid');
    assert.ok(r.json.message.includes(message), `${what}: ${r.json.message}`);
  }
  const sized = await s.client.post(widgets, widget('sized', { size: 'large' }));
  assert.equal(sized.status, 201, sized.text);
  const shrunk = await s.client.send('PATCH', `${widgets}/sized`, { raw: '{"spec":{"size":"small"}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
  assertStatus(shrunk, 422, 'Invalid');
  assert.ok(shrunk.json.message.includes('spec.size: Invalid value: "string": size is immutable'), shrunk.json.message);
});

test('definitions themselves are validated as upstream does', async () => {
  const cases: [string, Record<string, any>, string][] = [
    ['group without a dot', widgetCrd({ group: 'example' }), 'spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ['name', { ...widgetCrd(), metadata: { name: 'other.stable.example.com' } }, 'metadata.name: Invalid value: "other.stable.example.com": must be spec.names.plural+"."+spec.group'],
    ['two storage versions', widgetCrd({ versions: [{ ...widgetCrd().spec.versions[0] }, { ...widgetCrd().spec.versions[0], name: 'v2' }] }), 'spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage version'],
    ['scope', widgetCrd({ scope: 'Everywhere' }), 'spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"'],
    ['untyped field', widgetCrd({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } } } }] }),
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'],
    ['CEL rule that does not compile', widgetCrd({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.nope ==' }] } } } } }] }),
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: '],
    ['no schema', widgetCrd({ versions: [{ name: 'v1', served: true, storage: true }] }), 'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ['additionalProperties beside properties', widgetCrd({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } } } } }] }),
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive'],
  ];
  for (const [what, body, message] of cases) {
    const r = await s.client.post(crdPath, body);
    assertStatus(r, 422, 'Invalid');
    assert.ok(r.json.message.includes(message), `${what}: ${r.json.message}`);
  }
});

test('a changed definition takes effect without a restart; conflicting names are reported, not served', async () => {
  const live = await established('widgets.stable.example.com');
  const open = await s.client.watch(`${widgets}?watch=1&resourceVersion=${live.metadata.resourceVersion}`);
  const v2 = { ...live.spec.versions[0], name: 'v2', storage: false, additionalPrinterColumns: [] };
  const changed = await s.client.put(`${crdPath}/widgets.stable.example.com`, { ...live, spec: { ...live.spec, versions: [live.spec.versions[0], v2] } });
  assert.equal(changed.status, 200, changed.text);
  const atV2 = await eventually('v2 served', async () => {
    const r = await s.client.get(`/apis/${widgetGroup}/v2/namespaces/default/widgets/w1`);
    return r.status === 200 ? r : undefined;
  });
  assert.equal(atV2.json.apiVersion, `${widgetGroup}/v2`);
  const ended = await open.waitEnd();
  assert.deepEqual([ended.at(-1).type, ended.at(-1).object.code], ['ERROR', 410], 'an open watch ends so that its client starts again on what is served now');
  const table = await s.client.get(`/apis/${widgetGroup}/v2/namespaces/default/widgets`, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(table.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Age'], 'a version without columns shows Age, as upstream');

  // Another definition of the group claiming the kind Widget under another plural.
  const twin = widgetCrd({}, 'gizmos', 'Widget');
  twin.spec.names.shortNames = ['wix'];
  assert.equal((await s.client.post(crdPath, twin)).status, 201);
  const refused = await eventually('names refused', async () => {
    const r = await s.client.get(`${crdPath}/gizmos.stable.example.com`);
    return r.json.status?.conditions?.find((c: any) => c.type === 'NamesAccepted' && c.status === 'False');
  });
  assert.match(refused.message, /is already in use/);
  assertStatus(await s.client.get(`/apis/${widgetGroup}/v1/namespaces/default/gizmos`), 404, 'NotFound');
  assert.equal((await s.client.delete(`${crdPath}/gizmos.stable.example.com`)).status, 200);
});

test('deleting a definition deletes its objects first (their finalizers honoured), then the definition', async () => {
  const held = await s.client.post(widgets, { ...widget('held', {}), metadata: { name: 'held', finalizers: ['example.com/hold'] } });
  assert.equal(held.status, 201, held.text);
  const del = await s.client.delete(`${crdPath}/widgets.stable.example.com`);
  assert.equal(del.status, 200, del.text);
  assert.ok(del.json.metadata.finalizers.includes('customresourcecleanup.apiextensions.plat.io'));
  const terminating = await s.client.get(`${crdPath}/widgets.stable.example.com`);
  assert.ok(terminating.json.status.conditions.some((c: any) => c.type === 'Terminating' && c.status === 'True'));
  await eventually('objects without finalizers deleted', async () => {
    const r = await s.client.get(widgets);
    return r.json.items?.length === 1 && r.json.items[0].metadata.name === 'held' && r.json.items[0].metadata.deletionTimestamp ? true : undefined;
  });
  assert.equal((await s.client.get(`${crdPath}/widgets.stable.example.com`)).status, 200, 'held by the object\'s finalizer');
  const refused = await s.client.post(widgets, widget('late', {}));
  assertStatus(refused, 405, 'MethodNotAllowed');
  assert.equal(refused.json.message, 'create not allowed while custom resource definition is terminating');
  const h = await s.client.get(`${widgets}/held`);
  assert.equal((await s.client.put(`${widgets}/held`, { ...h.json, metadata: { ...h.json.metadata, finalizers: [] } })).status, 200);
  await eventually('definition gone', async () => ((await s.client.get(`${crdPath}/widgets.stable.example.com`)).status === 404 ? true : undefined));
  await eventually('kind no longer served', async () => ((await s.client.get(widgets)).status === 404 ? true : undefined));
});

test('a namespace deleted with custom objects in it; a schema of several hundred kilobytes', async () => {
  // Many properties, as operators generate them: about 300 KB of schema.
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 1500; i++) {
    properties[`field${i}`] = { type: 'object', description: `Field number ${i} of a generated schema, described at some length as generators do.`, properties: { value: { type: 'string', maxLength: 64 }, count: { type: 'integer', minimum: 0 } } };
  }
  const big = widgetCrd({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } } } }] }, 'bigs', 'Big');
  assert.ok(JSON.stringify(big).length > 250_000, String(JSON.stringify(big).length));
  const made = await s.client.post(crdPath, big);
  assert.equal(made.status, 201, made.text);
  await established('bigs.stable.example.com');
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201);
  const bigs = `/apis/${widgetGroup}/v1/namespaces/doomed/bigs`;
  const obj = await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: 'b1' }, spec: { field7: { value: 'x', count: 3 } } });
  assert.equal(obj.status, 201, obj.text);
  const bad = await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: 'b2' }, spec: { field1499: { count: -1 } } });
  assertStatus(bad, 422, 'Invalid');
  assert.match(bad.json.message, /spec.field1499.count: Invalid value: -1: spec.field1499.count in body should be greater than or equal to 0/);
  // Compiled once: the kind (with its compiled schema) built at establishing serves every request, and a change
  // of the definition that leaves its spec alone (a label, the status the server writes) does not build it again.
  const servedKind = () => s.registry.kinds.find((k) => k.group === widgetGroup && k.plural === 'bigs');
  const compiled = servedKind();
  assert.ok(compiled);
  for (let i = 0; i < 5; i++) assert.equal((await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: `many-${i}` }, spec: {} })).status, 201);
  const labelled = await s.client.send('PATCH', `${crdPath}/bigs.stable.example.com`, { raw: '{"metadata":{"labels":{"touched":"yes"}}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(labelled.status, 200, labelled.text);
  await eventually('the label seen by the server', async () => (await s.client.get(`${crdPath}/bigs.stable.example.com`)).json.metadata.labels?.touched === 'yes');
  assert.equal((await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: 'after-label' }, spec: {} })).status, 201);
  assert.equal(servedKind(), compiled, 'the same compiled kind serves');
  assert.equal((await s.client.delete('/api/v1/namespaces/doomed')).status, 200);
  await eventually('namespace and its custom objects gone', async () => ((await s.client.get('/api/v1/namespaces/doomed')).status === 404 ? true : undefined));
  assert.equal((await s.client.get(`${bigs}/b1`)).status, 404);
});

test('the garbage collector follows owner references to and from custom objects', async () => {
  await established('bigs.stable.example.com');
  const bigs = `/apis/${widgetGroup}/v1/namespaces/default/bigs`;
  const owner = await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: 'owner' }, spec: {} });
  assert.equal(owner.status, 201, owner.text);
  const ref = (o: any, apiVersion: string, kind: string) => [{ apiVersion, kind, name: o.metadata.name, uid: o.metadata.uid }];
  const cm = await s.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'owned', ownerReferences: ref(owner.json, `${widgetGroup}/v1`, 'Big') } });
  assert.equal(cm.status, 201, cm.text);
  const dependent = await s.client.post(bigs, { apiVersion: `${widgetGroup}/v1`, kind: 'Big', metadata: { name: 'dependent', ownerReferences: ref(cm.json, 'v1', 'ConfigMap') }, spec: {} });
  assert.equal(dependent.status, 201, dependent.text);
  assert.equal((await s.client.delete(`${bigs}/owner`)).status, 200);
  await eventually('the ConfigMap owned by a custom object collected', async () => ((await s.client.get('/api/v1/namespaces/default/configmaps/owned')).status === 404 ? true : undefined));
  await eventually('the custom object owned by the ConfigMap collected', async () => ((await s.client.get(`${bigs}/dependent`)).status === 404 ? true : undefined));
});

test('a default added to a definition shows in reads of objects stored before it (get, list, watch), as upstream defaults on read', async () => {
  const schema = (withDefault: boolean) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string', ...(withDefault ? { default: 'bee' } : {}) } } } } },
  });
  const things = `/apis/${widgetGroup}/v1/namespaces/default/things`;
  const made = await s.client.post(crdPath, {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `things.${widgetGroup}` },
    spec: { group: widgetGroup, scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: schema(false) }] },
  });
  assert.equal(made.status, 201, made.text);
  await eventually('things served', async () => ((await s.client.get(things)).status === 200 ? true : undefined));
  const old = await s.client.post(things, { apiVersion: `${widgetGroup}/v1`, kind: 'Thing', metadata: { name: 'old' }, spec: { a: 'x' } });
  assert.deepEqual(old.json.spec, { a: 'x' });
  const live = await established(`things.${widgetGroup}`);
  live.spec.versions[0].schema = schema(true);
  assert.equal((await s.client.put(`${crdPath}/things.${widgetGroup}`, live)).status, 200);
  await eventually('the default applied on read', async () => ((await s.client.get(`${things}/old`)).json.spec?.b === 'bee' ? true : undefined));
  assert.deepEqual((await s.client.get(things)).json.items.map((i: any) => i.spec), [{ a: 'x', b: 'bee' }]);
  const watch = await s.client.watch(`${things}?watch=1`);
  try {
    const [added] = await watch.waitFor(1);
    assert.deepEqual([added.type, added.object.spec], ['ADDED', { a: 'x', b: 'bee' }]);
  } finally {
    watch.close();
  }
  const fresh = await s.client.post(things, { apiVersion: `${widgetGroup}/v1`, kind: 'Thing', metadata: { name: 'fresh' }, spec: { a: 'y' } });
  assert.deepEqual(fresh.json.spec, { a: 'y', b: 'bee' }, 'written with the default');
  assert.deepEqual((await s.client.get(`${things}/fresh`)).json.spec, { a: 'y', b: 'bee' });
  assert.equal((await s.client.delete(`${crdPath}/things.${widgetGroup}`)).status, 200);
});
