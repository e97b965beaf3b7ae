// Client-certificate authentication over HTTPS: only a certificate the
// server's CA issued, still valid and meant for client auth, names a user (CN)
// and groups (O); anything else presented is a 401 Status, also when
// anonymous access is on. A who-am-I review shows what the server decided.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { product } from '../../src/machinery/vocabulary.js';
import { startTestServer, TestServer } from '../support/server.js';
import { TestClient, type Response } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { clientCert, newCa, serverCa, type CertPair } from '../support/certs.js';
import { whoAmIBody, whoAmIPath, whoAmIRest } from '../support/whoami.js';

function assertUnauthorized(r: Response): void {
  assertStatus(r, 401, 'Unauthorized');
  assert.equal(r.json.message, 'Unauthorized');
}

for (const anonymousAuth of [false, true]) {
  describe(`client certificates, anonymous access ${anonymousAuth ? 'on' : 'off'}`, () => {
    let s: TestServer;
    let ca: CertPair;
    const clients: TestClient[] = [];
    const as = (pair?: CertPair): TestClient => {
      const c = new TestClient({ server: s.client.creds.server, ca: s.client.creds.ca, cert: pair?.cert, key: pair?.key });
      clients.push(c);
      return c;
    };
    const whoAmI = async (c: TestClient) => {
      const r = await c.post(whoAmIPath, whoAmIBody);
      assert.equal(r.status, 201, r.text);
      return r.json.status as { username: string; groups: string[] };
    };

    before(async () => {
      // Who a certificate names is under test, not what they may do: AlwaysAllow.
      s = await startTestServer({ anonymousAuth, authorizationMode: ['AlwaysAllow'] });
      s.registry.addRest(whoAmIRest());
      ca = await serverCa(s.dataDir);
    });
    after(async () => {
      for (const c of clients) c.close();
      await s.close();
    });

    test('a certificate from the server CA names the user (CN) and groups (O), plus system:authenticated', async () => {
      const c = as(await clientCert(ca, 'jane', { organizations: ['dev', 'qa'] }));
      assert.deepEqual(await whoAmI(c), { username: 'jane', groups: ['dev', 'qa', 'system:authenticated'] });
      assert.equal((await c.get('/api/v1/namespaces')).status, 200);
      assert.deepEqual(await whoAmI(s.client), { username: 'admin', groups: ['system:masters', 'system:authenticated'] });
    });

    test('a certificate signed by another CA is refused, even one naming the admin under a CA of the same name', async () => {
      const stranger = await newCa(`${product.name}-ca`);
      for (const pair of [await clientCert(stranger, 'admin', { organizations: ['system:masters'] }), await clientCert(await newCa('other-ca'), 'jane')]) {
        const c = as(pair);
        assertUnauthorized(await c.get('/api/v1/namespaces'));
        assertUnauthorized(await c.post(whoAmIPath, whoAmIBody));
        assertUnauthorized(await c.get('/no/such/path'));
      }
    });

    test('an expired certificate from the server CA is refused', async () => {
      const c = as(await clientCert(ca, 'jane', { notAfter: new Date(Date.now() - 60_000) }));
      assertUnauthorized(await c.get('/api/v1/namespaces'));
      assertUnauthorized(await c.post(whoAmIPath, whoAmIBody));
    });

    test('a certificate from the server CA meant only for server auth is refused', async () => {
      const c = as(await clientCert(ca, 'jane', { usages: ['digital signature', 'key encipherment', 'server auth'] }));
      assertUnauthorized(await c.get('/api/v1/namespaces'));
    });

    test(`no certificate ${anonymousAuth ? 'is system:anonymous' : 'is refused'}`, async () => {
      const c = as();
      if (anonymousAuth) assert.deepEqual(await whoAmI(c), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
      else assertUnauthorized(await c.post(whoAmIPath, whoAmIBody));
    });

    test(`a certificate without a common name ${anonymousAuth ? 'is system:anonymous' : 'is refused'}`, async () => {
      const c = as(await clientCert(ca, '', { organizations: ['dev'] }));
      if (anonymousAuth) assert.deepEqual(await whoAmI(c), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
      else assertUnauthorized(await c.post(whoAmIPath, whoAmIBody));
    });

    test('after refusals the server still answers the admin', async () => {
      assert.equal((await s.client.get('/readyz')).status, 200);
      assert.equal((await s.client.get('/api/v1/namespaces/default')).status, 200);
    });
  });
}
