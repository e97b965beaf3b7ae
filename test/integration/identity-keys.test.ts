// Key files and issuers: an ECDSA signing key from --service-account-signing-key-file
// signs ES256 tokens for the first issuer; tokens of any configured issuer,
// signed by a key of --service-account-key-file, are accepted; audiences come
// from --api-audiences.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { boundTokenClaims } from '../../src/machinery/serviceaccount.js';
import { createTokenSigner } from '../../src/pki/index.js';

let s: TestServer;
let bare: TestClient;
let otherKeyPem: string;

before(async () => {
  const dir = tempDir();
  const signing = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  otherKeyPem = other.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  writeFileSync(join(dir, 'signing.key'), signing.privateKey.export({ type: 'sec1', format: 'pem' }));
  writeFileSync(join(dir, 'other.pub'), other.publicKey.export({ type: 'spki', format: 'pem' }));
  s = await startTestServer({
    serviceAccountSigningKeyFile: join(dir, 'signing.key'),
    serviceAccountKeyFiles: [join(dir, 'other.pub')],
    serviceAccountIssuer: ['https://new.example', 'https://old.example'],
    apiAudiences: ['api.example', 'api2.example'],
  });
  bare = s.client.anonymous();
  assert.equal((await s.client.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })).status, 201);
});

after(async () => {
  bare.close();
  await s.close();
});

const whoami = async (token: string) => {
  const r = await bare.post(`/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, {}, { Authorization: `Bearer ${token}` });
  return r.status === 201 ? r.json.status.userInfo.username : r;
};

test('the signing key file signs ES256 tokens for the first issuer and the API audiences', async () => {
  const r = await s.client.post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: {} });
  assert.equal(r.status, 201, r.text);
  const token = r.json.status.token;
  assert.equal(decodeProtectedHeader(token).alg, 'ES256');
  assert.equal(decodeJwt(token).iss, 'https://new.example');
  assert.deepEqual(decodeJwt(token).aud, ['api.example', 'api2.example']);
  assert.equal(await whoami(token), 'system:serviceaccount:default:robot');
});

test('a token of another configured issuer, signed by a key of --service-account-key-file, is accepted', async () => {
  const account = (await s.client.get('/api/v1/namespaces/default/serviceaccounts/robot')).json;
  const sign = async (issuer: string, audiences: string[]) => (await createTokenSigner(otherKeyPem, issuer)).sign(boundTokenClaims({
    namespace: 'default', account: { name: 'robot', uid: account.metadata.uid }, audiences, lifetimeSeconds: 600, now: Date.now(), id: issuer,
  }));
  assert.equal(await whoami(await sign('https://old.example', ['api2.example'])), 'system:serviceaccount:default:robot');
  assertStatus(await whoami(await sign('https://elsewhere.example', ['api.example'])), 401, 'Unauthorized');
  assertStatus(await whoami(await sign('https://old.example', ['https://new.example'])), 401, 'Unauthorized');
});
