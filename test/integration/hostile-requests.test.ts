// Hostile requests at the HTTP and option level, against a server on a real
// SQLite file: forged list parameters, malformed DeleteOptions, query
// booleans as real clients send them, watch timeouts past the timer range,
// CONNECT and protocol errors, huge headers, and writes racing on one
// object. Each answer is checked, then the server's health and a canary.

import { test, before, after, afterEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { assertStatus, Canary } from '../support/hostile.js';

let s: TestServer;
let canary: Canary;
const ns = 'hostile';
const cms = `/api/v1/namespaces/${ns}/configmaps`;

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  canary = await Canary.plant(s.client);
});
after(async () => { await s.close(); });
afterEach(async () => { await canary.assertServerIntact(); });

const token = (record: unknown) => Buffer.from(JSON.stringify(record)).toString('base64url');

async function makeConfigMaps(prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    assert.equal((await s.client.post(cms, { metadata: { name: `${prefix}-${i}`, labels: { set: prefix } } })).status, 201);
  }
}

describe('list parameters', () => {
  test('forged continue tokens answer 400', async () => {
    await makeConfigMaps('page', 3);
    const first = await s.client.get(`${cms}?limit=1&labelSelector=set%3Dpage`);
    const real = JSON.parse(Buffer.from(first.json.metadata.continue, 'base64url').toString());
    for (const forged of [
      token({ ...real, rv: real.rv + 1_000_000 }), // a revision the store never reached
      token({ ...real, rv: 1.5 }),
      token({ ...real, rv: '7' }),
      token({ ...real, rv: -1 }),
      token({ ...real, start: '/registry/secrets/' }),
      token({ ...real, v: 2 }),
      'not base64 at all!',
      token([1, 2, 3]),
    ]) {
      assertStatus(await s.client.get(`${cms}?limit=1&continue=${encodeURIComponent(forged)}`), 400, 'BadRequest');
    }
    assert.equal((await s.client.get(`${cms}?limit=1&continue=${first.json.metadata.continue}`)).status, 200);
  });

  test('limits beyond int64 are refused, huge ones within it are clamped', async () => {
    const rv = (await s.client.get(cms)).json.metadata.resourceVersion;
    assertStatus(await s.client.get(`${cms}?limit=100000000000000000000&resourceVersion=${rv}&resourceVersionMatch=Exact`), 400, 'BadRequest');
    assertStatus(await s.client.get(`${cms}?limit=1.5`), 400, 'BadRequest');
    const huge = await s.client.get(`${cms}?limit=9223372036854775807&resourceVersion=${rv}&resourceVersionMatch=Exact`);
    assert.equal(huge.status, 200, huge.text);
    assert.equal(huge.json.metadata.continue, undefined);
    assert.equal((await s.client.get(`${cms}?limit=9223372036854775807`)).status, 200);
  });

  test('resourceVersions are decimal digits only', async () => {
    for (const rv of ['1e3', '0x10', '%201', '-1', '1.0', '99999999999999999999']) {
      assertStatus(await s.client.get(`${cms}?resourceVersion=${rv}`), 400, 'BadRequest');
      assertStatus(await s.client.get(`${cms}/canary?resourceVersion=${rv}`), 400, 'BadRequest');
      assertStatus(await s.client.get(`${cms}?watch=1&resourceVersion=${rv}`), 400, 'BadRequest');
    }
    assertStatus(await s.client.get(`${cms}?watch=1&timeoutSeconds=soon`), 400, 'BadRequest');
  });
});

describe('DeleteOptions', () => {
  test('malformed bodies answer 400 and delete nothing', async () => {
    await makeConfigMaps('del', 1);
    const target = `${cms}/del-0`;
    for (const body of [
      '{"dryRun":"x"}', '{"preconditions":"garbage"}', '{"gracePeriodSeconds":"5"}', '{"orphanDependents":"yes"}',
      '{"kind":"Pod","apiVersion":"v1"}', '{"kind":7}', '[1]', '"x"', '{', '{"preconditions":{"uid":5}}',
    ]) {
      const r = await s.client.send('DELETE', target, { raw: body, headers: { 'Content-Type': 'application/json' } });
      assertStatus(r, 400, 'BadRequest');
      assert.equal((await s.client.get(target)).status, 200, `still there after ${body}`);
    }
    const bulk = await s.client.send('DELETE', `${cms}?labelSelector=set%3Ddel`, { raw: '{"dryRun":"x"}', headers: { 'Content-Type': 'application/json' } });
    assertStatus(bulk, 400, 'BadRequest');
    assert.equal((await s.client.get(target)).status, 200);
  });

  test('invalid values answer 422 Invalid DeleteOptions', async () => {
    const target = `${cms}/del-0`;
    for (const body of [{ dryRun: ['x'] }, { propagationPolicy: 'Sideways' }, { propagationPolicy: 'Orphan', orphanDependents: true }]) {
      const r = await s.client.send('DELETE', target, { body });
      assertStatus(r, 422, 'Invalid');
      assert.equal(r.json.details.kind, 'DeleteOptions');
    }
    assertStatus(await s.client.send('DELETE', `${target}?dryRun=Some`), 422, 'Invalid');
    assert.equal((await s.client.get(target)).status, 200);
  });

  test('valid options work: dry run keeps the object, a matching precondition deletes it', async () => {
    const target = `${cms}/del-0`;
    assert.equal((await s.client.send('DELETE', target, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } })).status, 200);
    const live = await s.client.get(target);
    assert.equal(live.status, 200);
    assertStatus(await s.client.send('DELETE', target, { body: { preconditions: { uid: 'not-the-uid' } } }), 409, 'Conflict');
    assert.equal((await s.client.send('DELETE', target, { body: { preconditions: { uid: live.json.metadata.uid } } })).status, 200);
    assertStatus(await s.client.get(target), 404, 'NotFound');
  });
});

describe('query booleans as upstream', () => {
  test('watch=True watches; watch=FALSE and watch=0 list', async () => {
    const watch = await s.client.watch(`${cms}?watch=True&labelSelector=set%3Dbool`);
    try {
      assert.equal(watch.status, 200);
      await makeConfigMaps('bool', 1);
      const [event] = await watch.waitFor(1);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.metadata.name, 'bool-0');
    } finally {
      watch.close();
    }
    for (const off of ['FALSE', 'false', '0']) {
      const list = await s.client.get(`${cms}?watch=${off}`);
      assert.equal(list.json.kind, 'ConfigMapList', `watch=${off} lists`);
    }
  });

  test('force=True forces an apply; pretty=yes indents', async () => {
    const apply = (query: string) => s.client.send('PATCH', `${cms}/canary-apply?fieldManager=other${query}`, {
      raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'canary-apply' }, data: { k: 'theirs' } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    assert.equal((await s.client.post(cms, { metadata: { name: 'canary-apply' }, data: { k: 'mine' } })).status, 201);
    assertStatus(await apply(''), 409, 'Conflict');
    assertStatus(await apply('&force=false'), 409, 'Conflict');
    const forced = await apply('&force=True');
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.data.k, 'theirs');
    assert.match((await s.client.get(`${cms}/canary-apply?pretty=yes`)).text, /^{\n  "kind"|^{\n  "apiVersion"/);
  });
});

test('PUT of a missing ConfigMap is 404 and creates nothing', async () => {
  assertStatus(await s.client.put(`${cms}/never`, { metadata: { name: 'never' }, data: { a: 'b' } }), 404, 'NotFound');
  assertStatus(await s.client.get(`${cms}/never`), 404, 'NotFound');
});

test('a watch asking for 3,000,000 seconds stays open', async () => {
  const watch = await s.client.watch(`${cms}?watch=1&timeoutSeconds=3000000&labelSelector=set%3Dlong`);
  try {
    assert.equal(watch.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(watch.ended, false, 'the stream did not close at once');
    await makeConfigMaps('long', 1);
    assert.equal((await watch.waitFor(1))[0].object.metadata.name, 'long-0');
  } finally {
    watch.close();
  }
});

describe('the HTTP connection', () => {
  test('CONNECT to a resource answers 405 with a Status', async () => {
    const r = await s.client.raw(`CONNECT ${cms}/canary HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(r.status, 405);
    assertStatus({ status: r.status, json: r.json }, 405, 'MethodNotAllowed');
  });

  test('protocol errors are Status objects, not plain text', async () => {
    const framing = await s.client.raw(`GET ${cms} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nzz`);
    assertStatus({ status: framing.status, json: framing.json }, 400, 'BadRequest');
    const garbage = await s.client.raw('NOT-HTTP\r\n\r\n');
    assertStatus({ status: garbage.status, json: garbage.json }, 400, 'BadRequest');
    const expect = await s.client.raw(`GET ${cms} HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n`);
    assert.equal(expect.status, 417);
    assert.equal(expect.json.kind, 'Status');
    assert.equal(expect.json.code, 417);
    const tooBig = await s.client.raw(`GET ${cms} HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(1_100_000)}\r\n\r\n`);
    assert.equal(tooBig.status, 431);
    assert.equal(tooBig.json.kind, 'Status');
  });

  test('a 100 KB label selector is read (headers up to 1 MiB, as upstream)', async () => {
    const values = Array.from({ length: 16000 }, (_, i) => `v${i}`).join(',');
    const r = await s.client.get(`${cms}?labelSelector=${encodeURIComponent(`set in (${values})`)}`);
    assert.ok(values.length > 100_000);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(r.json.kind, 'ConfigMapList');
  });
});

test('writes without a precondition racing on one object all succeed', async () => {
  assert.equal((await s.client.post(cms, { metadata: { name: 'race' }, data: {} })).status, 201);
  // Fewer than the administrator's in-flight pool admits at once (30 with the default limits): how many
  // arrive together depends on the Node line's scheduling, and those beyond the pool would get a 429.
  const n = 24;
  const patches = Array.from({ length: n }, (_, i) => {
    switch (i % 4) {
      case 0: return s.client.send('PATCH', `${cms}/race`, { raw: JSON.stringify({ data: { [`m${i}`]: 'v' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
      case 1: return s.client.send('PATCH', `${cms}/race`, { raw: JSON.stringify({ data: { [`s${i}`]: 'v' } }), headers: { 'Content-Type': 'application/strategic-merge-patch+json' } });
      case 2: return s.client.send('PATCH', `${cms}/race`, { raw: JSON.stringify([{ op: 'add', path: `/data/j${i}`, value: 'v' }]), headers: { 'Content-Type': 'application/json-patch+json' } });
      default: return s.client.send('PATCH', `${cms}/race?fieldManager=m${i}`, {
        raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'race' }, data: { [`a${i}`]: 'v' } }),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      });
    }
  });
  const answers = await Promise.all(patches);
  assert.deepEqual(answers.map((r) => r.status), Array(n).fill(200), answers.find((r) => r.status !== 200)?.text);
  const final = await s.client.get(`${cms}/race`);
  assert.equal(Object.keys(final.json.data).length, n, 'every write landed');
});
