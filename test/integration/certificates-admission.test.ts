// The three Certificate* admission plugins under RBAC: approving needs
// `approve` on the signer (or its domain wildcard), setting a certificate
// needs `sign`, and the API server client signer refuses system:masters.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { startTestServer, TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { csrObject, opensslRequest } from '../support/csr.js';
import { newCa } from '../support/certs.js';

const group = vocabulary.certificatesGroup;
const base = `/apis/${group}/v1/certificatesigningrequests`;
const rbac = `/apis/${vocabulary.rbacGroup}/v1`;

describe('Certificate* admission plugins', () => {
  let s: TestServer;
  const asBob = { 'Impersonate-User': 'bob' };
  const request = opensslRequest({ subject: '/CN=bob' }).request;

  const grant = async (name: string, rules: unknown[]) => {
    let r = await s.client.post(`${rbac}/clusterroles`, { apiVersion: `${vocabulary.rbacGroup}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
    assert.equal(r.status, 201, r.text);
    r = await s.client.post(`${rbac}/clusterrolebindings`, {
      apiVersion: `${vocabulary.rbacGroup}/v1`, kind: 'ClusterRoleBinding', metadata: { name },
      roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name }, subjects: [{ kind: 'User', name: 'bob', apiGroup: vocabulary.rbacGroup }],
    });
    assert.equal(r.status, 201, r.text);
  };
  const approve = async (name: string) => {
    const current = (await s.client.get(`${base}/${name}`)).json;
    return s.client.put(`${base}/${name}/approval`, { ...current, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] } }, asBob);
  };

  before(async () => {
    s = await startTestServer({ controllers: ['-csrsigning', '-csrapproving', '-csrcleaner', '*'] });
    // Upstream group names in rules work as well as ours.
    await grant('csr-requester', [
      { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: [group], resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['update'] },
    ]);
    for (const name of ['one', 'two', 'other', 'signme']) {
      const r = await s.client.post(base, csrObject(name, request, name === 'other' ? 'other.example/signer' : 'example.com/signer', ['client auth']), asBob);
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.spec.username, 'bob');
    }
  });
  after(async () => {
    await s.close();
  });

  test('approval without approve on the signer is forbidden; approve on <domain>/* allows that domain only', async () => {
    let r = await approve('one');
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, `certificatesigningrequests.${group} "one" is forbidden: user not permitted to approve requests with signerName "example.com/signer"`);
    await grant('approve-example', [{ apiGroups: [group], resources: ['signers'], verbs: ['approve'], resourceNames: ['example.com/*'] }]);
    r = await approve('one');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.conditions[0].type, 'Approved');
    r = await approve('other');
    assertStatus(r, 403, 'Forbidden');
  });

  test('approve on the exact signer name allows it', async () => {
    await grant('approve-other', [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: ['approve'], resourceNames: ['other.example/signer'] }]);
    const r = await approve('other');
    assert.equal(r.status, 200, r.text);
  });

  test('setting status.certificate needs sign on the signer; other status writes do not', async () => {
    const ca = await newCa('test-ca');
    let current = (await s.client.get(`${base}/signme`)).json;
    let r = await s.client.put(`${base}/signme/status`, { ...current, status: { conditions: [{ type: 'Checked', status: 'True' }] } }, asBob);
    assert.equal(r.status, 200, r.text);
    const withCertificate = { ...r.json, status: { ...r.json.status, certificate: Buffer.from(ca.cert).toString('base64') } };
    r = await s.client.put(`${base}/signme/status`, withCertificate, asBob);
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, `certificatesigningrequests.${group} "signme" is forbidden: user not permitted to sign requests with signerName "example.com/signer"`);
    await grant('sign-example', [{ apiGroups: [group], resources: ['signers'], verbs: ['sign'], resourceNames: ['example.com/signer'] }]);
    r = await s.client.put(`${base}/signme/status`, withCertificate, asBob);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.certificate, withCertificate.status.certificate);
    current = r.json;
    r = await s.client.put(`${base}/signme/status`, { ...current, status: { ...current.status, certificate: Buffer.from(`${ca.cert}${ca.cert}`).toString('base64') } }, asBob);
    assertStatus(r, 422, 'Invalid');
    assert.match(r.json.message, /updates may not modify existing certificate content/);
  });

  test('the API server client signer refuses a system:masters organization; other signers do not', async () => {
    const masters = opensslRequest({ subject: '/O=system:masters/CN=root' }).request;
    let r = await s.client.post(base, csrObject('masters', masters, vocabulary.apiserverClientSigner, ['client auth']));
    assertStatus(r, 403, 'Forbidden');
    assert.equal(r.json.message, `certificatesigningrequests.${group} "masters" is forbidden: use of ${vocabulary.apiserverClientSigner} signer with system:masters group is not allowed`);
    r = await s.client.post(base, csrObject('masters', masters, 'example.com/signer', ['client auth']));
    assert.equal(r.status, 201, r.text);
  });

  test('the plugins are on by default and can be turned off', async () => {
    const off = await startTestServer({ disableAdmissionPlugins: ['CertificateSubjectRestriction'], controllers: ['-csrsigning', '-csrapproving', '-csrcleaner', '*'] });
    try {
      const masters = opensslRequest({ subject: '/O=system:masters/CN=root' }).request;
      const r = await off.client.post(base, csrObject('masters', masters, vocabulary.apiserverClientSigner, ['client auth']));
      assert.equal(r.status, 201, r.text);
    } finally {
      await off.close();
    }
  });
});
