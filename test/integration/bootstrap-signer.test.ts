// The public cluster-info ConfigMap and its signatures end to end: the server
// creates it with its address and CA, anonymous users may read it (and
// nothing else of the namespace), and the bootstrap signer keeps one HS256
// signature per signing token that a client checks with its token.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { startTestServer, testControllers, type TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { createTokenSecret, secretsPath } from '../support/bootstrap.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { ClusterInfoSignatureError, verifiedClusterInfo } from '../../src/client/clusterinfo.js';

const cmPath = `/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps/cluster-info`;
const token = 'sig001.0123456789abcdef';

describe('cluster-info and the bootstrap signer', () => {
  let s: TestServer;
  let anonymous: TestClient;
  const clusterInfo = async () => {
    const r = await anonymous.get(cmPath);
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  const signatureKeys = async () => Object.keys((await clusterInfo()).data).filter((k) => k.startsWith('jws-kubeconfig-')).sort();

  before(async () => {
    // RBAC, as by default: anonymous reads cluster-info through the default policy.
    s = await startTestServer({ controllers: [...testControllers, 'bootstrapsigner'] });
    anonymous = s.client.anonymous();
  });
  after(async () => {
    anonymous.close();
    await s.close();
  });

  test('the server publishes its address and CA, readable by anonymous users only as cluster-info', async () => {
    const cm = await clusterInfo();
    const kubeconfig = YAML.parse(cm.data.kubeconfig);
    assert.equal(kubeconfig.clusters[0].cluster.server, s.url);
    assert.equal(Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), s.client.creds.ca);
    assertStatus(await anonymous.get(`/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps`), 403, 'Forbidden');
    assertStatus(await anonymous.put(cmPath, cm), 403, 'Forbidden');
  });

  test('a signing token gets a signature that verifies with the token, and not with a wrong one', async () => {
    await createTokenSecret(s, token, { usageSigning: true, expiration: new Date(Date.now() + 3600_000).toISOString() });
    await eventually('the signature appears', async () => (await signatureKeys()).includes('jws-kubeconfig-sig001'));
    const cm = await clusterInfo();
    const signature: string = cm.data['jws-kubeconfig-sig001'];
    assert.match(signature, /^[\w-]+\.\.[\w-]+$/, 'detached: header..signature');
    assert.deepEqual(JSON.parse(Buffer.from(signature.split('.')[0]!, 'base64url').toString()), { alg: 'HS256', kid: 'sig001' });
    assert.equal(await verifiedClusterInfo(cm, token), cm.data.kubeconfig);
    await assert.rejects(verifiedClusterInfo(cm, 'sig001.0123456789abcdee'), ClusterInfoSignatureError);
    await assert.rejects(verifiedClusterInfo(cm, 'nosig1.0123456789abcdef'), /no signature for token nosig1/);
    // A changed kubeconfig is not what was signed.
    await assert.rejects(verifiedClusterInfo({ ...cm, data: { ...cm.data, kubeconfig: `${cm.data.kubeconfig}# changed\n` } }, token), /does not verify/);
  });

  test('a token without the signing usage gets no signature; one that expires loses it', async () => {
    await createTokenSecret(s, 'nosign.0123456789abcdef');
    await createTokenSecret(s, 'expire.0123456789abcdef', { usageSigning: true, expiration: new Date(Date.now() + 1_500).toISOString() });
    // The expiring token is signed for, then (no cleaner runs here) its signature goes at its expiry.
    await eventually('the expired token\'s signature is gone', async () => {
      const keys = await signatureKeys();
      return !keys.includes('jws-kubeconfig-expire') && keys.includes('jws-kubeconfig-sig001');
    });
    assert.ok(!(await signatureKeys()).includes('jws-kubeconfig-nosign'));
    assert.equal((await s.client.get(`${secretsPath}/bootstrap-token-expire`)).status, 200, 'the secret itself stays');
  });

  test('signatures follow a changed kubeconfig, and go with their token', async () => {
    // The signer may write the ConfigMap meanwhile (a conflict): read it again and retry, as a client would.
    let changed = '';
    for (let attempt = 1; ; attempt++) {
      const cm = await clusterInfo();
      changed = `${cm.data.kubeconfig}# edited by an operator\n`;
      const r = await s.client.put(cmPath, { ...cm, data: { ...cm.data, kubeconfig: changed } });
      if (r.status === 409 && attempt < 5) continue;
      assert.equal(r.status, 200, r.text);
      break;
    }
    await eventually('the signature is renewed', async () => {
      try {
        return (await verifiedClusterInfo(await clusterInfo(), token)) === changed;
      } catch {
        return false;
      }
    });
    assert.equal((await s.client.delete(`${secretsPath}/bootstrap-token-sig001`)).status, 200);
    await eventually('the signature is removed', async () => !(await signatureKeys()).includes('jws-kubeconfig-sig001'));
  });
});
