// Tables, PartialObjectMetadata and protobuf answers, negotiated from Accept.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary, upstreamCompat } from '../../src/machinery/vocabulary.js';
import { decodeProtobufObject, builtinSchemaLookup } from '../../src/api/protobuf/index.js';
import { builtinKinds } from '../../src/api/catalog.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'views' } });
  await s.client.post('/api/v1/namespaces/views/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { a: 'YQ==', b: 'Yg==' } });
});
after(async () => { await s.close(); });

const tableAccept = (g: string) => `application/json;as=Table;v=v1;g=${g}`;

test('a Table of a list uses the kind\'s printer columns, in our meta group or upstream\'s', async () => {
  for (const group of [vocabulary.metaGroup, upstreamCompat.metaGroup]) {
    const r = await s.client.get('/api/v1/namespaces/views/secrets', { Accept: `${tableAccept(group)},application/json` });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], tableAccept(group));
    assert.equal(r.json.kind, 'Table');
    assert.equal(r.json.apiVersion, `${group}/v1`);
    assert.deepEqual(r.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Type', 'Data', 'Age']);
    assert.deepEqual(r.json.rows[0].cells.slice(0, 3), ['s1', 'Opaque', 2]);
    assert.match(r.json.rows[0].cells[3], /^\d+s$/);
    assert.equal(r.json.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(r.json.rows[0].object.metadata.name, 's1');
    assert.ok(r.json.metadata.resourceVersion);
  }
});

test('Table of one object, includeObject=Object and None; default columns for kinds without any', async () => {
  const one = await s.client.get('/api/v1/namespaces/views/secrets/s1?includeObject=Object', { Accept: tableAccept(vocabulary.metaGroup) });
  assert.equal(one.json.rows.length, 1);
  assert.equal(one.json.rows[0].object.kind, 'Secret');
  const none = await s.client.get('/api/v1/namespaces/views/secrets?includeObject=None', { Accept: tableAccept(vocabulary.metaGroup) });
  assert.equal(none.json.rows[0].object, undefined);
  const bad = await s.client.get('/api/v1/namespaces/views/secrets?includeObject=Everything', { Accept: tableAccept(vocabulary.metaGroup) });
  assert.equal(bad.status, 400);
});

test('PartialObjectMetadata and PartialObjectMetadataList', async () => {
  const one = await s.client.get('/api/v1/namespaces/views/secrets/s1', { Accept: `application/json;as=PartialObjectMetadata;v=v1;g=${vocabulary.metaGroup}` });
  assert.equal(one.json.kind, 'PartialObjectMetadata');
  assert.equal(one.json.data, undefined);
  assert.equal(one.json.metadata.name, 's1');
  const list = await s.client.get('/api/v1/namespaces/views/secrets', { Accept: `application/json;as=PartialObjectMetadataList;v=v1;g=${vocabulary.metaGroup}` });
  assert.equal(list.json.kind, 'PartialObjectMetadataList');
  assert.equal(list.json.items[0].kind, 'PartialObjectMetadata');
});

test('protobuf answers for built-in kinds, in the envelope, under either media type name', async () => {
  for (const mediaType of [vocabulary.protobufMediaType, upstreamCompat.protobufMediaType]) {
    const r = await s.client.send('GET', '/api/v1/namespaces/views/secrets/s1', { headers: { Accept: mediaType } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], mediaType);
  }
  const raw = await rawGet('/api/v1/namespaces/views/secrets', vocabulary.protobufMediaType);
  assert.deepEqual([...raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  const list = decodeProtobufObject(raw, builtinSchemaLookup(builtinKinds));
  assert.equal(list.kind, 'SecretList');
  assert.equal(list.items[0].metadata.name, 's1');
  assert.deepEqual(list.items[0].data, { a: 'YQ==', b: 'Yg==' });
  const missing = await rawGet('/api/v1/namespaces/views/secrets/nope', vocabulary.protobufMediaType);
  const status = decodeProtobufObject(missing, builtinSchemaLookup(builtinKinds));
  assert.equal(status.kind, 'Status');
  assert.equal(status.code, 404);
  assert.equal(status.reason, 'NotFound');
});

test('q-values choose among media types; nothing acceptable is 406', async () => {
  const r = await s.client.get('/api/v1/namespaces/views/secrets/s1', { Accept: 'application/yaml;q=0.5, application/json;q=0.9' });
  assert.equal(r.headers['content-type'], 'application/json');
  const y = await s.client.get('/api/v1/namespaces/views/secrets/s1', { Accept: 'application/yaml;q=1, application/json;q=0.9' });
  assert.equal(y.headers['content-type'], 'application/yaml');
  const none = await s.client.get('/api/v1/namespaces/views/secrets/s1', { Accept: 'image/png, application/json;q=0' });
  assert.equal(none.status, 406);
  assert.equal(none.json.reason, 'NotAcceptable');
});

async function rawGet(path: string, accept: string): Promise<Buffer> {
  return (await s.client.get(path, { Accept: accept })).body;
}
