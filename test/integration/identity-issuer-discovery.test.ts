// Service-account issuer discovery as a relying party outside the cluster
// uses it: a token from the TokenRequest sub-resource is verified by jose
// with nothing but the two documents the server publishes (the provider
// configuration, then the key set at its jwks_uri), fetched with a service
// account's own API token, as the default policy lets every service account do.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { startTestServer, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';

const group = vocabulary.authenticationGroup;
let s: TestServer;
let outsider: TestClient;

before(async () => {
  s = await startTestServer();
  outsider = s.client.anonymous();
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'apps' } })).status, 201);
  assert.equal((await s.client.post('/api/v1/namespaces/apps/serviceaccounts', { metadata: { name: 'robot' } })).status, 201);
});
after(async () => {
  outsider.close();
  await s.close();
});

/** A token of apps/robot for `audience`; for this server's own audience when absent. */
async function tokenFor(audience?: string): Promise<string> {
  const r = await s.client.post('/api/v1/namespaces/apps/serviceaccounts/robot/token', { apiVersion: `${group}/v1`, kind: 'TokenRequest', spec: audience ? { audiences: [audience] } : {} });
  assert.equal(r.status, 201, r.text);
  return r.json.status.token;
}

test('a TokenRequest token verifies with only the discovery document and the key set it points to', async () => {
  const token = await tokenFor('vault');
  const asRobot = { Authorization: `Bearer ${await tokenFor()}` };

  const config = await outsider.get('/.well-known/openid-configuration', asRobot);
  assert.equal(config.status, 200, config.text);
  assert.equal(config.headers['content-type'], 'application/json');
  assert.equal(config.headers['cache-control'], 'public, max-age=3600');
  assert.deepEqual(Object.keys(config.json).sort(), ['id_token_signing_alg_values_supported', 'issuer', 'jwks_uri', 'response_types_supported', 'subject_types_supported']);
  assert.equal(config.json.issuer, `https://${product.name}.default.svc.cluster.local`);
  assert.deepEqual(config.json.response_types_supported, ['id_token']);
  assert.deepEqual(config.json.subject_types_supported, ['public']);

  // jwks_uri is this server's own address unless --service-account-jwks-uri says otherwise.
  const jwksUri = new URL(config.json.jwks_uri);
  assert.equal(jwksUri.origin, new URL(s.url).origin);
  const keys = await outsider.get(jwksUri.pathname, asRobot);
  assert.equal(keys.status, 200, keys.text);
  assert.equal(keys.headers['content-type'], 'application/jwk-set+json');
  assert.ok(keys.json.keys.length >= 1);
  for (const key of keys.json.keys) {
    assert.equal(key.use, 'sig');
    assert.ok(config.json.id_token_signing_alg_values_supported.includes(key.alg), key.alg);
    assert.equal(key.d, undefined, 'no private part is published');
  }

  const verifier = createLocalJWKSet(keys.json);
  const options = { issuer: config.json.issuer, audience: 'vault', algorithms: config.json.id_token_signing_alg_values_supported };
  const { payload } = await jwtVerify(token, verifier, options);
  assert.equal(payload.sub, 'system:serviceaccount:apps:robot');

  // The verifier is real: a token for another audience, or one with a changed signature, fails.
  await assert.rejects(jwtVerify(await tokenFor('elsewhere'), verifier, options), /aud/);
  const [head, body, signature] = token.split('.');
  const forged = `${head}.${body}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
  await assert.rejects(jwtVerify(forged, verifier, options), /signature/);
});

test('the documents are for service accounts (default policy); a trailing slash is the same path; writes are refused', async () => {
  assert.equal((await outsider.get('/.well-known/openid-configuration')).status, 403);
  assert.equal((await outsider.get('/openid/v1/jwks')).status, 403);
  const admin = await s.client.get('/openid/v1/jwks/');
  assert.equal(admin.status, 200);
  assert.equal(admin.headers['content-type'], 'application/jwk-set+json');
  assert.equal((await s.client.post('/openid/v1/jwks', {})).status, 405);
});

test('--service-account-jwks-uri names where the keys are fetched', async () => {
  const t = await startTestServer({ serviceAccountJwksUri: 'https://keys.example.com/cluster/jwks' });
  try {
    const config = await t.client.get('/.well-known/openid-configuration');
    assert.equal(config.status, 200, config.text);
    assert.equal(config.json.jwks_uri, 'https://keys.example.com/cluster/jwks');
    // The server still serves its own copy.
    assert.equal((await t.client.get('/openid/v1/jwks')).status, 200);
  } finally {
    await t.close();
  }
});
