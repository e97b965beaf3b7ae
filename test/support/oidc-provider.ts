// An OpenID Connect provider for tests: HTTPS on 127.0.0.1 with a CA of its
// own, discovery and a key set (JWKS) it can rotate, ID tokens signed by its
// current key (or any other), and a count of the requests it answered, to see
// that the server does not call it per request.

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { newCa } from './certs.js';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface TestProvider {
  /** https://127.0.0.1:<port>/realm: discovery is below it. */
  issuer: string;
  caPath: string;
  /** Requests answered, by path. */
  hits: Map<string, number>;
  /** The keys the key set publishes; the first signs. */
  keys: SigningKey[];
  /** Replaces the published keys by a new one. */
  rotate(): Promise<SigningKey>;
  /** An ID token with these claims (issuer, an hour's expiry and the audience filled in unless given), signed by `key`. */
  token(claims: JWTPayload & Record<string, unknown>, key?: SigningKey): Promise<string>;
  close(): Promise<void>;
}

export async function startProvider(dir: string, clientId: string): Promise<TestProvider> {
  const ca = await newCa('test oidc CA');
  const serving = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'oidc', ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: serving.publicKeyPem, issuerKeyPem: ca.key, issuerCertPem: ca.cert,
  });
  const caPath = join(dir, 'oidc-ca.crt');
  writeFileSync(caPath, ca.cert);
  let generation = 0;
  const provider: TestProvider = {
    issuer: '', caPath, hits: new Map(), keys: [await newSigningKey(`key-${generation}`)],
    async rotate() {
      const key = await newSigningKey(`key-${++generation}`);
      provider.keys = [key];
      return key;
    },
    token(claims, key = provider.keys[0]!) {
      const now = Math.floor(Date.now() / 1000);
      const full = { iss: provider.issuer, aud: clientId, iat: now, exp: now + 3600, ...claims };
      return new SignJWT(full).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
    },
    close: async () => undefined,
  };
  const server: Server = createServer({ key: serving.privateKeyPem, cert }, (req, res) => {
    const path = req.url ?? '';
    provider.hits.set(path, (provider.hits.get(path) ?? 0) + 1);
    const send = (body: unknown) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (path === '/realm/.well-known/openid-configuration') send({ issuer: provider.issuer, jwks_uri: `${provider.issuer}/keys`, id_token_signing_alg_values_supported: ['RS256'] });
    else if (path === '/realm/keys') send({ keys: provider.keys.map((k) => k.jwk) });
    else { res.writeHead(404); res.end(); }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}/realm`;
  provider.close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  return provider;
}
