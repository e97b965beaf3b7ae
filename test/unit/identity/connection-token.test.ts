// A bearer token sent again on one keep-alive connection: the connection's
// earlier verification is reused (no second hash, no promise while the
// objects are at hand), and every check that depends on the time or on the
// stored objects still runs on each request; a different header on the same
// connection is verified on its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { Agent, createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTokenSigner } from '../../../src/pki/tokens.js';
import { boundTokenClaims } from '../../../src/machinery/serviceaccount.js';
import { ServiceAccountTokenAuthenticator, type ObjectState } from '../../../src/auth/authn/serviceaccount.js';
import { UnionTokenAuthenticator } from '../../../src/auth/authn/token.js';
import { BearerTokenAuthenticator } from '../../../src/auth/authn/bearer.js';
import type { AuthnResult } from '../../../src/auth/authn/authenticator.js';

const issuer = 'https://issuer.test';
const t0 = Date.UTC(2030, 0, 1, 12, 0, 0);

test('a token sent again on one connection reuses its verification; time and the stored objects are checked on every request', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stored = new Map<string, ObjectState>([['serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-1' } }]]);
  const clock = { now: t0 };
  const serviceAccounts = new ServiceAccountTokenAuthenticator({
    issuers: [issuer], publicKeyPems: [publicKey.export({ type: 'spki', format: 'pem' }).toString()], apiAudiences: ['api'],
    // As the watch cache answers: at once, without a promise.
    objects: { get: (resource, ns, name) => stored.get(`${resource}/${ns}/${name}`) },
    now: () => clock.now,
  });
  const bearer = new BearerTokenAuthenticator(new UnionTokenAuthenticator([serviceAccounts]), ['api']);
  const sockets = new Set<unknown>();
  const answeredAtOnce: boolean[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    sockets.add(req.socket);
    const pending = bearer.authenticate(req);
    answeredAtOnce.push(!(pending instanceof Promise));
    void Promise.resolve(pending).then((r: AuthnResult) => res.end(JSON.stringify(r.kind === 'user' ? { user: r.user.username } : r)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => { agent.destroy(); server.close(); });
  const port = (server.address() as AddressInfo).port;
  const ask = (token: string) => new Promise<unknown>((resolve, reject) => {
    request({ host: '127.0.0.1', port, agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject).end();
  });

  const signer = await createTokenSigner(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), issuer);
  const token = await signer.sign(boundTokenClaims({ namespace: 'ns', account: { name: 'robot', uid: 'sa-uid-1' }, audiences: ['api'], lifetimeSeconds: 600, now: t0, id: 'j' }));
  const robot = { user: 'system:serviceaccount:ns:robot' };
  assert.deepEqual(await ask(token), robot);
  assert.deepEqual(await ask(token), robot);
  assert.deepEqual(answeredAtOnce, [false, true], 'the signature is checked once; the second request answers without a promise');

  // The objects, read again on every request.
  stored.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-2' } });
  assert.deepEqual(await ask(token), { kind: 'rejected', reason: 'service account UID (sa-uid-2) does not match claim (sa-uid-1)' });
  stored.delete('serviceaccounts/ns/robot');
  assert.deepEqual(await ask(token), { kind: 'rejected', reason: 'serviceaccounts "robot" not found' });
  stored.set('serviceaccounts/ns/robot', { metadata: { uid: 'sa-uid-1' } });
  assert.deepEqual(await ask(token), robot);

  // Another header on the same connection is its own token: a forged one is refused, and the good one after it is checked afresh.
  const [head, payload] = token.split('.');
  const forged = `${head}.${payload}.${'A'.repeat(342)}`;
  assert.equal(((await ask(forged)) as AuthnResult).kind, 'rejected');
  assert.deepEqual(await ask(token), robot);

  // The time, checked on every request: past the expiry and its minute of leeway the same header is refused.
  clock.now = t0 + 661_000;
  assert.deepEqual(await ask(token), { kind: 'rejected', reason: 'service account token has expired' });
  assert.equal(sockets.size, 1, 'every request came on one connection');
});
