// The authenticating proxy: request headers name the user only on a
// connection whose client certificate chains to the proxy's CA and carries an
// allowed CN. Headers from any other connection are ignored; a proxy CA
// certificate does not name a user by itself, nor does a client certificate
// from the proxy CA pass as one from the client CA.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { clientCert, newCa, serverCa, type CertPair } from '../support/certs.js';
import { whoIs, selfReview } from '../support/selfreview.js';

describe('authenticating proxy (request headers)', () => {
  let s: TestServer;
  let proxyCa: CertPair;
  const clients: TestClient[] = [];
  const as = (pair?: CertPair): TestClient => {
    const c = new TestClient({ server: s.client.creds.server, ca: s.client.creds.ca, cert: pair?.cert, key: pair?.key });
    clients.push(c);
    return c;
  };
  const proxyHeaders = {
    'X-Remote-User': 'alice',
    'X-Remote-Group': 'devs',
    'X-Remote-Extra-Scopes': 'read',
    'X-Remote-Extra-Acme.com%2Fproject': 'blue',
  };

  before(async () => {
    const dir = tempDir();
    proxyCa = await newCa('front-proxy-ca');
    const caFile = join(dir, 'front-proxy-ca.crt');
    writeFileSync(caFile, proxyCa.cert);
    s = await startTestServer({
      anonymousAuth: true, authorizationMode: ['AlwaysAllow'],
      requestheaderClientCaFile: caFile,
      requestheaderAllowedNames: ['front-proxy'],
      requestheaderUsernameHeaders: ['X-Remote-User', 'X-Other-User'],
      requestheaderGroupHeaders: ['X-Remote-Group'],
      requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    await s.close();
  });

  test('the proxy names the user, groups and extra (keys lowercased and percent-decoded)', async () => {
    const proxy = as(await clientCert(proxyCa, 'front-proxy'));
    const user = await whoIs(proxy, { ...proxyHeaders, 'X-Remote-Group': 'devs' });
    assert.equal(user.username, 'alice');
    assert.deepEqual(user.groups, ['devs', 'system:authenticated']);
    assert.deepEqual(user.extra, { scopes: ['read'], 'acme.com/project': ['blue'] });
  });

  test('several group values, and the first username header with a value wins', async () => {
    const proxy = as(await clientCert(proxyCa, 'front-proxy'));
    // Node sends one header line per value of an array.
    const headers = { 'X-Other-User': 'bob', 'X-Remote-Group': ['a', 'b'] } as unknown as Record<string, string>;
    const user = await whoIs(proxy, headers);
    assert.equal(user.username, 'bob');
    assert.deepEqual(user.groups, ['a', 'b', 'system:authenticated']);
  });

  test('the proxy without a user header is refused: its certificate is no client certificate (as upstream)', async () => {
    const proxy = as(await clientCert(proxyCa, 'front-proxy', { organizations: ['system:masters'] }));
    assertStatus(await selfReview(proxy), 401, 'Unauthorized');
  });

  test('headers on a connection without a certificate are ignored', async () => {
    const user = await whoIs(as(), proxyHeaders);
    assert.equal(user.username, 'system:anonymous');
    assert.equal(user.extra, undefined);
  });

  test('headers on a connection with a client-CA certificate are ignored: the certificate names the user', async () => {
    const admin = await whoIs(s.client, proxyHeaders);
    assert.equal(admin.username, 'admin');
    assert.equal(admin.extra, undefined);
    const jane = await whoIs(as(await clientCert(await serverCa(s.dataDir), 'jane')), proxyHeaders);
    assert.equal(jane.username, 'jane');
  });

  test('a proxy-CA certificate with a CN not allowed is refused, headers or not', async () => {
    const other = as(await clientCert(proxyCa, 'someone-else'));
    assertStatus(await selfReview(other, proxyHeaders), 401, 'Unauthorized');
    assertStatus(await selfReview(other), 401, 'Unauthorized');
  });

  test('a certificate from another CA, even with the allowed CN, is refused', async () => {
    const stranger = as(await clientCert(await newCa('front-proxy-ca'), 'front-proxy'));
    assertStatus(await selfReview(stranger, proxyHeaders), 401, 'Unauthorized');
  });
});
