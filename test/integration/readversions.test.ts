// resourceVersion and resourceVersionMatch on get and list, per the spec's tables.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
const base = '/api/v1/namespaces/rv/configmaps';
let firstRv = 0;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rv' } });
  for (let i = 0; i < 5; i++) {
    const r = await s.client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } });
    if (i === 0) firstRv = Number(r.json.metadata.resourceVersion);
  }
});
after(async () => { await s.close(); });

test('list with limit and an old resourceVersion reads exactly that version', async () => {
  const r = await s.client.get(`${base}?limit=10&resourceVersion=${firstRv}`);
  assert.equal(r.status, 200);
  assert.equal(r.json.metadata.resourceVersion, String(firstRv));
  assert.deepEqual(r.json.items.map((i: any) => i.metadata.name), ['c0']);
  const exact = await s.client.get(`${base}?resourceVersion=${firstRv}&resourceVersionMatch=Exact`);
  assert.equal(exact.json.items.length, 1);
  const notOlder = await s.client.get(`${base}?resourceVersion=${firstRv}&resourceVersionMatch=NotOlderThan`);
  assert.equal(notOlder.json.items.length, 5);
  const any = await s.client.get(`${base}?resourceVersion=0`);
  assert.equal(any.json.items.length, 5);
});

test('pages keep the first page\'s snapshot', async () => {
  const p1 = await s.client.get(`${base}?limit=2`);
  assert.equal(p1.json.items.length, 2);
  assert.equal(p1.json.metadata.remainingItemCount, 3);
  await s.client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c9' } });
  const p2 = await s.client.get(`${base}?limit=2&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
  const p3 = await s.client.get(`${base}?limit=2&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
  assert.equal(p2.json.metadata.resourceVersion, p1.json.metadata.resourceVersion);
  assert.deepEqual(p3.json.items.map((i: any) => i.metadata.name), ['c4']);
  assert.equal(p3.json.metadata.continue, undefined);
  assert.equal(p3.json.metadata.remainingItemCount, undefined);
  await s.client.delete(`${base}/c9`);
});

test('invalid combinations', async () => {
  const p1 = await s.client.get(`${base}?limit=2`);
  const tok = encodeURIComponent(p1.json.metadata.continue);
  const withRv = await s.client.get(`${base}?limit=2&continue=${tok}&resourceVersion=${firstRv}`);
  assert.equal(withRv.status, 400);
  assert.equal(withRv.json.reason, 'BadRequest');
  const withZero = await s.client.get(`${base}?limit=2&continue=${tok}&resourceVersion=0`);
  assert.equal(withZero.status, 200, 'resourceVersion=0 with a continue token is read as the token');
  for (const q of ['resourceVersionMatch=Exact', 'resourceVersionMatch=NotOlderThan', `resourceVersion=${firstRv}&resourceVersionMatch=Sometimes`, 'resourceVersion=0&resourceVersionMatch=Exact']) {
    const r = await s.client.get(`${base}?${q}`);
    assert.equal(r.status, 422, q);
    assert.equal(r.json.reason, 'Invalid', q);
  }
  const garbled = await s.client.get(`${base}?limit=2&continue=notatoken`);
  assert.equal(garbled.status, 400);
  assert.equal((await s.client.get(`${base}?resourceVersion=abc`)).status, 400);
});

test('a future resourceVersion waits, then answers 504 with Retry-After', async () => {
  // Both wait out the server's fixed 3 s: side by side, not one after the other.
  const [r, l] = await Promise.all([
    s.client.get(`${base}/c0?resourceVersion=999999`),
    s.client.get(`${base}?resourceVersion=999999&resourceVersionMatch=NotOlderThan`),
  ]);
  assert.equal(r.status, 504);
  assert.equal(r.json.reason, 'Timeout');
  assert.match(r.json.message, /Too large resource version/);
  assert.equal(r.headers['retry-after'], '1');
  assert.equal(l.status, 504);
});
