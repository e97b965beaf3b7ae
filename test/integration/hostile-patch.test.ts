// Hostile input to the patch and field-ownership algorithms over real HTTPS:
// keys naming Object.prototype members, patches that would grow without end,
// nesting at and past the limit, and smuggled managedFields entries. After
// each class the server must be ready, a canary object unchanged, nothing
// polluted, and an ordinary write must still work as before.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import type { Response } from '../support/client.js';

let s: TestServer;
const ns = 'hostile';
const base = (resource: string) => (resource === 'namespaces' ? '/api/v1/namespaces' : `/api/v1/namespaces/${ns}/${resource}`);
const cms = base('configmaps');
const specialKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
const canaries: Array<{ path: string; body: any }> = [];
let written = 0;

const mediaTypes: Record<string, string> = {
  merge: 'application/merge-patch+json', strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json', apply: 'application/apply-patch+yaml',
};
/** Sends a patch as raw text, so that keys such as `__proto__` reach the server as written. */
const patch = (path: string, type: string, body: string, query = '') =>
  s.client.send('PATCH', `${path}${query}`, { raw: body, headers: { 'Content-Type': mediaTypes[type] } });
const sendRaw = (method: string, path: string, body: string) => s.client.send(method, path, { raw: body, headers: { 'Content-Type': 'application/json' } });
const nested = (levels: number, leaf = '{}', key = 'f:a') => `${`{"${key}":`.repeat(levels - 1)}${leaf}${'}'.repeat(levels - 1)}`;
const own = (o: object | undefined, k: string) => o !== undefined && Object.prototype.hasOwnProperty.call(o, k);

function status(r: Response, code: number, reason?: string, message?: string | RegExp): void {
  assert.equal(r.status, code, r.text.slice(0, 500));
  if (reason !== undefined) assert.equal(r.json.reason, reason);
  if (typeof message === 'string') assert.equal(r.json.message, message);
  else if (message) assert.match(r.json.message, message);
}

before(async () => {
  // The long-list test's object (40,000 list entries and their managed fields)
  // is past etcd's 1.5 MiB: a larger stored-object limit lets it measure the patch itself.
  s = await startTestServer({ maxStoredObjectBytes: 8 * 1024 * 1024 });
  status(await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
  const cm = await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'canary', labels: { app: 'canary' } }, data: { keep: 'me' } });
  const secret = await s.client.post(base('secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'canary' }, data: { k: 'dg==' } });
  for (const r of [cm, secret]) {
    status(r, 201);
    canaries.push({ path: `${base(r.json.kind === 'Secret' ? 'secrets' : 'configmaps')}/canary`, body: r.json });
  }
});
after(async () => { await s.close(); });

/** The server is ready, the canaries unchanged, Object.prototype clean, and ordinary writes behave. */
async function assertUnharmed(): Promise<void> {
  status(await s.client.get('/readyz'), 200);
  for (const c of canaries) assert.deepEqual((await s.client.get(c.path)).json, c.body);
  for (const k of ['ref', 'polluted', 'x', 'a']) assert.ok(!own(Object.prototype, k), `Object.prototype.${k}`);
  assert.equal(({}).constructor, Object);
  const name = `ordinary-${written++}`;
  const created = await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
  status(created, 201);
  assert.deepEqual(created.json.data, { a: '1' });
  assert.deepEqual(created.json.metadata.managedFields.map((e: any) => e.fieldsV1), [{ 'f:data': { '.': {}, 'f:a': {} } }]);
  const strict = await s.client.send('POST', `${cms}?fieldValidation=Strict`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-strict` }, bogus: 1 } });
  status(strict, 400, 'BadRequest', 'strict decoding error: unknown field "bogus"');
  status(await patch(`${cms}/${name}`, 'merge', '{"data":{"b":"2"}}'), 200);
}

// Where each kind keeps user keys: [resource, kind, path to the map, a valid value, extra body].
const targets: Array<[string, string, string[], string, string]> = [
  ['configmaps', 'ConfigMap', ['binaryData'], 'eA==', ''],
  ['configmaps', 'ConfigMap', ['metadata', 'annotations'], 'v', ''],
  ['secrets', 'Secret', ['data'], 'eA==', ''],
  ['serviceaccounts', 'ServiceAccount', ['metadata', 'labels'], 'v', ''],
  ['namespaces', 'Namespace', ['metadata', 'labels'], 'v', ''],
  ['events', 'Event', ['metadata', 'labels'], 'v', `,"involvedObject":{"kind":"Pod","name":"p","namespace":"${ns}"}`],
];

test('keys naming Object.prototype members are ordinary keys in every patch type and kind', async () => {
  let n = 0;
  for (const [resource, kind, path, value, extra] of targets) {
    for (const key of specialKeys) {
      for (const type of ['merge', 'strategic', 'json', 'apply']) {
        const name = `special-${n++}`;
        const meta = `"name":"${name}"${resource === 'namespaces' ? '' : `,"namespace":"${ns}"`}`;
        status(await sendRaw('POST', base(resource), `{"apiVersion":"v1","kind":"${kind}","metadata":{${meta}}${extra}}`), 201);
        const map = `{"${key}":"${value}"}`;
        const inMeta = path[0] === 'metadata';
        const body = inMeta ? `{"metadata":{"${path[1]}":${map}}}` : `{"${path[0]}":${map}}`;
        let r: Response;
        if (type === 'json') r = await patch(`${base(resource)}/${name}`, type, `[{"op":"add","path":"/${path.join('/')}","value":${map}}]`);
        else if (type === 'apply') {
          const config = inMeta ? `{"apiVersion":"v1","kind":"${kind}","metadata":{${meta},"${path[1]}":${map}}${extra}}`
            : `{"apiVersion":"v1","kind":"${kind}","metadata":{${meta}},"${path[0]}":${map}${extra}}`;
          r = await patch(`${base(resource)}/${name}`, type, config, '?fieldManager=applier');
        } else r = await patch(`${base(resource)}/${name}`, type, body);
        // `__proto__` is no valid label key (it starts with `_`), as upstream: 422. As a data key it is fine.
        if (key === '__proto__' && inMeta) {
          status(r, 422, 'Invalid');
          continue;
        }
        status(r, 200);
        const got = path.reduce((o: any, p) => o?.[p], r.json);
        {
          assert.equal(own(got, key) ? got[key] : undefined, value, `${kind} ${path.join('.')}.${key} by ${type}`);
          const stored = path.reduce((o: any, p) => o?.[p], (await s.client.get(`${base(resource)}/${name}`)).json);
          assert.equal(own(stored, key) ? stored[key] : undefined, value);
          const owner = r.json.metadata.managedFields.find((e: any) => (type === 'apply' ? e.manager === 'applier' : e.operation === 'Update' && e.fieldsV1?.[`f:${path[0]}`]));
          const owned = path.reduce((o: any, p) => o?.[`f:${p}`], owner?.fieldsV1);
          assert.ok(own(owned, `f:${key}`), `${type} owns ${path.join('.')}.${key}`);
        }
      }
    }
  }
  await assertUnharmed();
});

test('__proto__ in metadata and data cannot reach Object.prototype through any patch type', async () => {
  status(await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proto' }, data: { a: '1' } }), 201);
  const attempts: Array<[string, string, number]> = [
    ['merge', '{"metadata":{"__proto__":{"ref":"x"}},"data":{"__proto__":"yes"}}', 200],
    // An object where the schema wants a string is refused when decoded, whatever the key.
    ['merge', '{"metadata":{"labels":{"__proto__":{"ref":"x"}}}}', 400],
    // A `__proto__` label is invalid (422), as upstream; so is a key in both data and binaryData.
    ['strategic', '{"metadata":{"__proto__":{"ref":"x"},"labels":{"__proto__":"x"}},"binaryData":{"__proto__":"eA=="}}', 422],
    // labels is a map, where `$retainKeys` is no directive but a key whose list value is no string: 400.
    ['strategic', '{"metadata":{"__proto__":{"$patch":"replace","ref":"x"},"labels":{"$retainKeys":["__proto__"],"__proto__":"x"}}}', 400],
    ['json', '[{"op":"add","path":"/metadata/__proto__","value":{"ref":"x"}},{"op":"add","path":"/metadata/__proto__/polluted","value":1},{"op":"copy","from":"/metadata/__proto__","path":"/data/__proto__"},{"op":"remove","path":"/data/__proto__"}]', 200],
    ['apply', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto","__proto__":{"ref":"x"},"labels":{"__proto__":"x"}},"data":{"__proto__":"x"}}', 422],
    ['apply', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto","__proto__":{"ref":"x"}},"binaryData":{"__proto__":"eA=="}}', 200],
  ];
  for (const [type, body, code] of attempts) status(await patch(`${cms}/proto`, type, body, type === 'apply' ? '?fieldManager=applier' : ''), code);
  // Paths through an inherited member lead nowhere.
  const through = await patch(`${cms}/proto`, 'json', '[{"op":"add","path":"/metadata/__proto__/ref","value":"x"}]');
  status(through, 422, 'Invalid', 'the server rejected our request due to an error in our request');
  assert.equal(through.json.details.causes[0].message, 'add operation does not apply: doc is missing path: "/metadata/__proto__/ref": missing value');
  const removeInherited = await patch(`${cms}/proto`, 'json', '[{"op":"remove","path":"/metadata/constructor"}]');
  status(removeInherited, 422, 'Invalid');
  assert.equal(removeInherited.json.details.causes[0].message, "error in remove for path: '/metadata/constructor': Unable to remove nonexistent key: constructor: missing value");
  assert.deepEqual((await s.client.get(`${cms}/proto`)).json.data, { a: '1' });
  await assertUnharmed();
});

test('server-side apply: a special key another manager owns is kept under force, conflicts only when changed', async () => {
  const apply = (manager: string, binaryData: string, query = '') =>
    patch(`${cms}/owned`, 'apply', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned"},"binaryData":${binaryData}}`, `?fieldManager=${manager}${query}`);
  status(await apply('alice', '{"constructor":"eA==","hasOwnProperty":"eQ=="}'), 201);
  // bob applies other keys: no conflict without force, and nothing of alice's goes with force.
  status(await apply('bob', '{"toString":"eg=="}'), 200);
  const forced = await apply('bob', '{"toString":"eg==","valueOf":"eg=="}', '&force=true');
  status(forced, 200);
  assert.deepEqual(forced.json.binaryData, { constructor: 'eA==', hasOwnProperty: 'eQ==', toString: 'eg==', valueOf: 'eg==' });
  // Changing alice's key conflicts, named as upstream names it; force takes it over.
  const conflict = await apply('bob', '{"toString":"eg==","valueOf":"eg==","constructor":"eg=="}');
  status(conflict, 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "alice": .binaryData.constructor');
  assert.deepEqual(conflict.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.binaryData.constructor' }]);
  const taken = await apply('bob', '{"toString":"eg==","valueOf":"eg==","constructor":"eg=="}', '&force=true');
  status(taken, 200);
  const alice = taken.json.metadata.managedFields.find((e: any) => e.manager === 'alice');
  assert.deepEqual(alice.fieldsV1, { 'f:binaryData': { 'f:hasOwnProperty': {} } });
  // alice stops applying hasOwnProperty: nobody owns it, so it goes; bob's keys stay.
  const released = await apply('alice', '{}');
  assert.deepEqual(released.json.binaryData, { constructor: 'eg==', toString: 'eg==', valueOf: 'eg==' });
  await assertUnharmed();
});

test('a JSON patch may copy at most the body limit: doubling copies are a 422', async () => {
  status(await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'grow' }, data: { a: '1' } }), 201);
  const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: { v: 'x' } }, { op: 'add', path: '/spam', value: ['x'.repeat(50)] }];
  for (let i = 0; i < 27; i++) ops.push({ op: 'copy', from: '/spam', path: '/spam/-' });
  const r = await patch(`${cms}/grow`, 'json', JSON.stringify(ops));
  status(r, 422, 'Invalid', 'the server rejected our request due to an error in our request');
  assert.deepEqual(r.json.details.causes.map((c: any) => c.reason), ['UnexpectedServerResponse']);
  assert.match(r.json.details.causes[0].message, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  // A copy that deepens the document instead is refused by depth.
  const deeper: unknown[] = [{ op: 'add', path: '/spam', value: {} }, { op: 'add', path: '/seed', value: {} }];
  for (let i = 0, path = '/spam'; i < 600; i++, path += '/b') deeper.push({ op: 'copy', from: '/seed', path: `${path}/b` });
  status(await patch(`${cms}/grow`, 'json', JSON.stringify(deeper)), 400, 'BadRequest', 'the patched object is nested too deeply: exceeded max depth of 500');
  // Ten thousand moves of a large value end where they began.
  const big = 'y'.repeat(200000);
  status(await patch(`${cms}/grow`, 'merge', JSON.stringify({ data: { a: big } })), 200);
  const moves = Array.from({ length: 10000 }, (_, i) => (i % 2 === 0 ? { op: 'move', from: '/data/a', path: '/data/b' } : { op: 'move', from: '/data/b', path: '/data/a' }));
  const moved = await patch(`${cms}/grow`, 'json', JSON.stringify(moves));
  status(moved, 200);
  assert.deepEqual(moved.json.data, { a: big });
  await assertUnharmed();
});

test('strategic merge of long lists: merged, deleted from and ordered in one pass', async () => {
  const n = 20000;
  const names = Array.from({ length: n }, (_, i) => `s${i}`);
  status(await s.client.post(base('serviceaccounts'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'long' }, secrets: names.map((name) => ({ name })) }), 201);
  const sa = `${base('serviceaccounts')}/long`;
  const merged = await patch(sa, 'strategic', JSON.stringify({ secrets: names.map((name) => ({ name: `${name}-new` })) }));
  status(merged, 200);
  assert.equal(merged.json.secrets.length, 2 * n);
  const reordered = await patch(sa, 'strategic', JSON.stringify({
    secrets: names.map((name) => ({ name: `${name}-new`, $patch: 'delete' })),
    '$setElementOrder/secrets': [...names].reverse().map((name) => ({ name })),
  }));
  status(reordered, 200);
  assert.deepEqual(reordered.json.secrets.map((x: any) => x.name), [...names].reverse());
  const finalizers = names.map((x) => `example.com/${x}`);
  status(await patch(sa, 'strategic', JSON.stringify({ metadata: { finalizers } })), 200);
  const cleared = await patch(sa, 'strategic', JSON.stringify({ metadata: { '$deleteFromPrimitiveList/finalizers': finalizers } }));
  status(cleared, 200);
  assert.deepEqual(cleared.json.metadata.finalizers ?? [], []);
  await assertUnharmed();
});

test('nesting past the limit is a 400 in every patch type and write; at the limit everything works', async () => {
  const tooDeep = 'the object provided is nested too deeply: exceeded max depth of 500';
  status(await s.client.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: { a: '1' } }), 201);
  const path = `${cms}/deep`;
  // Far too deep: fieldValidation=Ignore takes the body straight to the patch.
  for (const type of ['merge', 'strategic']) {
    status(await patch(path, type, `{"data":${nested(100000, '{}', 'a')}}`, '?fieldValidation=Ignore'), 400, 'BadRequest', tooDeep);
    status(await patch(path, type, `{"data":${nested(2000, '{}', 'a')}}`), 400, 'BadRequest', tooDeep);
  }
  status(await patch(path, 'json', `[{"op":"add","path":"/data/x","value":${nested(100000, '{}', 'a')}}]`, '?fieldValidation=Ignore'), 400, 'BadRequest', tooDeep);
  // managedFields[0].fieldsV1 nests: root 1, metadata 2, managedFields 3, entry 4, fieldsV1 5.
  const entries = (levels: number) => `[{"manager":"deep","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${nested(levels)}}]`;
  const object = (name: string, levels: number) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","managedFields":${entries(levels)}},"data":{"a":"1"}}`;
  status(await sendRaw('POST', `${cms}?fieldValidation=Ignore`, object('deep-create', 3000)), 400, 'BadRequest', tooDeep);
  status(await sendRaw('PUT', `${path}?fieldValidation=Ignore`, object('deep', 1000)), 400, 'BadRequest', tooDeep);
  for (const type of ['merge', 'strategic']) status(await patch(path, type, `{"metadata":{"managedFields":${entries(3000)}}}`, '?fieldValidation=Ignore'), 400, 'BadRequest', tooDeep);
  // A JSON patch within the limit whose result is not: a field set copied into itself.
  const mf = '/metadata/managedFields/0/fieldsV1';
  status(await patch(path, 'json', `[{"op":"add","path":"/metadata/managedFields","value":${entries(300)}},{"op":"copy","from":"${mf}","path":"${mf}${'/f:a'.repeat(299)}/f:b"}]`),
    400, 'BadRequest', 'the patched object is nested too deeply: exceeded max depth of 500');
  status(await sendRaw('POST', cms, object('deep-501', 497)), 400, 'BadRequest', tooDeep);
  await assertUnharmed();

  // Exactly at the limit: created, then changed by every patch type and apply, and replaced as read.
  const created = await sendRaw('POST', cms, object('deep-500', 496));
  status(created, 201);
  const deepOwned = (r: Response) => {
    let levels = 0;
    for (let v = r.json.metadata.managedFields.find((e: any) => e.manager === 'deep')?.fieldsV1; v && Object.keys(v).length; v = v['f:a']) levels++;
    return levels + 1;
  };
  assert.equal(deepOwned(created), 496);
  const at = `${cms}/deep-500`;
  for (const [type, body, query] of [
    ['merge', '{"data":{"b":"1"}}', ''], ['strategic', '{"data":{"c":"1"}}', ''],
    ['json', '[{"op":"add","path":"/data/d","value":"1"}]', ''],
    ['apply', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep-500"},"data":{"e":"1"}}', '?fieldManager=applier'],
  ]) {
    const r = await patch(at, type, body, query);
    status(r, 200);
    assert.equal(deepOwned(r), 496, type);
  }
  const read = (await s.client.get(at)).json;
  const replaced = await sendRaw('PUT', at, JSON.stringify({ ...read, data: { ...read.data, f: '1' } }));
  status(replaced, 200);
  assert.deepEqual(replaced.json.data, { a: '1', b: '1', c: '1', d: '1', e: '1', f: '1' });
  assert.equal(deepOwned(replaced), 496);
  await assertUnharmed();
});

test('managedFields entries are validated as upstream validates them (422)', async () => {
  const entry = (over: Record<string, unknown>) => ({ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:z': {} } }, ...over });
  const cm = (name: string, managedFields: unknown[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, managedFields }, data: { a: '1' } });
  const long = await s.client.post(cms, cm('long-manager', [entry({ manager: 'x'.repeat(5000) })]));
  status(long, 422, 'Invalid', 'ConfigMap "long-manager" is invalid: metadata.managedFields[0].manager: Too long: may not be more than 128 bytes');
  assert.deepEqual(long.json.details, {
    name: 'long-manager', kind: 'ConfigMap',
    causes: [{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 128 bytes', field: 'metadata.managedFields[0].manager' }],
  });
  const several = await s.client.post(cms, cm('several', [entry({ manager: 'a\u0007b' }), entry({ manager: 'n', subresource: 's'.repeat(300) })]));
  status(several, 422, 'Invalid');
  assert.deepEqual(several.json.details.causes.map((c: any) => [c.field, c.message]), [
    ['metadata.managedFields[0].manager', 'Invalid value: "a\\u0007b": invalid character U+0007 (at position 1)'],
    ['metadata.managedFields[1].subresource', 'Too long: may not be more than 256 bytes'],
  ]);
  // The same through an update and each patch type.
  status(await s.client.post(cms, cm('valid', [])), 201);
  const smuggled = JSON.stringify([entry({ manager: 'x'.repeat(200) })]);
  const read = (await s.client.get(`${cms}/valid`)).json;
  status(await s.client.put(`${cms}/valid`, { ...read, metadata: { ...read.metadata, managedFields: JSON.parse(smuggled) } }), 422, 'Invalid',
    'ConfigMap "valid" is invalid: metadata.managedFields[0].manager: Too long: may not be more than 128 bytes');
  for (const [type, body] of [
    ['merge', `{"metadata":{"managedFields":${smuggled}}}`], ['strategic', `{"metadata":{"managedFields":${smuggled}}}`],
    ['json', `[{"op":"replace","path":"/metadata/managedFields","value":${smuggled}}]`],
  ]) status(await patch(`${cms}/valid`, type, body), 422, 'Invalid', 'ConfigMap "valid" is invalid: metadata.managedFields[0].manager: Too long: may not be more than 128 bytes');
  // Entries the field manager cannot read (an unknown operation, an empty apiVersion) are replaced, as upstream.
  const unreadable = await s.client.post(`${cms}?fieldManager=writer`, cm('unreadable', [entry({ operation: 'Delete' }), entry({ manager: 'q', apiVersion: '' })]));
  status(unreadable, 201);
  assert.deepEqual(unreadable.json.metadata.managedFields.map((e: any) => [e.manager, e.operation]), [['writer', 'Update']]);
  await assertUnharmed();
});

test('a patch or a PUT that removes or changes the name is a 400 naming both names, as upstream', async () => {
  status(await s.client.post(cms, { metadata: { name: 'named' }, data: { a: '1' } }), 201);
  const mismatch = (got: string) => `the name of the object (${got}) does not match the name on the URL (named)`;
  status(await patch(`${cms}/named`, 'merge', '{"metadata":{"name":null}}'), 400, 'BadRequest', mismatch(''));
  status(await patch(`${cms}/named`, 'strategic', '{"metadata":{"name":"other"}}'), 400, 'BadRequest', mismatch('other'));
  status(await patch(`${cms}/named`, 'json', '[{"op":"remove","path":"/metadata/name"}]'), 400, 'BadRequest', mismatch(''));
  status(await sendRaw('PUT', `${cms}/named`, '{"metadata":{},"data":{"a":"2"}}'), 400, 'BadRequest', mismatch(''));
  assert.equal((await s.client.get(`${cms}/named`)).json.data.a, '1', 'nothing changed');
  assert.equal((await s.client.get(`${cms}/other`)).status, 404);
});
