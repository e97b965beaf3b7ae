// Webhook token authentication end to end, against a real HTTPS webhook that
// checks the server's client certificate: the TokenReview sent (v1beta1 by
// default, v1 when asked), the user of an authenticated answer, denials with
// and without an error text, audiences, the answer cache, and a webhook that
// hangs, fails or is down (a 401, never a hung or crashed server).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { bearer, selfReview, whoIs } from '../support/selfreview.js';
import { answerReview, startTokenWebhook, type TestTokenWebhook, type TokenWebhookHandler } from '../support/authn-webhook.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const reviewsPath = `/apis/${vocabulary.authenticationGroup}/v1/tokenreviews`;
/** Extra with a key that is an ordinary key here, never a prototype. */
const extra = () => JSON.parse('{"scopes":["a","b"],"__proto__":["p"]}');

/** The webhook's rules by token: who each names, or how it fails. */
const byToken: TokenWebhookHandler = (review, _req, res) => {
  const token: string = review.spec.token;
  if (token.startsWith('good-')) {
    return answerReview(res, review, {
      authenticated: true,
      user: { username: token.slice(5), uid: `uid-${token}`, groups: ['webhook-users'], extra: extra() },
    });
  }
  if (token === 'for-other-audience') return answerReview(res, review, { authenticated: true, user: { username: 'aud-user' }, audiences: ['other-api'] });
  if (token === 'denied-with-error') return answerReview(res, review, { authenticated: false, error: 'token revoked by the identity team' });
  if (token === 'status-kind') {
    // A Status (or any other kind) whose status happens to say authenticated is no TokenReview.
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: { authenticated: true, user: { username: 'intruder' } } }));
    return;
  }
  if (token === 'upstream-named') {
    const apiVersion = review.apiVersion.replace(vocabulary.authenticationGroup, 'authentication.k8s.io');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ apiVersion, kind: 'TokenReview', status: { authenticated: true, user: { username: 'upstream-named' } } }));
    return;
  }
  if (token === 'hangs') return; // never answers
  if (token === 'breaks') { res.socket?.destroy(); return; }
  if (token === 'garbage') { res.writeHead(200); res.end('{not json'); return; }
  if (token === 'server-error') { res.writeHead(500); res.end(); return; }
  answerReview(res, review, { authenticated: false });
};

async function tokenReview(s: TestServer, token: string, audiences?: string[]): Promise<any> {
  const r = await s.client.post(reviewsPath, { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'TokenReview', spec: { token, audiences } });
  assert.equal(r.status, 201, r.text);
  return r.json.status;
}

describe('webhook token authentication (v1beta1, cached)', () => {
  let s: TestServer;
  let hook: TestTokenWebhook;
  let anonymous: TestClient;
  const callsFor = (token: string) => hook.received.filter((r) => r.review.spec.token === token).length;

  before(async () => {
    hook = await startTokenWebhook(tempDir(), byToken);
    s = await startTestServer({
      anonymousAuth: true, authorizationMode: ['AlwaysAllow'], apiAudiences: ['plat-api'],
      authenticationTokenWebhookConfigFile: hook.kubeconfigPath, authenticationTokenWebhookTimeoutMs: 1_000,
    });
    anonymous = s.client.anonymous();
  });
  after(async () => {
    anonymous.close();
    await s.close();
    await hook.close();
  });

  test('sends a v1beta1 TokenReview with the server\'s audiences over mutual TLS; the answer names the user', async () => {
    const user = await whoIs(anonymous, bearer('good-jane'));
    assert.deepEqual(user, {
      username: 'jane', uid: 'uid-good-jane', groups: ['webhook-users', 'system:authenticated'], extra: extra(),
    });
    const sent = hook.received.find((r) => r.review.spec.token === 'good-jane')!;
    assert.equal(sent.clientCn, 'apiserver');
    assert.deepEqual(sent.review, { apiVersion: `${vocabulary.authenticationGroup}/v1beta1`, kind: 'TokenReview', spec: { token: 'good-jane', audiences: ['plat-api'] } });
  });

  test('answers are cached: authenticated and plainly denied tokens are asked once', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await whoIs(anonymous, bearer('good-cached'))).username, 'cached');
      assertStatus(await selfReview(anonymous, bearer('unknown-token')), 401, 'Unauthorized');
    }
    assert.equal(callsFor('good-cached'), 1);
    assert.equal(callsFor('unknown-token'), 1);
  });

  test('a denial with an error text passes the text on and is not cached; without one, the generic reason', async () => {
    assertStatus(await selfReview(anonymous, bearer('denied-with-error')), 401, 'Unauthorized');
    assert.equal((await tokenReview(s, 'denied-with-error')).error, 'token revoked by the identity team');
    assert.equal(callsFor('denied-with-error'), 2);
    const plain = await tokenReview(s, 'unknown-token-2');
    assert.notEqual(plain.authenticated, true);
    assert.equal(plain.error, 'invalid bearer token');
  });

  test('audiences: an answer for another audience does not authenticate to this server, but does in a review that asks for it', async () => {
    assertStatus(await selfReview(anonymous, bearer('for-other-audience')), 401, 'Unauthorized');
    const review = await tokenReview(s, 'for-other-audience', ['other-api']);
    assert.equal(review.authenticated, true);
    assert.deepEqual(review.audiences, ['other-api']);
    assert.equal(review.user.username, 'aud-user');
    const sent = hook.received.filter((r) => r.review.spec.token === 'for-other-audience').map((r) => r.review.spec.audiences);
    assert.deepEqual(sent, [['plat-api'], ['other-api']]);
  });

  test('an answer that is not a TokenReview of the version asked for is a 401, whatever it says; the upstream group name is the same kind', async () => {
    assertStatus(await selfReview(anonymous, bearer('status-kind')), 401, 'Unauthorized');
    assert.match((await tokenReview(s, 'status-kind')).error, /is not a TokenReview: expected .*\/v1beta1, Kind=TokenReview, got v1, Kind=Status/);
    assert.equal((await whoIs(anonymous, bearer('upstream-named'))).username, 'upstream-named');
  });

  test('a webhook that hangs, breaks the connection, answers garbage or HTTP 500: 401, and the server goes on', async () => {
    for (const token of ['hangs', 'breaks', 'garbage', 'server-error']) {
      assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
      assert.match((await tokenReview(s, token)).error, /^webhook: /, token);
    }
    assert.equal((await s.client.get('/readyz')).status, 200);
    assert.match((await tokenReview(s, 'hangs')).error, /no answer within 1000 ms/);
  });

  test('a webhook that is down: 401 for new tokens; cached answers still hold', async () => {
    await hook.close();
    assertStatus(await selfReview(anonymous, bearer('good-new-after-down')), 401, 'Unauthorized');
    assert.match((await tokenReview(s, 'good-other-after-down')).error, /^webhook: .*ECONNREFUSED/);
    assert.equal((await whoIs(anonymous, bearer('good-cached'))).username, 'cached');
  });
});

describe('webhook token authentication (v1, no cache)', () => {
  let s: TestServer;
  let hook: TestTokenWebhook;
  let anonymous: TestClient;

  before(async () => {
    hook = await startTokenWebhook(tempDir(), byToken);
    s = await startTestServer({
      anonymousAuth: true, authorizationMode: ['AlwaysAllow'],
      authenticationTokenWebhookConfigFile: hook.kubeconfigPath, authenticationTokenWebhookVersion: 'v1', authenticationTokenWebhookCacheTtlMs: 0,
    });
    anonymous = s.client.anonymous();
  });
  after(async () => {
    anonymous.close();
    await s.close();
    await hook.close();
  });

  test('sends v1 TokenReviews, and asks on every request with the cache off', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await whoIs(anonymous, bearer('good-v1'))).username, 'v1');
    const sent = hook.received.filter((r) => r.review.spec.token === 'good-v1');
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.review.apiVersion, `${vocabulary.authenticationGroup}/v1`);
  });
});
