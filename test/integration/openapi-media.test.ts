// OpenAPI says, per operation, which media types it takes and gives; clients
// (kubectl among them) pick what to send from it. Every read the documents
// list is tried with each wire format they name and with protobuf when they
// do not: a listed one is served, an unlisted one is a 406. Strategic merge is
// listed only where a patch of that type is taken.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { gadgetGroup, gadgets } from '../support/gadgets.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  // A kind without protobuf or strategic merge, as custom resources will be.
  s.registry.addKind({ ...gadgets, protobuf: false, strategicMerge: false });
});
after(async () => { await s.close(); });

const protobuf = vocabulary.protobufMediaType;
const strategic = 'application/strategic-merge-patch+json';

test('every read in OpenAPI v2 answers protobuf exactly where the document lists it', async () => {
  const doc = (await s.client.get('/openapi/v2')).json;
  let listed = 0;
  let unlisted = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const get = item.get;
    if (!get || path.includes('/watch/') || !get['x-kubernetes-action']) continue;
    const url = path.replace('{namespace}', 'default').replace('{name}', 'nothing-here');
    const offers: string[] = get.produces;
    const r = await s.client.get(url, { Accept: protobuf });
    if (offers.includes(protobuf)) {
      listed++;
      assert.notEqual(r.status, 406, `${path} lists protobuf`);
    } else {
      unlisted++;
      assertStatus(r, 406, 'NotAcceptable');
    }
    for (const offer of offers.filter((o) => o !== protobuf && !o.includes('watch'))) {
      assert.notEqual((await s.client.get(url, { Accept: offer })).status, 406, `${path} lists ${offer}`);
    }
  }
  assert.ok(listed > 20 && unlisted > 5, `both sorts were tried (${listed} with protobuf, ${unlisted} without)`);
  // The webhook configuration kinds have no protobuf form here; their paths do not offer it.
  const webhooks = doc.paths[`/apis/${vocabulary.admissionRegistrationGroup}/v1/validatingwebhookconfigurations`].get.produces;
  assert.ok(!webhooks.includes(protobuf));
  assert.ok(doc.paths['/api/v1/namespaces/{namespace}/configmaps'].get.produces.includes(protobuf));
});

test('strategic merge is listed only where the handler takes it', async () => {
  const doc = (await s.client.get('/openapi/v2')).json;
  const gadgetPath = doc.paths[`/apis/${gadgetGroup}/v1/namespaces/{namespace}/gadgets/{name}`];
  assert.ok(!gadgetPath.patch.consumes.includes(strategic));
  assert.ok(doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch.consumes.includes(strategic));
  const base = `/apis/${gadgetGroup}/v1/namespaces/default/gadgets`;
  assert.equal((await s.client.post(base, { apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'g' } })).status, 201);
  const r = await s.client.send('PATCH', `${base}/g`, { raw: '{"spec":{"color":"red"}}', headers: { 'Content-Type': strategic } });
  assertStatus(r, 415, 'UnsupportedMediaType');
  const v3 = (await s.client.get(`/openapi/v3/apis/${gadgetGroup}/v1`)).json;
  assert.deepEqual(Object.keys(v3.paths[`/apis/${gadgetGroup}/v1/namespaces/{namespace}/gadgets/{name}`].patch.requestBody.content).sort(),
    ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json']);
  assert.ok(!Object.keys(v3.paths[`/apis/${gadgetGroup}/v1/namespaces/{namespace}/gadgets`].get.responses['200'].content).includes(protobuf));
});

test('the groups discovery also lists by their upstream name have paths under that name in v2 and v3; operation ids stay unique', async () => {
  const doc = (await s.client.get('/openapi/v2')).json;
  for (const path of ['/apis/certificates.k8s.io/v1/certificatesigningrequests', '/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}']) {
    assert.ok(doc.paths[path], path);
    const url = path.replace('{namespace}', 'default').replace('{name}', 'nothing-here');
    assert.notEqual((await s.client.get(url)).status, 406);
  }
  assert.equal(doc.paths['/apis/certificates.k8s.io/v1/certificatesigningrequests'].get['x-kubernetes-group-version-kind'].group, 'certificates.k8s.io');
  const ids = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).filter((op) => op?.operationId).map((op) => op.operationId));
  assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  const index = (await s.client.get('/openapi/v3')).json;
  assert.ok(index.paths['apis/certificates.k8s.io/v1']);
  assert.ok(index.paths[`apis/${vocabulary.certificatesGroup}/v1`]);
});
