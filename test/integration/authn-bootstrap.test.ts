// Bootstrap tokens end to end: a token `<id>.<secret>` authenticates as
// system:bootstrap:<id> while its secret agrees, allows authentication and
// has not expired; every other case is a 401. The token cleaner deletes
// expired token secrets when they fall due, and leaves the others alone.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, testControllers, type TestServer } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { bearer, selfReview, whoIs } from '../support/selfreview.js';
import { createTokenSecret, secretsPath } from '../support/bootstrap.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const anHourAgo = () => new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');

describe('bootstrap tokens', () => {
  let s: TestServer;
  let anonymous: TestClient;

  before(async () => {
    s = await startTestServer({ enableBootstrapTokenAuth: true, controllers: [...testControllers, 'tokencleaner'] });
    anonymous = s.client.anonymous();
  });
  after(async () => {
    anonymous.close();
    await s.close();
  });

  test('a valid token is system:bootstrap:<id> in system:bootstrappers plus its extra groups', async () => {
    await createTokenSecret(s, 'abcdef.0123456789abcdef', {
      expiration: inAnHour(), extraGroups: 'system:bootstrappers:worker,system:bootstrappers:a-b:c',
    });
    const user = await whoIs(anonymous, bearer('abcdef.0123456789abcdef'));
    assert.equal(user.username, 'system:bootstrap:abcdef');
    assert.deepEqual(user.groups, ['system:bootstrappers', 'system:bootstrappers:a-b:c', 'system:bootstrappers:worker', 'system:authenticated']);
    // The default policy lets bootstrappers create certificate signing requests, nothing of the rest.
    assertStatus(await anonymous.get('/api/v1/namespaces', bearer('abcdef.0123456789abcdef')), 403, 'Forbidden');
  });

  test('a wrong secret part, an unknown id, or a token in another format is refused with 401', async () => {
    await createTokenSecret(s, 'bbbbbb.0123456789abcdef');
    for (const token of ['bbbbbb.0123456789abcdee', 'zzzzzz.0123456789abcdef', 'BBBBBB.0123456789abcdef', 'bbbbbb.0123456789abcdef0']) {
      assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
    }
    assert.equal((await whoIs(anonymous, bearer('bbbbbb.0123456789abcdef'))).username, 'system:bootstrap:bbbbbb');
  });

  test('a secret whose token-secret disagrees, without the authentication usage, or with a malformed extra group is refused', async () => {
    await createTokenSecret(s, 'cccccc.0123456789abcdef', { keptSecret: '0123456789abcdeX' });
    await createTokenSecret(s, 'dddddd.0123456789abcdef', { usageAuthentication: false, usageSigning: true });
    await createTokenSecret(s, 'eeeeee.0123456789abcdef', { extraGroups: 'system:masters' });
    for (const token of ['cccccc.0123456789abcdef', 'dddddd.0123456789abcdef', 'eeeeee.0123456789abcdef']) {
      assertStatus(await selfReview(anonymous, bearer(token)), 401, 'Unauthorized');
    }
  });

  test('an expired token is refused, and the token cleaner deletes its secret', async () => {
    await createTokenSecret(s, 'ffffff.0123456789abcdef', { expiration: anHourAgo() });
    assertStatus(await selfReview(anonymous, bearer('ffffff.0123456789abcdef')), 401, 'Unauthorized');
    await eventually('the expired token secret is deleted', async () => (await s.client.get(`${secretsPath}/bootstrap-token-ffffff`)).status === 404);
  });

  test('the cleaner deletes a token secret when it falls due, and keeps the live ones', async () => {
    // Due two seconds from now: no later event brings it back to the cleaner, only its own requeue.
    const due = new Date(Date.now() + 2_000).toISOString();
    await createTokenSecret(s, 'gggggg.0123456789abcdef', { expiration: due });
    await createTokenSecret(s, 'hhhhhh.0123456789abcdef', { expiration: inAnHour() });
    await eventually('the token secret is deleted once due', async () => (await s.client.get(`${secretsPath}/bootstrap-token-gggggg`)).status === 404);
    assertStatus(await selfReview(anonymous, bearer('gggggg.0123456789abcdef')), 401, 'Unauthorized');
    assert.equal((await s.client.get(`${secretsPath}/bootstrap-token-hhhhhh`)).status, 200);
    assert.equal((await s.client.get(`${secretsPath}/bootstrap-token-abcdef`)).status, 200);
  });

  test('a TokenReview of a bootstrap token names its user', async () => {
    const r = await s.client.post(`/apis/${vocabulary.authenticationGroup}/v1/tokenreviews`, {
      apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'TokenReview', spec: { token: 'abcdef.0123456789abcdef' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.authenticated, true);
    assert.equal(r.json.status.user.username, 'system:bootstrap:abcdef');
  });
});
