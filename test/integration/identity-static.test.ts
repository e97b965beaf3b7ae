// Static tokens and anonymous requests over HTTPS: a token from
// --token-auth-file authenticates, a garbage one answers 401 with no hint
// even with anonymous requests on, and no credentials at all are anonymous
// only when --anonymous-auth says so.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { product } from '../../src/machinery/vocabulary.js';

let open: TestServer;
let closed: TestServer;
let anonymousOpen: TestClient;
let anonymousClosed: TestClient;

before(async () => {
  const file = tokenFile('t-alice,alice,uid-1,"devs,ops"\nt-bob,bob,uid-2\n');
  // Authentication is under test, not authorization: AlwaysAllow, where anonymous requests are off unless asked for.
  open = await startTestServer({ tokenAuthFile: file, anonymousAuth: true, authorizationMode: ['AlwaysAllow'] });
  closed = await startTestServer({ tokenAuthFile: file, authorizationMode: ['AlwaysAllow'] });
  anonymousOpen = open.client.anonymous();
  anonymousClosed = closed.client.anonymous();
});

after(async () => {
  anonymousOpen.close();
  anonymousClosed.close();
  await open.close();
  await closed.close();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

test('a static token authenticates', async () => {
  for (const c of [anonymousOpen, anonymousClosed]) {
    const r = await c.get('/api/v1/namespaces/default', bearer('t-alice'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.name, 'default');
  }
});

test('a garbage bearer token answers 401 with no hint, even with anonymous requests on', async () => {
  for (const c of [anonymousOpen, anonymousClosed]) {
    const deepPayload = Buffer.from(`{"iss":"https://${product.name}.default.svc.cluster.local","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`).toString('base64url');
    for (const token of ['garbage', 't-alice2', 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln', '..', 'a.b.c.d', 'x'.repeat(400_000), `e30.${deepPayload}.c2ln`]) {
      const r = await c.get('/api/v1/namespaces', bearer(token));
      assertStatus(r, 401, 'Unauthorized');
      assert.equal(r.json.message, 'Unauthorized');
    }
  }
});

test('no credentials: anonymous when --anonymous-auth is on, 401 by default under AlwaysAllow', async () => {
  assert.equal((await anonymousOpen.get('/api/v1/namespaces')).status, 200);
  assertStatus(await anonymousClosed.get('/api/v1/namespaces'), 401, 'Unauthorized');
  // A header that is not a bearer token is no credential either.
  assert.equal((await anonymousOpen.get('/api/v1/namespaces', { Authorization: 'Basic YWxpY2U6eA==' })).status, 200);
});

test('a client certificate wins over a bearer token on the same request, as upstream asks x509 first', async () => {
  const r = await open.client.get('/api/v1/namespaces', bearer('garbage'));
  assert.equal(r.status, 200, r.text);
});
