// The token controller and the root CA publisher, over HTTPS: an account gets
// a token secret it lists, whose token authenticates it; removed data is put
// back; the secrets go with the account; a deleted secret leaves the
// account's list; a token secret made by hand is filled in; every namespace
// holds the root CA ConfigMap, restored when changed or deleted.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';
import { legacyServiceAccountIssuer } from '../../src/machinery/serviceaccount.js';

let s: TestServer;
let bare: TestClient;
const ns = '/api/v1/namespaces/ctl';
const tokenType = vocabulary.serviceAccountTokenSecretType;
const decoded = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

before(async () => {
  s = await startTestServer({ controllers: ['*'] });
  bare = s.client.anonymous();
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'ctl' } })).status, 201);
});

after(async () => {
  bare.close();
  await s.close();
});

const get = async (path: string) => { const r = await s.client.get(path); return r.status === 200 ? r.json : undefined; };
const tokenSecretsOf = async (account: string) =>
  ((await s.client.get(`${ns}/secrets?fieldSelector=type%3D${encodeURIComponent(tokenType)}`)).json.items as any[])
    .filter((x) => x.metadata.annotations?.[vocabulary.serviceAccountNameAnnotation] === account);

async function referencedSecret(account: string): Promise<any> {
  return eventually(`a token secret listed by ${account}`, async () => {
    const sa = await get(`${ns}/serviceaccounts/${account}`);
    const name = sa?.secrets?.[0]?.name;
    const secret = name ? await get(`${ns}/secrets/${name}`) : undefined;
    return secret?.data?.token ? { sa, secret } : undefined;
  });
}

async function whoami(token: string): Promise<string | undefined> {
  const r = await bare.post(`/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, {}, { Authorization: `Bearer ${token}` });
  return r.status === 201 ? r.json.status.userInfo.username : undefined;
}

test('an account gets a token secret it lists, holding a legacy token, the CA and the namespace', async () => {
  assert.equal((await s.client.post(`${ns}/serviceaccounts`, { metadata: { name: 'robot' } })).status, 201);
  const { sa, secret } = await referencedSecret('robot');
  assert.match(secret.metadata.name, /^robot-token-[a-z0-9]{5}$/);
  assert.equal(secret.type, tokenType);
  assert.deepEqual(secret.metadata.annotations, { [vocabulary.serviceAccountNameAnnotation]: 'robot', [vocabulary.serviceAccountUidAnnotation]: sa.metadata.uid });
  assert.equal(decoded(secret.data.namespace), 'ctl');
  assert.equal(decoded(secret.data['ca.crt']), s.client.creds.ca);
  const token = decoded(secret.data.token);
  assert.equal(decodeJwt(token).iss, legacyServiceAccountIssuer);
  assert.equal(await whoami(token), 'system:serviceaccount:ctl:robot');
  assert.equal((await tokenSecretsOf('robot')).length, 1, 'one token secret, not one per update');
});

test('a token secret whose data was removed is filled in again, with a token that works', async () => {
  const { secret } = await referencedSecret('robot');
  const r = await s.client.put(`${ns}/secrets/${secret.metadata.name}`, { ...secret, data: { 'ca.crt': secret.data['ca.crt'] } });
  assert.equal(r.status, 200, r.text);
  const repaired = await eventually('the token put back', async () => {
    const x = await get(`${ns}/secrets/${secret.metadata.name}`);
    return x?.data?.token && x.data.namespace ? x : undefined;
  });
  assert.equal(await whoami(decoded(repaired.data.token)), 'system:serviceaccount:ctl:robot');
  // A token its secret no longer holds is refused (a token that is there is left as it is).
  const replaced = await s.client.put(`${ns}/secrets/${secret.metadata.name}`, { ...repaired, data: { ...repaired.data, token: Buffer.from('replaced').toString('base64') } });
  assert.equal(replaced.status, 200, replaced.text);
  assert.equal(await whoami(decoded(repaired.data.token)), undefined);
});

test('a token secret made by hand is filled in and its token works', async () => {
  const made = await s.client.post(`${ns}/secrets`, {
    metadata: { name: 'handmade', annotations: { [vocabulary.serviceAccountNameAnnotation]: 'robot' } }, type: tokenType,
  });
  assert.equal(made.status, 201, made.text);
  const filled = await eventually('the hand-made secret filled in', async () => {
    const x = await get(`${ns}/secrets/handmade`);
    return x?.data?.token ? x : undefined;
  });
  const sa = await get(`${ns}/serviceaccounts/robot`);
  assert.equal(filled.metadata.annotations[vocabulary.serviceAccountUidAnnotation], sa.metadata.uid);
  assert.equal(await whoami(decoded(filled.data.token)), 'system:serviceaccount:ctl:robot');
});

test('a deleted token secret leaves the account\'s list, and the account gets a new one', async () => {
  const { secret } = await referencedSecret('robot');
  assert.equal((await s.client.delete(`${ns}/secrets/${secret.metadata.name}`)).status, 200);
  const { sa } = await eventually('a new token secret listed instead', async () => {
    const x = await referencedSecret('robot');
    return x.secret.metadata.name !== secret.metadata.name ? x : undefined;
  });
  assert.ok(!sa.secrets.some((ref: any) => ref.name === secret.metadata.name));
});

test('an account\'s token secrets go with it', async () => {
  await referencedSecret('robot');
  assert.equal((await s.client.delete(`${ns}/serviceaccounts/robot`)).status, 200);
  await eventually('no token secret of robot left', async () => (await tokenSecretsOf('robot')).length === 0);
});

test('every namespace holds the root CA ConfigMap, restored when changed or deleted', async () => {
  const path = `${ns}/configmaps/${vocabulary.rootCaConfigMap}`;
  const cm = await eventually('the root CA ConfigMap', () => get(path));
  assert.deepEqual(cm.data, { 'ca.crt': s.client.creds.ca });
  assert.match(cm.metadata.annotations[`${product.domain}/description`], /CA bundle/);
  for (const name of ['default', vocabulary.systemNamespace, vocabulary.publicNamespace]) {
    await eventually(`the root CA ConfigMap in ${name}`, () => get(`/api/v1/namespaces/${name}/configmaps/${vocabulary.rootCaConfigMap}`));
  }
  assert.equal((await s.client.put(path, { ...cm, data: { 'ca.crt': 'tampered' } })).status, 200);
  await eventually('the CA restored', async () => (await get(path))?.data?.['ca.crt'] === s.client.creds.ca);
  assert.equal((await s.client.delete(path)).status, 200);
  await eventually('the ConfigMap recreated', async () => (await get(path))?.data?.['ca.crt'] === s.client.creds.ca);
});
