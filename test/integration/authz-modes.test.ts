// --authorization-mode over HTTPS: AlwaysDeny refuses every user with
// upstream's 403 wording (resource and non-resource requests, anonymous
// included), while system:masters is always allowed; bad combinations stop
// the start with upstream's message.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { startServer } from '../../src/apiserver/start.js';

let server: TestServer;
let anonymous: TestClient;

before(async () => {
  const tokens = tokenFile('t-alice,alice,uid-1,devs\n');
  server = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['AlwaysDeny'] });
  anonymous = server.client.anonymous();
});

after(async () => {
  anonymous.close();
  await server.close();
});

const alice = { Authorization: 'Bearer t-alice' };

test('AlwaysDeny: a user is refused in upstream\'s words, naming resource, group and namespace', async () => {
  const r = await anonymous.get('/api/v1/namespaces/default/secrets', alice);
  assertStatus(r, 403, 'Forbidden');
  assert.equal(r.json.message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default": Everything is forbidden.');
  assert.deepEqual(r.json.details, { kind: 'secrets' });
  const cluster = await anonymous.get('/apis/coordination.plat.io/v1/leases', alice);
  assert.equal(cluster.json.message, 'leases.coordination.plat.io is forbidden: User "alice" cannot list resource "leases" in API group "coordination.plat.io" at the cluster scope: Everything is forbidden.');
  const named = await anonymous.get('/api/v1/namespaces/kube/configmaps/x', alice);
  assert.equal(named.json.message, 'configmaps "x" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "kube": Everything is forbidden.');
});

test('AlwaysDeny: non-resource paths name the path; anonymous requests are on and refused too', async () => {
  const r = await anonymous.get('/version', alice);
  assertStatus(r, 403, 'Forbidden');
  assert.equal(r.json.message, 'forbidden: User "alice" cannot get path "/version": Everything is forbidden.');
  const anon = await anonymous.get('/api/v1/namespaces');
  assertStatus(anon, 403, 'Forbidden');
  assert.match(anon.json.message, /User "system:anonymous" cannot list resource "namespaces"/);
});

test('system:masters (the admin certificate) is allowed whatever the modes say', async () => {
  assert.equal((await server.client.get('/api/v1/namespaces/default')).status, 200);
  assert.equal((await server.client.get('/version')).status, 200);
});

test('a start with ABAC but no policy file, or a file without its mode, fails with upstream\'s message', async () => {
  await assert.rejects(startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', dataDir: tempDir(), authorizationMode: ['ABAC'] }),
    /authorization-mode ABAC's authorization policy file not passed/);
  await assert.rejects(startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', dataDir: tempDir(), authorizationMode: ['RBAC'], authorizationWebhookConfigFile: '/x' }),
    /cannot specify --authorization-webhook-config-file without mode Webhook/);
});
