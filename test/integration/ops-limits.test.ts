// In-flight limits, request timeouts and body limits as a client sees them:
// a flood past --max-mutating-requests-inflight is answered 429 with
// Retry-After while health checks and system:masters (never counted) still get through; a
// request past --request-timeout gets 504 while a watch lives on; a body past
// 3 MiB gets 413. Requests are held by a hanging webhook, never by sleeping.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, tokenFile } from '../support/server.js';
import { heldConfigMap, startHolder, type Holder } from '../support/hold.js';
import { eventually } from '../support/eventually.js';
import type { TestClient } from '../support/client.js';

let s: TestServer;
let holder: Holder;
let flooder: TestClient;
const bearer = { Authorization: 'Bearer flood-token' };
const ns = 'flood';

before(async () => {
  const tokens = tokenFile('flood-token,flooder,1001\n');
  s = await startTestServer({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, tokenAuthFile: tokens, authorizationMode: ['AlwaysAllow'] });
  holder = await startHolder(s.client, ns);
  flooder = s.client.anonymous();
});
after(async () => {
  flooder.close();
  await holder.close();
  await s.close();
});

test('a request\'s own timeout parameter shortens the deadline; one that does not parse is a 400', async () => {
  holder.hold();
  const held = await s.client.post(`/api/v1/namespaces/${ns}/configmaps?timeout=1s`, heldConfigMap());
  assert.equal(held.status, 504, held.text);
  assert.equal(held.json.reason, 'Timeout');
  const bad = await s.client.get(`/api/v1/namespaces/${ns}/configmaps?timeout=soon`);
  assert.equal(bad.status, 400);
  assert.equal(bad.json.message, 'invalid timeout specified in the request URL - time: invalid duration "soon"');
});

test('a flood past the mutating limit gets 429 with Retry-After; health checks and system:masters still answer', async () => {
  holder.hold();
  const before = holder.calls();
  const held = flooder.send('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: heldConfigMap(), headers: bearer });
  await eventually('the first create is held', async () => holder.calls() > before || undefined);

  const refused = await flooder.send('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { generateName: 'more-' } }, headers: bearer });
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.headers['retry-after'], '1');
  assert.equal(refused.json.kind, 'Status');
  assert.equal(refused.json.reason, 'TooManyRequests');
  assert.equal(refused.json.details.retryAfterSeconds, 1);

  // Reads have a pool of their own; probes and the administrator are never refused.
  assert.equal((await flooder.send('GET', `/api/v1/namespaces/${ns}/configmaps`, { headers: bearer })).status, 200);
  for (const path of ['/readyz', '/livez', '/healthz', '/readyz?verbose']) {
    assert.equal((await flooder.send('GET', path, { headers: bearer })).status, 200, path);
  }
  const admin = await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { generateName: 'admin-' } });
  assert.equal(admin.status, 201, admin.text);

  // The gauge shows the held request.
  const metrics = await s.client.get('/metrics');
  assert.match(metrics.text, /^apiserver_current_inflight_requests\{request_kind="mutating"\} 1$/m);

  // The held create fails when the webhook goes away (failurePolicy Fail): the pool is free again.
  await holder.close();
  assert.notEqual((await held).status, 201);
  const after = await flooder.send('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { generateName: 'after-' } }, headers: bearer });
  assert.equal(after.status, 201, after.text);
});

test('system:masters is never limited: a flood as masters and as another user at once, only the other user sees 429', async () => {
  const t = await startTestServer({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, tokenAuthFile: tokenFile('flood-token,flooder,1001\n'), authorizationMode: ['AlwaysAllow'] });
  const hold = await startHolder(t.client, 'masters');
  const other = t.client.anonymous();
  try {
    hold.hold();
    const before = hold.calls();
    const otherHeld = other.send('POST', '/api/v1/namespaces/masters/configmaps', { body: heldConfigMap(), headers: bearer });
    await eventually('the other user\'s first create is held', async () => hold.calls() > before || undefined);
    // Both flood at once; masters with more held creates than any pool of the old design allowed (10).
    const masters = Array.from({ length: 12 }, () => t.client.post('/api/v1/namespaces/masters/configmaps', heldConfigMap()));
    const others = await Promise.all(Array.from({ length: 3 }, () => other.send('POST', '/api/v1/namespaces/masters/configmaps', { body: heldConfigMap(), headers: bearer })));
    for (const r of others) assert.equal(r.status, 429, r.text);
    await eventually('all 12 masters creates are in flight', async () => hold.calls() - before >= 13 || undefined);
    assert.equal((await other.send('POST', '/api/v1/namespaces/masters/configmaps', { body: { metadata: { generateName: 'more-' } }, headers: bearer })).status, 429);
    // The administrator still writes and reads while 12 of its own requests are in flight.
    const more = await t.client.post('/api/v1/namespaces/masters/configmaps', { metadata: { generateName: 'admin-' } });
    assert.equal(more.status, 201, more.text);
    assert.equal((await t.client.get('/api/v1/namespaces/masters/configmaps')).status, 200);
    // Masters are not counted in the gauge: only the other user's held create is.
    assert.match((await t.client.get('/metrics')).text, /^apiserver_current_inflight_requests\{request_kind="mutating"\} 1$/m);

    await hold.close();
    for (const r of await Promise.all(masters)) assert.notEqual(r.status, 429, r.text);
    assert.notEqual((await otherHeld).status, 429);
  } finally {
    other.close();
    await hold.close();
    await t.close();
  }
});

test('a request past --request-timeout gets 504 Timeout; a watch opened before it goes on', async () => {
  const t = await startTestServer({ requestTimeoutMs: 1500 });
  const slow = await startHolder(t.client, 'slow');
  try {
    await timeoutCase(t, slow);
  } finally {
    await slow.close();
    await t.close();
  }
});

async function timeoutCase(s: TestServer, holder: Holder): Promise<void> {
  const ns = 'slow';
  holder.hold();
  const watch = await s.client.watch(`/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dlate`);
  assert.equal(watch.status, 200);
  const r = await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, heldConfigMap());
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Timeout');
  assert.equal(r.json.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded');
  assert.match(String(r.headers['audit-id']), /^[0-9a-f-]{36}$/);
  // The watch outlived the timeout: it still gets events.
  assert.equal(watch.ended, false);
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'late' } })).status, 201);
  const [event] = await watch.waitFor(1);
  assert.equal(event.type, 'ADDED');
  assert.equal(event.object.metadata.name, 'late');
  watch.close();
}

test('a body over 3 MiB is answered 413 RequestEntityTooLarge', async () => {
  const big = { metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024 + 1) } };
  const r = await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, big);
  assert.equal(r.status, 413, r.text);
  assert.equal(r.json.reason, 'RequestEntityTooLarge');
});

test('every answer carries an Audit-Id; a client-sent one is kept', async () => {
  const r = await s.client.get('/version', { 'Audit-Id': 'my-own-id' });
  assert.equal(r.headers['audit-id'], 'my-own-id');
  const unauth = await s.client.anonymous().get('/api');
  assert.equal(unauth.status, 401);
  assert.ok(unauth.headers['audit-id']);
});
