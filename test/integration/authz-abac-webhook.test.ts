// ABAC and webhook authorization over HTTPS: an ABAC policy file decides a
// request (a bad line stops the start naming it); a real HTTPS webhook with
// its own CA decides requests from the SubjectAccessReview it is sent
// (v1beta1 and v1), its answers are cached, and a failing or silent webhook
// is no opinion (a 403, never a hang).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer, tokenFile } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { answer, startWebhook, type TestWebhook } from '../support/authz-webhook.js';
import { startServer } from '../../src/apiserver/start.js';
import { abacApiVersion } from '../../src/auth/authz/abac.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const dir = tempDir();
const tokens = tokenFile('t-alice,alice,uid-1,devs\nt-bob,bob,uid-2\nt-mallory,mallory,uid-3\nt-slow,slow,uid-4\nt-broken,broken,uid-5\nt-statusy,statusy,uid-6\n');
let abac: TestServer;
let hook: TestWebhook;
let webhooked: TestServer;
let plain: TestClient;
let webPlain: TestClient;
const as = (who: string) => ({ Authorization: `Bearer t-${who}` });
const policy = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: abacApiVersion, kind: 'Policy', spec });

before(async () => {
  const policies = join(dir, 'abac.jsonl');
  writeFileSync(policies, [
    '# alice reads configmaps in team; everyone signed in may discover',
    policy({ user: 'alice', namespace: 'team', resource: 'configmaps', apiGroup: '', readonly: true }),
    policy({ group: '*', nonResourcePath: '*', readonly: true }),
  ].join('\n'));
  abac = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['ABAC'], authorizationPolicyFile: policies });
  plain = abac.client.anonymous();

  hook = await startWebhook(dir, (body, req, res) => {
    const user = body.spec.user;
    if (user === 'broken') { res.writeHead(500); res.end('boom'); return; }
    if (user === 'slow') return; // never answers
    if (user === 'statusy') {
      // A Status whose status says allowed is no SubjectAccessReview: no opinion, never an allow.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: { allowed: true } }));
      return;
    }
    assert.equal(req.headers.authorization, 'Bearer webhook-secret');
    if (user === 'mallory') return answer(res, body, { allowed: false, denied: true, reason: 'mallory is blocked' });
    if (user === 'alice' && body.spec.resourceAttributes?.resource === 'configmaps') return answer(res, body, { allowed: true, reason: 'the webhook likes alice' });
    return answer(res, body, { allowed: false, reason: 'not known here', evaluationError: 'partial knowledge' });
  });
  webhooked = await startTestServer({
    tokenAuthFile: tokens, authorizationMode: ['RBAC', 'Webhook'], authorizationWebhookConfigFile: hook.kubeconfigPath,
    authorizationWebhookTimeoutMs: 500,
  });
  webPlain = webhooked.client.anonymous();
});

after(async () => {
  plain.close();
  webPlain.close();
  await abac.close();
  await webhooked.close();
  await hook.close();
});

test('ABAC: a readonly policy allows reading in its namespace only; no policy, no access', async () => {
  assert.equal((await plain.get('/api/v1/namespaces/team/configmaps', as('alice'))).status, 200);
  const write = await plain.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'x' } }, as('alice'));
  assertStatus(write, 403, 'Forbidden');
  assert.equal(write.json.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team": No policy matched.');
  assertStatus(await plain.get('/api/v1/namespaces/other/configmaps', as('alice')), 403, 'Forbidden');
  assertStatus(await plain.get('/api/v1/namespaces/team/configmaps', as('bob')), 403, 'Forbidden');
  assert.equal((await plain.get('/version', as('bob'))).status, 200);
  // A wildcard never covers anonymous requests.
  assertStatus(await plain.get('/version'), 403, 'Forbidden');
});

test('ABAC: a malformed line stops the start, naming the file and the line', async () => {
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, `${policy({ user: 'a', namespace: '*', resource: '*' })}\n\n${policy({ user: 'b' }).slice(0, -3)}\n`);
  await assert.rejects(startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', dataDir: tempDir(), authorizationMode: ['ABAC'], authorizationPolicyFile: bad }),
    (e: Error) => e.message.startsWith(`error reading policy file ${bad}, line 3: `));
});

test('Webhook: the SubjectAccessReview it is sent decides; v1beta1 names the groups `group`; answers are cached', async () => {
  const before = hook.received.length;
  const r = await webPlain.get('/api/v1/namespaces/team/configmaps', as('alice'));
  assert.equal(r.status, 200, r.text);
  const sent = hook.received[before];
  assert.equal(sent.apiVersion, `${vocabulary.authorizationGroup}/v1beta1`);
  assert.equal(sent.kind, 'SubjectAccessReview');
  assert.deepEqual(sent.spec, {
    user: 'alice', group: ['devs', 'system:authenticated'], uid: 'uid-1',
    resourceAttributes: { verb: 'list', group: '', version: 'v1', resource: 'configmaps', namespace: 'team' },
  });
  assert.equal((await webPlain.get('/api/v1/namespaces/team/configmaps', as('alice'))).status, 200);
  assert.equal(hook.received.length, before + 1, 'the second request is answered from the cache');
});

test('Webhook: a denial is final, with its reason; no opinion carries its evaluation error into reviews', async () => {
  const denied = await webPlain.get('/api/v1/namespaces/team/configmaps', as('mallory'));
  assertStatus(denied, 403, 'Forbidden');
  assert.match(denied.json.message, /User "mallory" cannot list resource "configmaps" .*: mallory is blocked$/);
  const review = await webhooked.client.post(`/apis/${vocabulary.authorizationGroup}/v1/subjectaccessreviews`, {
    spec: { user: 'bob', groups: ['system:authenticated'], resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team' } },
  });
  assert.deepEqual(review.json.status, { allowed: false, reason: 'not known here', evaluationError: 'partial knowledge' });
  const mal = await webhooked.client.post(`/apis/${vocabulary.authorizationGroup}/v1/subjectaccessreviews`, {
    spec: { user: 'mallory', resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'team' } },
  });
  assert.deepEqual(mal.json.status, { allowed: false, denied: true, reason: 'mallory is blocked' });
  // The rules review says the list is incomplete: a webhook cannot list rules.
  const rules = await webPlain.post(`/apis/${vocabulary.authorizationGroup}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'team' } }, as('bob'));
  assert.equal(rules.json.status.incomplete, true);
  assert.equal(rules.json.status.evaluationError, 'webhook authorizer does not support user rule resolution');
});

test('Webhook: a failing or silent webhook is no opinion: 403, with the failure told to reviews', async () => {
  assertStatus(await webPlain.get('/api/v1/namespaces/team/configmaps', as('broken')), 403, 'Forbidden');
  assertStatus(await webPlain.get('/api/v1/namespaces/team/configmaps', as('slow')), 403, 'Forbidden');
  const review = await webhooked.client.post(`/apis/${vocabulary.authorizationGroup}/v1/subjectaccessreviews`, {
    spec: { user: 'broken', resourceAttributes: { verb: 'get', resource: 'pods' } },
  });
  assert.equal(review.json.status.allowed, false);
  assert.equal(review.json.status.evaluationError, 'error contacting the authorization webhook: the webhook answered HTTP 500');
  // An answer of another kind is a failure too, however it is worded.
  assertStatus(await webPlain.get('/api/v1/namespaces/team/configmaps', as('statusy')), 403, 'Forbidden');
  const statusy = await webhooked.client.post(`/apis/${vocabulary.authorizationGroup}/v1/subjectaccessreviews`, {
    spec: { user: 'statusy', resourceAttributes: { verb: 'get', resource: 'pods' } },
  });
  assert.equal(statusy.json.status.allowed, false);
  assert.match(statusy.json.status.evaluationError, /is not a SubjectAccessReview: expected .*\/v1beta1, Kind=SubjectAccessReview, got v1, Kind=Status/);
  // RBAC before the webhook: the admin never reaches it.
  const count = hook.received.length;
  assert.equal((await webhooked.client.get('/api/v1/namespaces')).status, 200);
  assert.equal(hook.received.length, count);
});

test('Webhook v1: the review names the groups `groups`; a missing config file stops the start', async () => {
  const v1 = await startTestServer({
    tokenAuthFile: tokens, authorizationMode: ['Webhook'], authorizationWebhookConfigFile: hook.kubeconfigPath, authorizationWebhookVersion: 'v1',
  });
  const c = v1.client.anonymous();
  try {
    const before = hook.received.length;
    assert.equal((await c.get('/api/v1/namespaces/team/configmaps', as('alice'))).status, 200);
    const sent = hook.received[before];
    assert.equal(sent.apiVersion, `${vocabulary.authorizationGroup}/v1`);
    assert.deepEqual(sent.spec.groups, ['devs', 'system:authenticated']);
  } finally {
    c.close();
    await v1.close();
  }
  await assert.rejects(startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', dataDir: tempDir(), authorizationMode: ['Webhook'], authorizationWebhookConfigFile: join(dir, 'missing') }),
    /--authorization-webhook-config-file .*missing: ENOENT/);
});
