// REST semantics against a real in-process server over HTTPS.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assertStatus } from '../support/hostile.js';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const sa = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name }, ...extra });

describe('namespaces', () => {
  test('reserved namespaces exist and are Active', async () => {
    const r = await s.client.get('/api/v1/namespaces');
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'NamespaceList');
    const names = r.json.items.map((n: any) => n.metadata.name).sort();
    assert.deepEqual(names, ['default', vocabulary.publicNamespace, vocabulary.systemNamespace].sort());
    for (const n of r.json.items) {
      assert.equal(n.status.phase, 'Active');
      assert.deepEqual(n.spec.finalizers, [vocabulary.namespaceFinalizer]);
      assert.equal(n.metadata.labels[vocabulary.namespaceNameLabel], n.metadata.name);
    }
  });

  test('create fills server fields; namespace names must be DNS labels', async () => {
    const r = await s.client.post('/api/v1/namespaces', ns('team-a'));
    assert.equal(r.status, 201);
    assert.match(r.json.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(r.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(r.json.metadata.resourceVersion, /^\d+$/);
    const bad = await s.client.post('/api/v1/namespaces', ns('a.b'));
    assertStatus(bad, 422, 'Invalid');
    assert.equal(bad.json.details.kind, 'Namespace');
    assert.equal(bad.json.details.causes[0].field, 'metadata.name');
  });
});

describe('service accounts', () => {
  before(async () => { await s.client.post('/api/v1/namespaces', ns('sa-test')); });

  test('create, get, list, replace, delete', async () => {
    const base = '/api/v1/namespaces/sa-test/serviceaccounts';
    const c = await s.client.post(base, sa('bot', { secrets: [{ name: 'x' }], automountServiceAccountToken: false }));
    assert.equal(c.status, 201);
    assert.equal(c.json.metadata.namespace, 'sa-test');
    assert.equal(c.json.metadata.generation, undefined);
    const g = await s.client.get(`${base}/bot`);
    assert.equal(g.status, 200);
    assert.deepEqual(g.json, c.json);
    const l = await s.client.get(`${base}?fieldSelector=metadata.name%3Dbot`);
    assert.equal(l.json.kind, 'ServiceAccountList');
    assert.equal(l.json.apiVersion, 'v1');
    assert.equal(l.json.items.length, 1);
    assert.ok(Number(l.json.metadata.resourceVersion) >= Number(c.json.metadata.resourceVersion));
    const all = await s.client.get('/api/v1/serviceaccounts');
    assert.ok(all.json.items.some((i: any) => i.metadata.namespace === 'sa-test'));

    const u = await s.client.put(`${base}/bot`, { ...g.json, automountServiceAccountToken: true });
    assert.equal(u.status, 200);
    assert.equal(u.json.metadata.uid, c.json.metadata.uid);
    assert.notEqual(u.json.metadata.resourceVersion, c.json.metadata.resourceVersion);
    const stale = await s.client.put(`${base}/bot`, g.json);
    assertStatus(stale, 409, 'Conflict');
    assert.match(stale.json.message, /the object has been modified/);

    const d = await s.client.delete(`${base}/bot`);
    assert.equal(d.status, 200);
    assert.equal(d.json.kind, 'ServiceAccount', 'ServiceAccount delete answers with the object');
    assertStatus(await s.client.get(`${base}/bot`), 404, 'NotFound');
  });

  test('PUT of a missing object creates it only for kinds that allow it (events), else 404', async () => {
    assertStatus(await s.client.put('/api/v1/namespaces/sa-test/serviceaccounts/made-by-put', sa('made-by-put')), 404, 'NotFound');
    assertStatus(await s.client.put('/api/v1/namespaces/sa-test/configmaps/made-by-put', { metadata: { name: 'made-by-put' }, data: { a: 'b' } }), 404, 'NotFound');
    assertStatus(await s.client.put('/api/v1/namespaces/sa-test/secrets/made-by-put', { metadata: { name: 'made-by-put' } }), 404, 'NotFound');
    assertStatus(await s.client.put('/api/v1/namespaces/made-by-put', { metadata: { name: 'made-by-put' } }), 404, 'NotFound');
    const r = await s.client.put('/api/v1/namespaces/sa-test/events/made-by-put', { metadata: { name: 'made-by-put' }, involvedObject: { kind: 'Pod', name: 'x' } });
    assert.equal(r.status, 201);
    assert.equal(r.json.metadata.name, 'made-by-put');
  });

  test('generateName gives a five-character suffix', async () => {
    const r = await s.client.post('/api/v1/namespaces/sa-test/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'gen-' } });
    assert.equal(r.status, 201);
    assert.match(r.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  test('errors are Status objects with the right code and reason', async () => {
    const base = '/api/v1/namespaces/sa-test/serviceaccounts';
    assertStatus(await s.client.send('POST', base, { raw: '{"apiVersion": "v1", ', headers: { 'Content-Type': 'application/json' } }), 400, 'BadRequest');
    assertStatus(await s.client.send('POST', base, { raw: '', headers: { 'Content-Type': 'application/json' } }), 400, 'BadRequest');
    assertStatus(await s.client.post(base, [1, 2]), 400, 'BadRequest');
    assertStatus(await s.client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), 400, 'BadRequest');
    assertStatus(await s.client.post(base, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 42 } }), 400, 'BadRequest');
    const invalid = await s.client.post(base, sa('Not_Valid'));
    assertStatus(invalid, 422, 'Invalid');
    assert.equal(invalid.json.details.name, 'Not_Valid');
    assert.deepEqual(invalid.json.details.causes.map((c: any) => c.field), ['metadata.name']);
    const noName = await s.client.post(base, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: {} });
    assertStatus(noName, 422, 'Invalid');
    await s.client.post(base, sa('dup'));
    const dup = await s.client.post(base, sa('dup'));
    assertStatus(dup, 409, 'AlreadyExists');
    assert.equal(dup.json.message, 'serviceaccounts "dup" already exists');
    assert.deepEqual(dup.json.details, { name: 'dup', kind: 'serviceaccounts' });
    const missingNs = await s.client.post('/api/v1/namespaces/nowhere/serviceaccounts', sa('x'));
    assertStatus(missingNs, 404, 'NotFound');
    assert.equal(missingNs.json.message, 'namespaces "nowhere" not found');
    const mismatch = await s.client.post(base, { ...sa('y'), metadata: { name: 'y', namespace: 'other' } });
    assertStatus(mismatch, 400, 'BadRequest');
    assertStatus(await s.client.get('/api/v1/namespaces/sa-test/widgets'), 404, 'NotFound');
    assertStatus(await s.client.get('/apis/nothing.example/v1/things'), 404, 'NotFound');
    assertStatus(await s.client.send('POST', `${base}/dup`, { body: sa('dup') }), 405, 'MethodNotAllowed');
    const huge = await s.client.send('POST', base, { raw: Buffer.alloc(3 * 1024 * 1024 + 10, 0x20), headers: { 'Content-Type': 'application/json' } });
    assertStatus(huge, 413, 'RequestEntityTooLarge');
    const wrongName = await s.client.put(`${base}/dup`, sa('other'));
    assertStatus(wrongName, 400, 'BadRequest');
    assertStatus(await s.client.post(`${base}?dryRun=Some`, sa('z')), 422, 'Invalid');
    assertStatus(await s.client.get(base, { Accept: 'text/html' }), 406, 'NotAcceptable');
    assertStatus(await s.client.send('POST', base, { raw: 'x', headers: { 'Content-Type': 'text/plain' } }), 415, 'UnsupportedMediaType');
    // the server is still fine after all of that
    assert.equal((await s.client.get('/readyz')).status, 200);
  });

  test('unknown fields: dropped with a warning by default, refused when Strict', async () => {
    const base = '/api/v1/namespaces/sa-test/serviceaccounts';
    const warn = await s.client.post(base, { ...sa('unknown-warn'), bogus: 1, metadata: { name: 'unknown-warn', alsoBogus: true } });
    assert.equal(warn.status, 201);
    assert.equal(warn.json.bogus, undefined);
    const warning = String(warn.headers.warning);
    assert.match(warning, /299 - "unknown field \\"bogus\\""/);
    assert.match(warning, /unknown field \\"metadata.alsoBogus\\"/);
    const strict = await s.client.post(`${base}?fieldValidation=Strict`, { ...sa('unknown-strict'), bogus: 1 });
    assertStatus(strict, 400, 'BadRequest');
    assert.match(strict.json.message, /strict decoding error: unknown field "bogus"/);
    const ignore = await s.client.post(`${base}?fieldValidation=Ignore`, { ...sa('unknown-ignore'), bogus: 1 });
    assert.equal(ignore.status, 201);
    assert.equal(ignore.headers.warning, undefined);
  });

  test('YAML bodies and ?pretty', async () => {
    const yaml = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-yaml\n';
    const r = await s.client.send('POST', '/api/v1/namespaces/sa-test/serviceaccounts?pretty=true', { raw: yaml, headers: { 'Content-Type': 'application/yaml' } });
    assert.equal(r.status, 201);
    assert.match(r.text, /^\{\n {2}"kind": "ServiceAccount",|^\{\n {2}"apiVersion"/);
    const y = await s.client.get('/api/v1/namespaces/sa-test/serviceaccounts/from-yaml', { Accept: 'application/yaml' });
    assert.equal(y.headers['content-type'], 'application/yaml');
    assert.match(y.text, /name: from-yaml/);
  });

  test('dry-run stores nothing', async () => {
    const r = await s.client.post('/api/v1/namespaces/sa-test/serviceaccounts?dryRun=All', sa('dry'));
    assert.equal(r.status, 201);
    assertStatus(await s.client.get('/api/v1/namespaces/sa-test/serviceaccounts/dry'), 404, 'NotFound');
  });

  test('deletecollection with a label selector', async () => {
    const base = '/api/v1/namespaces/sa-test/serviceaccounts';
    for (const [name, tier] of [['dc-a', 'x'], ['dc-b', 'x'], ['dc-c', 'y']]) {
      assert.equal((await s.client.post(base, { ...sa(name), metadata: { name, labels: { tier } } })).status, 201);
    }
    const r = await s.client.delete(`${base}?labelSelector=tier%3Dx`);
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'ServiceAccountList', 'deletecollection answers the list of what it deleted');
    assert.deepEqual(r.json.items.map((i: any) => i.metadata.name).sort(), ['dc-a', 'dc-b']);
    const left = await s.client.get(`${base}?labelSelector=tier`);
    assert.deepEqual(left.json.items.map((i: any) => i.metadata.name), ['dc-c']);
    assertStatus(await s.client.get(`${base}?labelSelector=${encodeURIComponent('a b c')}`), 400, 'BadRequest');
    assertStatus(await s.client.get(`${base}?fieldSelector=spec.nothing%3D1`), 400, 'BadRequest');
  });
});

describe('secrets and config maps', () => {
  before(async () => { await s.client.post('/api/v1/namespaces', ns('data')); });

  test('secret: type defaults to Opaque, stringData folds into data, base64 is checked', async () => {
    const base = '/api/v1/namespaces/data/secrets';
    const r = await s.client.post(base, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { a: 'YQ==' }, stringData: { b: 'hello', a: 'wins' } });
    assert.equal(r.status, 201);
    assert.equal(r.json.type, 'Opaque');
    assert.equal(r.json.stringData, undefined);
    assert.deepEqual(r.json.data, { a: Buffer.from('wins').toString('base64'), b: Buffer.from('hello').toString('base64') });
    assertStatus(await s.client.post(base, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's2' }, data: { a: 'not base64!' } }), 400, 'BadRequest');
    const badKey = await s.client.post(base, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3' }, data: { 'bad key': 'YQ==' } });
    assertStatus(badKey, 422, 'Invalid');
    assert.equal(badKey.json.details.causes[0].field, 'data[bad key]');
    const tokenWithoutAccount = await s.client.post(base, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's4' }, type: vocabulary.serviceAccountTokenSecretType });
    assertStatus(tokenWithoutAccount, 422, 'Invalid');
    const d = await s.client.delete(`${base}/s1`);
    assert.equal(d.status, 200);
    assert.equal(d.json.kind, 'Status');
    assert.equal(d.json.status, 'Success');
    assert.equal(d.json.details.name, 's1');
  });

  test('immutable config maps and secrets refuse data changes', async () => {
    const base = '/api/v1/namespaces/data/configmaps';
    const c = await s.client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen' }, data: { k: 'v' }, immutable: true });
    assert.equal(c.status, 201);
    const change = await s.client.put(`${base}/frozen`, { ...c.json, data: { k: 'other' } });
    assertStatus(change, 422, 'Invalid');
    const labelOnly = await s.client.put(`${base}/frozen`, { ...c.json, metadata: { ...c.json.metadata, labels: { a: 'b' } } });
    assert.equal(labelOnly.status, 200);
    const dupKey = await s.client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dupkey' }, data: { k: 'v' }, binaryData: { k: 'AA==' } });
    assertStatus(dupKey, 422, 'Invalid');
    const secretBase = '/api/v1/namespaces/data/secrets';
    const sec = await s.client.post(secretBase, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'frozen' }, data: { a: 'YQ==' }, immutable: true });
    assertStatus(await s.client.put(`${secretBase}/frozen`, { ...sec.json, data: { a: 'Yg==' } }), 422, 'Invalid');
    assertStatus(await s.client.put(`${secretBase}/frozen`, { ...sec.json, type: 'Other' }), 422, 'Invalid');
  });

  test('events live in namespaces and check their involved object', async () => {
    const base = '/api/v1/namespaces/data/events';
    const ok = await s.client.post(base, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'ConfigMap', name: 'frozen', namespace: 'data' }, reason: 'Tested', message: 'hi', type: 'Normal' });
    assert.equal(ok.status, 201);
    const wrongNs = await s.client.post(base, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e2' }, involvedObject: { kind: 'ConfigMap', name: 'frozen', namespace: 'elsewhere' } });
    assertStatus(wrongNs, 422, 'Invalid');
    const byReason = await s.client.get(`${base}?fieldSelector=reason%3DTested,involvedObject.kind%3DConfigMap`);
    assert.deepEqual(byReason.json.items.map((e: any) => e.metadata.name), ['e1']);
  });
});

describe('discovery, version and health', () => {
  test('/api, /apis, /api/v1', async () => {
    const api = await s.client.get('/api');
    assert.equal(api.json.kind, 'APIVersions');
    assert.deepEqual(api.json.versions, ['v1']);
    assert.equal((await s.client.get('/apis')).json.kind, 'APIGroupList');
    const v1 = await s.client.get('/api/v1');
    assert.equal(v1.json.kind, 'APIResourceList');
    assert.equal(v1.json.groupVersion, 'v1');
    const saRes = v1.json.resources.find((r: any) => r.name === 'serviceaccounts');
    assert.deepEqual(saRes.shortNames, ['sa']);
    assert.equal(saRes.namespaced, true);
    assert.equal(saRes.kind, 'ServiceAccount');
    assert.equal(saRes.singularName, 'serviceaccount');
    assert.ok(saRes.verbs.includes('create') && saRes.verbs.includes('list'));
    assert.ok(v1.json.resources.some((r: any) => r.name === 'namespaces/status'));
    const nsRes = v1.json.resources.find((r: any) => r.name === 'namespaces');
    assert.deepEqual(nsRes.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal((await s.client.delete('/api/v1/namespaces')).status, 405, 'namespaces have no deletecollection');
    const version = await s.client.get('/version');
    assert.equal(version.json.major, '1');
    assert.match(version.json.gitVersion, /^v1\.\d+\.\d+/);
  });

  test('aggregated discovery: /api and /apis in one answer each, the same resources as the per-version documents', async () => {
    for (const [group, version] of [['apidiscovery.k8s.io', 'v2'], ['apidiscovery.k8s.io', 'v2beta1'], [vocabulary.discoveryGroup, 'v2']]) {
      const accept = `application/json;g=${group};v=${version};as=APIGroupDiscoveryList,application/json`;
      for (const root of ['/api', '/apis']) {
        const r = await s.client.get(root, { Accept: accept });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.headers['content-type'], `application/json;g=${group};v=${version};as=APIGroupDiscoveryList`);
        assert.equal(r.json.kind, 'APIGroupDiscoveryList');
        assert.equal(r.json.apiVersion, `${group}/${version}`);
        const legacyGroups = root === '/api' ? [''] : (await s.client.get('/apis')).json.groups.map((g: any) => g.name);
        assert.deepEqual(r.json.items.map((i: any) => i.metadata.name ?? ''), legacyGroups);
        for (const item of r.json.items) {
          for (const v of item.versions) {
            assert.equal(v.freshness, 'Current');
            const gv = item.metadata.name ? `${item.metadata.name}/${v.version}` : v.version;
            const legacy = (await s.client.get(`${root}/${gv}`)).json.resources;
            // Flatten the aggregated entries back into the per-version form and compare.
            const flat = v.resources.flatMap((e: any) => [
              { name: e.resource, kind: e.responseKind.kind, verbs: e.verbs, namespaced: e.scope === 'Namespaced', shortNames: e.shortNames, categories: e.categories },
              ...(e.subresources ?? []).map((sub: any) => ({ name: `${e.resource}/${sub.subresource}`, kind: sub.responseKind.kind, verbs: sub.verbs, namespaced: e.scope === 'Namespaced', shortNames: undefined, categories: undefined })),
            ]);
            const pick = (x: any) => ({ name: x.name, kind: x.kind, verbs: x.verbs, namespaced: x.namespaced, shortNames: x.shortNames, categories: x.categories });
            const byName = (a: any, b: any) => a.name.localeCompare(b.name);
            assert.deepEqual(flat.map(pick).sort(byName), legacy.map(pick).sort(byName), gv);
          }
        }
      }
    }
    // A client that prefers plain JSON gets the plain documents.
    assert.equal((await s.client.get('/apis', { Accept: 'application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json.kind, 'APIGroupList');
    assert.equal((await s.client.get('/api', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v1;as=APIGroupDiscoveryList' })).status, 406);
  });

  test('health endpoints, verbose, exclude and single checks', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await s.client.get(p);
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
    }
    const v = await s.client.get('/readyz?verbose');
    assert.match(v.text, /^\[\+\]ping ok$/m);
    assert.match(v.text, /^\[\+\]log ok$/m);
    assert.match(v.text, /^\[\+\]memory ok$/m);
    assert.match(v.text, /^\[\+\]poststarthook\/reserved-namespaces ok$/m);
    assert.match(v.text, /readyz check passed\n$/);
    const ex = await s.client.get('/livez?verbose&exclude=ping&exclude=log');
    assert.match(ex.text, /^\[\+\]ping excluded: ok$/m);
    assert.match(ex.text, /^\[\+\]log excluded: ok$/m);
    assert.equal((await s.client.get('/livez/ping')).text, 'ok');
    assert.equal((await s.client.get('/readyz/nothing')).status, 404);
  });

  test('requests without credentials are anonymous under the default RBAC mode, and may not list namespaces', async () => {
    const anon = s.client.anonymous();
    try {
      const r = await anon.get('/api/v1/namespaces');
      assertStatus(r, 403, 'Forbidden');
      assert.match(r.json.message, /User "system:anonymous" cannot list resource "namespaces"/);
    } finally {
      anon.close();
    }
  });
});
