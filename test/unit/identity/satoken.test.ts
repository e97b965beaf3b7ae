// Service-account tokens: the claims of bound and legacy tokens, signing with
// RSA and ECDSA keys, and the authenticator's checks (issuer, signature,
// audiences, times, the objects a token depends on) and its cache.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, decodeJwt } from 'jose';
import { createTokenSigner, tokenKeyId } from '../../../src/pki/tokens.js';
import { product } from '../../../src/machinery/vocabulary.js';
import {
  boundTokenClaims, legacyServiceAccountIssuer, legacyTokenClaims, readServiceAccountClaims, splitServiceAccountUsername,
} from '../../../src/machinery/serviceaccount.js';
import { ServiceAccountTokenAuthenticator, type ObjectState } from '../../../src/auth/authn/serviceaccount.js';
import { claimedIssuer } from '../../../src/auth/authn/token.js';

const issuer = 'https://issuer.test';
const pem = (type: 'rsa' | 'ec', curve?: string) => {
  const { privateKey, publicKey } = type === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: curve! });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};
const rsa = pem('rsa');
const t0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const account = { name: 'robot', uid: 'sa-uid-1' };

/** Objects by `resource/namespace/name`, as a test's store. */
function objects(entries: Record<string, ObjectState>) {
  const map = new Map(Object.entries(entries));
  return { map, get: async (resource: string, ns: string, name: string) => map.get(`${resource}/${ns}/${name}`) };
}

function authenticator(o: ReturnType<typeof objects>, clock: { now: number }, keys = [rsa.publicKey], cacheSize?: number) {
  return new ServiceAccountTokenAuthenticator({ issuers: [issuer, 'https://old.test'], publicKeyPems: keys, apiAudiences: ['api'], objects: o, now: () => clock.now, cacheSize });
}

const bound = (extra: Partial<Parameters<typeof boundTokenClaims>[0]> = {}) =>
  boundTokenClaims({ namespace: 'ns', account, audiences: ['api'], lifetimeSeconds: 3600, now: t0, id: 'jti-1', ...extra });

test('bound claims: iss from the signer, sub, aud, exp, nbf, iat, jti and the private claim with namespace, account, secret and pod', async () => {
  const claims = bound({ secret: { name: 's', uid: 's-uid' }, pod: { name: 'p', uid: 'p-uid' }, warnAfterSeconds: 600 });
  const iat = t0 / 1000;
  assert.deepEqual(claims, {
    aud: ['api'], exp: iat + 3600, iat, jti: 'jti-1', nbf: iat, sub: 'system:serviceaccount:ns:robot',
    [product.domain]: { namespace: 'ns', serviceaccount: account, pod: { name: 'p', uid: 'p-uid' }, secret: { name: 's', uid: 's-uid' }, warnafter: iat + 600 },
  });
  const token = await (await createTokenSigner(rsa.privateKey, issuer)).sign(claims);
  assert.deepEqual(decodeJwt(token), { iss: issuer, ...claims });
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'RS256', kid: tokenKeyId(createPrivateKey(rsa.privateKey)) });
  const read = readServiceAccountClaims(decodeJwt(token), false);
  assert.ok(typeof read !== 'string');
  assert.deepEqual({ ns: read.namespace, account: read.account, secret: read.secret, pod: read.pod, aud: read.audiences, exp: read.expiresAt },
    { ns: 'ns', account, secret: { name: 's', uid: 's-uid' }, pod: { name: 'p', uid: 'p-uid' }, aud: ['api'], exp: iat + 3600 });
});

test('legacy claims: flat claims under the product domain, no audience, no expiry', () => {
  assert.deepEqual(legacyTokenClaims('ns', account, 'robot-token-abcde'), {
    [`${product.domain}/serviceaccount/namespace`]: 'ns',
    [`${product.domain}/serviceaccount/secret.name`]: 'robot-token-abcde',
    [`${product.domain}/serviceaccount/service-account.name`]: 'robot',
    [`${product.domain}/serviceaccount/service-account.uid`]: 'sa-uid-1',
    sub: 'system:serviceaccount:ns:robot',
  });
  assert.equal(legacyServiceAccountIssuer, `${product.name}/serviceaccount`);
  assert.equal(readServiceAccountClaims({ sub: 'system:serviceaccount:ns:robot' }, true), 'namespace claim is missing');
  assert.equal(readServiceAccountClaims({ ...legacyTokenClaims('ns', account, 's'), sub: 'system:serviceaccount:other:robot' }, true), 'sub claim is invalid');
  assert.equal(readServiceAccountClaims({ sub: 'x' }, false), `${product.domain} claim is missing`);
  assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:robot'), { namespace: 'ns', name: 'robot' });
  for (const bad of ['system:serviceaccount:ns', 'system:serviceaccount:n:s:x', 'system:serviceaccount:NS:robot', 'alice']) assert.equal(splitServiceAccountUsername(bad), undefined, bad);
});

test('tokens signed with RSA and ECDSA keys authenticate their account, with groups, uid and credential id', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } } });
  for (const [keys, alg] of [[pem('ec', 'prime256v1'), 'ES256'], [pem('ec', 'secp384r1'), 'ES384'], [rsa, 'RS256']] as const) {
    const token = await (await createTokenSigner(keys.privateKey, issuer)).sign(bound());
    assert.equal(decodeProtectedHeader(token).alg, alg);
    const r = await authenticator(o, { now: t0 }, [rsa.publicKey, keys.publicKey]).authenticateToken(token, ['api']);
    assert.deepEqual(r, {
      kind: 'user', audiences: ['api'],
      user: {
        username: 'system:serviceaccount:ns:robot', uid: 'sa-uid-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        extra: { [`authentication.${product.domain}/credential-id`]: ['JTI=jti-1'] },
      },
    }, alg);
  }
  await assert.rejects(createTokenSigner(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), issuer), /unsupported key type ed25519/);
});

test('tokens of other issuers are not ours; a bad signature or a foreign key is rejected', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } } });
  const auth = authenticator(o, { now: t0 });
  assert.deepEqual(await auth.authenticateToken(await (await createTokenSigner(rsa.privateKey, 'https://elsewhere')).sign(bound()), []), { kind: 'none' });
  assert.deepEqual(await auth.authenticateToken('not.a.jwt', []), { kind: 'none' });
  assert.deepEqual(await auth.authenticateToken('garbage', []), { kind: 'none' });
  const foreign = await (await createTokenSigner(pem('rsa').privateKey, issuer)).sign(bound());
  assert.equal((await auth.authenticateToken(foreign, [])).kind, 'rejected');
  const good = await (await createTokenSigner(rsa.privateKey, 'https://old.test')).sign(bound());
  assert.equal((await auth.authenticateToken(good, [])).kind, 'user', 'every configured issuer is accepted');
  const [h, p, sig] = good.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(good), sub: 'x' })).toString('base64url')}.${sig}`;
  assert.equal(p === forged.split('.')[1], false);
  assert.equal((await auth.authenticateToken(forged, [])).kind, 'rejected');
});

test('audiences: the token must be for one of those asked; a request that asks none wants the server\'s own', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } } });
  const auth = authenticator(o, { now: t0 });
  const token = await (await createTokenSigner(rsa.privateKey, issuer)).sign(bound({ audiences: ['vault', 'api'] }));
  assert.deepEqual((await auth.authenticateToken(token, ['vault', 'x'])) as any, { ...(await auth.authenticateToken(token, ['vault'])), audiences: ['vault'] });
  assert.deepEqual(((await auth.authenticateToken(token, [])) as any).audiences, ['api']);
  const vaultOnly = await (await createTokenSigner(rsa.privateKey, issuer)).sign(bound({ audiences: ['vault'] }));
  assert.deepEqual(await auth.authenticateToken(vaultOnly, ['api']), { kind: 'rejected', reason: 'token audiences ["vault"] is invalid for the target audiences ["api"]' });
});

test('times: expired, not yet valid and issued in the future are refused, with upstream\'s minute of leeway', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } } });
  const token = await (await createTokenSigner(rsa.privateKey, issuer)).sign(bound({ lifetimeSeconds: 600 }));
  const clock = { now: t0 };
  const auth = authenticator(o, clock);
  assert.equal((await auth.authenticateToken(token, [])).kind, 'user');
  clock.now = t0 + 660_000; // exp + 60 s: still within the leeway
  assert.equal((await auth.authenticateToken(token, [])).kind, 'user');
  clock.now = t0 + 661_000;
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'service account token has expired' });
  assert.equal(auth.cachedTokens, 0, 'an expired token leaves the cache');
  clock.now = t0 - 61_000;
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'service account token is not valid yet' });
});

test('a token stops working when its account, or the secret it is bound to, is gone or recreated', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } }, 'secrets/ns/s': { metadata: { uid: 's-uid' } } });
  const auth = authenticator(o, { now: t0 });
  const signer = await createTokenSigner(rsa.privateKey, issuer);
  const token = await signer.sign(bound({ secret: { name: 's', uid: 's-uid' } }));
  assert.equal((await auth.authenticateToken(token, [])).kind, 'user');
  o.map.set('secrets/ns/s', { metadata: { uid: 's-uid-2' } });
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'secret UID (s-uid-2) does not match service account secret ref claim (s-uid)' });
  o.map.delete('secrets/ns/s');
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'service account token has been invalidated' });
  const plain = await signer.sign(bound());
  o.map.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-2' } });
  assert.deepEqual(await auth.authenticateToken(plain, []), { kind: 'rejected', reason: 'service account UID (sa-uid-2) does not match claim (sa-uid-1)' });
  o.map.delete('serviceaccounts/ns/robot');
  assert.deepEqual(await auth.authenticateToken(plain, []), { kind: 'rejected', reason: 'serviceaccounts "robot" not found' });
  o.map.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-1', deletionTimestamp: new Date(t0 - 120_000).toISOString() } });
  assert.deepEqual(await auth.authenticateToken(plain, []), { kind: 'rejected', reason: 'service account ns/robot has been deleted' });
  const podBound = await signer.sign(bound({ pod: { name: 'p', uid: 'p-uid' } }));
  o.map.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-1' } });
  assert.deepEqual(await auth.authenticateToken(podBound, []), { kind: 'rejected', reason: 'service account token has been invalidated' }, 'no such pod');
  o.map.set('pods/ns/p', { metadata: { uid: 'p-uid' } });
  const r = await auth.authenticateToken(podBound, []);
  assert.deepEqual(r.kind === 'user' && r.user.extra, {
    [`authentication.${product.domain}/pod-name`]: ['p'], [`authentication.${product.domain}/pod-uid`]: ['p-uid'],
    [`authentication.${product.domain}/credential-id`]: ['JTI=jti-1'],
  });
});

test('a legacy token works while its secret holds it and its account has the same uid', async () => {
  const signer = await createTokenSigner(rsa.privateKey, legacyServiceAccountIssuer);
  const token = await signer.sign(legacyTokenClaims('ns', account, 'robot-token-x'));
  const secret = { metadata: { uid: 'x' }, data: { token: Buffer.from(token).toString('base64') } };
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } }, 'secrets/ns/robot-token-x': secret });
  const auth = authenticator(o, { now: t0 });
  assert.deepEqual(await auth.authenticateToken(token, ['api']), {
    kind: 'user', audiences: ['api'],
    user: { username: 'system:serviceaccount:ns:robot', uid: 'sa-uid-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] },
  });
  assert.equal((await auth.authenticateToken(token, ['vault'])).kind, 'rejected', 'legacy tokens are for the server\'s own audiences');
  o.map.set('secrets/ns/robot-token-x', { ...secret, data: { token: Buffer.from('other').toString('base64') } });
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: "token does not match server's copy" });
  o.map.set('secrets/ns/robot-token-x', secret);
  o.map.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-9' } });
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'ServiceAccount UID (sa-uid-9) does not match claim (sa-uid-1)' });
  o.map.delete('secrets/ns/robot-token-x');
  assert.deepEqual(await auth.authenticateToken(token, []), { kind: 'rejected', reason: 'token has been invalidated' });
});

test('verified tokens are cached by hash, boundedly', async () => {
  const o = objects({ 'serviceaccounts/ns/robot': { metadata: { uid: 'sa-uid-1' } } });
  const auth = authenticator(o, { now: t0 }, [rsa.publicKey], 2);
  const signer = await createTokenSigner(rsa.privateKey, issuer);
  const tokens = await Promise.all(['a', 'b', 'c'].map((id) => signer.sign(bound({ id }))));
  await auth.authenticateToken(tokens[0]!, []);
  await auth.authenticateToken(tokens[0]!, []);
  assert.equal(auth.cachedTokens, 1);
  for (const t of tokens) assert.equal((await auth.authenticateToken(t, [])).kind, 'user');
  assert.equal(auth.cachedTokens, 2);
  assert.equal((await auth.authenticateToken(`${tokens[0]}x`, [])).kind, 'rejected', 'a changed token is checked again');
});

test('the issuer is read before any signature check, and hostile payloads are simply not ours', async () => {
  const part = (v: string) => Buffer.from(v).toString('base64url');
  assert.equal(claimedIssuer(`${part('{}')}.${part('{"iss":"https://issuer.test"}')}.sig`), 'https://issuer.test');
  assert.equal(claimedIssuer(`${part('{}')}.${part(`{"iss":"x","d":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)}.sig`), undefined);
  assert.equal(claimedIssuer(`a.${part('not json')}.c`), undefined);
  assert.equal(claimedIssuer(`a.${part('{"iss":7}')}.c`), undefined);
  const auth = authenticator(objects({}), { now: t0 });
  const deep = `${part('{"alg":"RS256"}')}.${part(`{"iss":"${issuer}","x":${'['.repeat(5000)}${']'.repeat(5000)}}`)}.c2ln`;
  assert.deepEqual(await auth.authenticateToken(deep, []), { kind: 'none' });
});
