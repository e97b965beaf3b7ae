// PATCH in every form, server-side apply and field ownership, dry-run and
// field validation, over real HTTPS.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
const ns = 'patching';
const sas = `/api/v1/namespaces/${ns}/serviceaccounts`;
const cms = `/api/v1/namespaces/${ns}/configmaps`;

before(async () => {
  s = await startTestServer();
  await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
after(async () => { await s.close(); });

const patch = (path: string, type: string, body: unknown, query = '', headers: Record<string, string> = {}) =>
  s.client.send('PATCH', `${path}${query}`, { raw: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': `application/${type}`, ...headers } });

test('JSON patch: every operation, test failures are 422, malformed patches 400', async () => {
  await s.client.post(sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'jp', labels: { a: '1', b: '2' } }, secrets: [{ name: 's1' }] });
  const r = await patch(`${sas}/jp`, 'json-patch+json', [
    { op: 'add', path: '/metadata/labels/c', value: '3' },
    { op: 'remove', path: '/metadata/labels/a' },
    { op: 'replace', path: '/metadata/labels/b', value: 'two' },
    { op: 'copy', from: '/metadata/labels/b', path: '/metadata/labels/d' },
    { op: 'move', from: '/metadata/labels/c', path: '/metadata/labels/e' },
    { op: 'test', path: '/secrets/0/name', value: 's1' },
    { op: 'add', path: '/secrets/-', value: { name: 's2' } },
  ]);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.metadata.labels, { b: 'two', d: 'two', e: '3' });
  assert.deepEqual(r.json.secrets.map((x: any) => x.name), ['s1', 's2']);
  const failed = await patch(`${sas}/jp`, 'json-patch+json', [{ op: 'test', path: '/metadata/labels/b', value: 'nope' }]);
  assert.equal(failed.status, 422);
  assert.equal(failed.json.reason, 'Invalid');
  assert.equal((await patch(`${sas}/jp`, 'json-patch+json', '{"op":')).status, 400);
  assert.equal((await patch(`${sas}/jp`, 'json-patch+json', { op: 'add' })).status, 400);
});

test('merge patch: objects merge, null removes, lists are replaced', async () => {
  await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mp' }, data: { keep: 'k', drop: 'd' } });
  const r = await patch(`${cms}/mp`, 'merge-patch+json', { data: { drop: null, add: 'a' }, metadata: { labels: { x: 'y' } } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.data, { keep: 'k', add: 'a' });
  assert.deepEqual(r.json.metadata.labels, { x: 'y' });
});

test('strategic merge patch: keyed lists merge, directives work', async () => {
  await s.client.post(sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'smp', finalizers: ['example.com/a', 'example.com/b'] }, secrets: [{ name: 'one' }, { name: 'two' }] });
  let r = await patch(`${sas}/smp`, 'strategic-merge-patch+json', { secrets: [{ name: 'three' }] });
  assert.deepEqual(r.json.secrets.map((x: any) => x.name).sort(), ['one', 'three', 'two'], 'secrets merge by name');
  r = await patch(`${sas}/smp`, 'strategic-merge-patch+json', { secrets: [{ name: 'one', $patch: 'delete' }] });
  assert.deepEqual(r.json.secrets.map((x: any) => x.name).sort(), ['three', 'two']);
  r = await patch(`${sas}/smp`, 'strategic-merge-patch+json', { $setElementOrder: undefined, '$setElementOrder/secrets': [{ name: 'two' }, { name: 'three' }] });
  assert.deepEqual(r.json.secrets.map((x: any) => x.name), ['two', 'three']);
  r = await patch(`${sas}/smp`, 'strategic-merge-patch+json', { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } });
  assert.deepEqual(r.json.metadata.finalizers, ['example.com/b']);
  r = await patch(`${sas}/smp`, 'strategic-merge-patch+json', { secrets: [{ $patch: 'replace' }, { name: 'only' }] });
  assert.deepEqual(r.json.secrets.map((x: any) => x.name), ['only']);
  await patch(`${sas}/smp`, 'merge-patch+json', { metadata: { finalizers: null } });
});

test('a resourceVersion in a patch is a precondition; unknown patch types are 415', async () => {
  const c = await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pre' } });
  const ok = await patch(`${cms}/pre`, 'merge-patch+json', { metadata: { resourceVersion: c.json.metadata.resourceVersion }, data: { a: '1' } });
  assert.equal(ok.status, 200);
  const stale = await patch(`${cms}/pre`, 'merge-patch+json', { metadata: { resourceVersion: c.json.metadata.resourceVersion }, data: { a: '2' } });
  assert.equal(stale.status, 409);
  assert.equal(stale.json.reason, 'Conflict');
  const unknown = await patch(`${cms}/pre`, 'xml', '<x/>');
  assert.equal(unknown.status, 415);
  assert.equal(unknown.json.reason, 'UnsupportedMediaType');
  assert.equal((await patch(`${cms}/missing`, 'merge-patch+json', { data: {} })).status, 404);
});

test('concurrent patches all land (internal retries on conflicts)', async () => {
  await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'busy' } });
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(`${cms}/busy`, 'merge-patch+json', { metadata: { labels: { [`l${i}`]: 'x' } } })));
  assert.ok(results.every((r) => r.status === 200));
  const got = await s.client.get(`${cms}/busy`);
  assert.equal(Object.keys(got.json.metadata.labels).length, 20);
});

const apply = (name: string, manager: string | undefined, data: Record<string, string>, query = '') =>
  patch(`${cms}/${name}`, 'apply-patch+yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }, `?${manager ? `fieldManager=${manager}` : ''}${query}`);

test('server-side apply: create, conflicts, force, co-ownership, release', async () => {
  const noManager = await apply('ssa', undefined, { a: '1' });
  assert.equal(noManager.status, 422);
  const created = await apply('ssa', 'alice', { a: '1', shared: 's' });
  assert.equal(created.status, 201);
  assert.deepEqual(created.json.metadata.managedFields.map((m: any) => [m.manager, m.operation]), [['alice', 'Apply']]);
  assert.deepEqual(created.json.metadata.managedFields[0].fieldsV1, { 'f:data': { 'f:a': {}, 'f:shared': {} } });

  const conflict = await apply('ssa', 'bob', { a: '2', shared: 's' });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.json.reason, 'Conflict');
  assert.equal(conflict.json.details.causes.length, 1);
  assert.equal(conflict.json.details.causes[0].field, '.data.a');
  assert.match(conflict.json.details.causes[0].message, /alice/);

  const coOwned = await apply('ssa', 'bob', { shared: 's', b: 'mine' });
  assert.equal(coOwned.status, 200);
  const owners = (field: string, obj: any) => obj.metadata.managedFields.filter((m: any) => m.fieldsV1['f:data']?.[`f:${field}`]).map((m: any) => m.manager).sort();
  assert.deepEqual(owners('shared', coOwned.json), ['alice', 'bob']);

  const forced = await apply('ssa', 'bob', { a: '2', shared: 's', b: 'mine' }, '&force=true');
  assert.equal(forced.status, 200);
  assert.equal(forced.json.data.a, '2');
  assert.deepEqual(owners('a', forced.json), ['bob']);

  // alice stops applying `shared`: bob still owns it, so it stays.
  const released = await apply('ssa', 'alice', {});
  assert.equal(released.json.data.shared, 's');
  // bob stops too: no owner left, so it goes.
  const gone = await apply('ssa', 'bob', { a: '2', b: 'mine' });
  assert.equal(gone.json.data.shared, undefined);
  assert.deepEqual(gone.json.data, { a: '2', b: 'mine' });
});

test('apply refuses managedFields in the body; non-apply writes own what they change', async () => {
  const r = await patch(`${cms}/ssa`, 'apply-patch+yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', managedFields: [{ manager: 'x' }] } }, '?fieldManager=carol');
  assert.equal(r.status, 400);
  const upd = await patch(`${cms}/ssa`, 'merge-patch+json', { data: { a: '3' } }, '?fieldManager=dave');
  assert.ok(upd.json.metadata.managedFields.some((m: any) => m.manager === 'dave' && m.operation === 'Update' && m.fieldsV1['f:data']['f:a']));
  const ua = await patch(`${cms}/ssa`, 'merge-patch+json', { data: { c: '1' } }, '', { 'User-Agent': 'my-tool/1.2 (linux)' });
  assert.ok(ua.json.metadata.managedFields.some((m: any) => m.manager === 'my-tool'), 'default manager from the User-Agent');
  const keep = await patch(`${cms}/ssa`, 'merge-patch+json', { metadata: { managedFields: [] } });
  assert.ok(keep.json.metadata.managedFields.length > 0, 'an empty list does not reset');
  const reset = await patch(`${cms}/ssa`, 'merge-patch+json', { metadata: { managedFields: [{}] } });
  assert.equal(reset.json.metadata.managedFields, undefined, 'a list of one empty entry resets');
});

test('dryRun=All on every write verb stores nothing and answers as usual', async () => {
  await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', labels: { k: 'v' } }, data: { a: '1' } });
  const before = (await s.client.get(`${cms}/dry`)).json;
  const p = await patch(`${cms}/dry`, 'merge-patch+json', { data: { a: '2' } }, '?dryRun=All');
  assert.equal(p.status, 200);
  assert.equal(p.json.data.a, '2');
  const u = await s.client.put(`${cms}/dry?dryRun=All`, { ...before, data: { a: '3' } });
  assert.equal(u.status, 200);
  const a = await apply('dry', 'erin', { a: '4' }, '&dryRun=All&force=true');
  assert.equal(a.status, 200);
  const d = await s.client.delete(`${cms}/dry?dryRun=All`);
  assert.equal(d.status, 200);
  const dc = await s.client.delete(`${cms}?dryRun=All&labelSelector=k%3Dv`);
  assert.equal(dc.status, 200);
  const after = (await s.client.get(`${cms}/dry`)).json;
  assert.deepEqual(after, before);
  assert.equal((await patch(`${cms}/dry`, 'merge-patch+json', {}, '?dryRun=Partly')).status, 422);
});

test('fieldValidation on patches: Strict refuses unknown fields, Warn sends Warning headers', async () => {
  await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fv' } });
  const strict = await patch(`${cms}/fv`, 'merge-patch+json', { bogus: 1, other: 2 }, '?fieldValidation=Strict');
  assert.equal(strict.status, 400);
  assert.match(strict.json.message, /unknown field "bogus"/);
  assert.match(strict.json.message, /unknown field "other"/);
  const warn = await patch(`${cms}/fv`, 'merge-patch+json', { bogus: 1 });
  assert.equal(warn.status, 200);
  assert.equal(warn.headers.warning, '299 - "unknown field \\"bogus\\""');
  const strictApply = await patch(`${cms}/fv`, 'apply-patch+yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fv\nbogus: 1\n', '?fieldManager=f&fieldValidation=Strict');
  assert.equal(strictApply.status, 400);
});

test('duplicate fields in a JSON body: a warning by default, refused when Strict, ignored when Ignore', async () => {
  const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}';
  const headers = { 'Content-Type': 'application/json' };
  const strict = await s.client.send('POST', `${cms}?fieldValidation=Strict`, { raw: body, headers });
  assert.equal(strict.status, 400);
  assert.match(strict.json.message, /duplicate field "data.a"/);
  const warn = await s.client.send('POST', cms, { raw: body, headers });
  assert.equal(warn.status, 201);
  assert.equal(warn.headers.warning, '299 - "duplicate field \\"data.a\\""');
  assert.equal(warn.json.data.a, '2');
  const ignore = await s.client.send('POST', `${cms}?fieldValidation=Ignore`, { raw: body.replace('"dup"', '"dup2"'), headers });
  assert.equal(ignore.status, 201);
  assert.equal(ignore.headers.warning, undefined);
});
