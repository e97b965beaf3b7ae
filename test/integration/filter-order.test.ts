// The filter order, seen from a client: panic recovery → request info →
// authentication → authorization → handler. The app is built with createApp
// from parts of the test's own (an authorizer that denies one user, an
// authenticator that can throw, a handler that can throw) and served over
// HTTPS with the usual key material.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import pino from 'pino';
import { builtinKinds } from '../../src/api/catalog.js';
import { UnionAuthenticator, type Authenticator } from '../../src/auth/authn/authenticator.js';
import { X509Authenticator } from '../../src/auth/authn/x509.js';
import type { Attributes, Authorizer, Decision } from '../../src/auth/authz/authorizer.js';
import { ensureKeyMaterial } from '../../src/pki/index.js';
import { Registry } from '../../src/registry/registry.js';
import { createApp } from '../../src/server/app.js';
import { Health } from '../../src/server/health.js';
import { MemoryBackend } from '../../src/storage/memory/store.js';
import { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { tempDir } from '../support/server.js';
import { clientCert, serverCa, type CertPair } from '../support/certs.js';
import { whoAmIBody, whoAmIPath, whoAmIRest, whoAmIs } from '../support/whoami.js';

/** Answers a user only for a request that asks it to throw, so the union's throw reaches the filters. */
const explosive: Authenticator = {
  name: 'explosive',
  authenticate: (req) => {
    if (req.headers['x-test-explode']) throw new Error('authenticator exploded');
    return { kind: 'none' };
  },
};

/** Denies mallory, throws for crash, allows everyone else; records what it was asked. */
class RecordingAuthorizer implements Authorizer {
  readonly name = 'recording';
  readonly asked: Attributes[] = [];
  authorize(attrs: Attributes): Decision {
    this.asked.push(attrs);
    if (attrs.user.username === 'crash') throw new Error('authorizer exploded');
    if (attrs.user.username === 'mallory') return { decision: 'deny', reason: 'mallory is never allowed' };
    return { decision: 'allow', reason: '' };
  }
}

let dir: string;
let server: Server;
let url: string;
let backend: MemoryBackend;
const authorizer = new RecordingAuthorizer();
const reviews: string[] = [];
const logLines: string[] = [];
const clients: TestClient[] = [];
let admin: TestClient;
let anonymous: TestClient;
let mallory: TestClient;
let crash: TestClient;

before(async () => {
  dir = tempDir('filter-order-');
  const keys = await ensureKeyMaterial(dir, { serviceAccountKeyFiles: [] });
  backend = new MemoryBackend();
  const registry = new Registry(builtinKinds, backend);
  registry.addRest(whoAmIRest((review) => {
    const name = review.metadata?.name ?? '';
    reviews.push(name);
    if (name === 'explode') throw new TypeError('handler exploded');
  }));
  const log = pino({ level: 'error' }, { write: (line: string) => { logLines.push(line); } });
  const app = createApp({
    registry, health: new Health(), log, packageVersion: '0.0.0-test', serverAddress: () => new URL(url).host,
    authenticator: new UnionAuthenticator([new X509Authenticator(), explosive], { anonymous: false }),
    authorizer,
  });
  server = createServer({ key: keys.servingKeyPem, cert: keys.servingCertPem, ca: keys.clientCaPem, requestCert: true, rejectUnauthorized: false }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ca = await serverCa(dir);
  const as = (pair?: CertPair) => {
    const c = new TestClient({ server: url, ca: keys.caCertPem, cert: pair?.cert, key: pair?.key });
    clients.push(c);
    return c;
  };
  admin = as({ cert: keys.adminCertPem, key: keys.adminKeyPem });
  anonymous = as();
  mallory = as(await clientCert(ca, 'mallory'));
  crash = as(await clientCert(ca, 'crash'));
});

after(async () => {
  for (const c of clients) c.close();
  await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` and tells what the authorizer was asked and which reviews the handler answered meanwhile. */
async function observe(fn: () => Promise<void>): Promise<{ asked: Attributes[]; reviewed: string[] }> {
  const asked = authorizer.asked.length;
  const reviewed = reviews.length;
  await fn();
  return { asked: authorizer.asked.slice(asked), reviewed: reviews.slice(reviewed) };
}

const review = (name: string) => ({ ...whoAmIBody, metadata: { name } });

test('without credentials: 401 before anything looks at the path, even one that does not exist', async () => {
  const seen = await observe(async () => {
    for (const path of ['/no/such/path', '/api/v1/nosuchresource', '/api/v1/namespaces/default/configmaps/x', '/version']) {
      const r = await anonymous.get(path);
      assertStatus(r, 401, 'Unauthorized');
    }
    assertStatus(await anonymous.post(whoAmIPath, review('anon')), 401, 'Unauthorized');
  });
  assert.deepEqual(seen, { asked: [], reviewed: [] }, 'neither the authorizer nor the handler heard of them');
});

test('a denied user never reaches the handler: 403 with upstream\'s message, whether or not the path exists', async () => {
  const seen = await observe(async () => {
    const r = await mallory.post(whoAmIPath, review('m1'));
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, `whoamis.${whoAmIs.group} is forbidden: User "mallory" cannot create resource "whoamis" in API group "${whoAmIs.group}" at the cluster scope: mallory is never allowed`);
    assert.deepEqual(r.json.details, { group: whoAmIs.group, kind: 'whoamis' });

    const cm = await mallory.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'm-cm' }, data: { a: 'b' } });
    assertStatus(cm, 403, 'Forbidden');
    assert.equal(cm.json.message, 'configmaps is forbidden: User "mallory" cannot create resource "configmaps" in API group "" in the namespace "default": mallory is never allowed');

    const get = await mallory.get('/api/v1/namespaces/default/configmaps/m-cm');
    assertStatus(get, 403, 'Forbidden');
    assert.deepEqual(get.json.details, { name: 'm-cm', kind: 'configmaps' });

    const nowhere = await mallory.get('/no/such/path');
    assertStatus(nowhere, 403, 'Forbidden');
    assert.equal(nowhere.json.message, 'forbidden: User "mallory" cannot get path "/no/such/path": mallory is never allowed');
  });
  assert.deepEqual(seen.reviewed, [], 'the handler never ran');
  assert.equal(seen.asked.length, 4);
  assert.ok(seen.asked.every((a) => a.user.username === 'mallory'));
  assert.equal((await admin.get('/api/v1/namespaces/default/configmaps/m-cm')).status, 404, 'the denied create stored nothing');
  assertStatus(await admin.get('/no/such/path'), 404, 'NotFound');
});

test('the authorizer sees the parsed request and the authenticated user', async () => {
  const seen = await observe(async () => {
    assert.equal((await admin.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'cm1' } })).status, 201);
    assert.equal((await admin.get('/api/v1/namespaces/team/configmaps/cm1')).status, 200);
    assert.equal((await admin.get('/api/v1/configmaps')).status, 200);
    assert.equal((await admin.get('/version')).status, 200);
  });
  const pick = (a: Attributes) => [a.verb, a.isResourceRequest, a.apiGroup, a.apiVersion, a.resource, a.namespace, a.name, a.path];
  assert.deepEqual(seen.asked.map(pick), [
    ['create', true, '', 'v1', 'configmaps', 'team', undefined, '/api/v1/namespaces/team/configmaps'],
    ['get', true, '', 'v1', 'configmaps', 'team', 'cm1', '/api/v1/namespaces/team/configmaps/cm1'],
    ['list', true, '', 'v1', 'configmaps', undefined, undefined, '/api/v1/configmaps'],
    ['get', false, '', '', undefined, undefined, undefined, '/version'],
  ]);
  for (const a of seen.asked) assert.deepEqual(a.user, { username: 'admin', groups: ['system:masters', 'system:authenticated'] });
});

test('an exception in the handler is a 500 Status and a log line, and the server goes on', async () => {
  const before = logLines.length;
  const seen = await observe(async () => {
    const r = await admin.post(whoAmIPath, review('explode'));
    assertStatus(r, 500, 'InternalError');
    assert.equal(r.json.message, 'Internal error occurred: the server could not complete the request');
    assert.doesNotMatch(r.text, /handler exploded/, 'the exception stays in the log');
    const next = await admin.post(whoAmIPath, review('after'));
    assert.equal(next.status, 201, next.text);
    assert.equal(next.json.status.username, 'admin');
  });
  assert.deepEqual(seen.reviewed, ['explode', 'after']);
  const logged = logLines.slice(before).map((l) => JSON.parse(l));
  assert.equal(logged.length, 1);
  assert.equal(logged[0].msg, 'request failed unexpectedly');
  assert.match(JSON.stringify(logged[0].err), /handler exploded/);
});

test('an exception in authentication or authorization is a 500 Status too: recovery wraps them', async () => {
  const seen = await observe(async () => {
    const thrownInAuthn = await anonymous.send('GET', '/api/v1/namespaces', { headers: { 'x-test-explode': '1' } });
    assertStatus(thrownInAuthn, 500, 'InternalError');
    const thrownInAuthz = await crash.post(whoAmIPath, review('c1'));
    assertStatus(thrownInAuthz, 500, 'InternalError');
  });
  assert.deepEqual(seen.reviewed, [], 'the handler never ran');
  assert.deepEqual(seen.asked.map((a) => a.user.username), ['crash'], 'authentication threw before the authorizer was asked');
  assert.equal((await admin.get('/api/v1/namespaces/team/configmaps/cm1')).status, 200, 'the server goes on');
});
