// Certificate signing requests end to end: openssl makes keys and requests,
// kubectl (and raw HTTP, and kubectl patch --subresource=approval) approves or
// denies, the signing controller issues from the cluster CA, and the issued
// certificate verifies against that CA, carries the requested identity,
// usages and lifetime, and authenticates to the server as that user.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { renderKubeconfig } from '../../src/pki/index.js';
import { runKubectl, startTestServer, tempDir, TestServer } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';
import { serverCa, newCa, type CertPair } from '../support/certs.js';
import { csrObject, opensslRequest, opensslText, opensslVerifies } from '../support/csr.js';

const base = `/apis/${vocabulary.certificatesGroup}/v1/certificatesigningrequests`;
const clientUsages = ['digital signature', 'key encipherment', 'client auth'];
const minute = 60_000;

describe('certificate signing requests end to end', () => {
  let s: TestServer;
  let ca: CertPair;

  const create = async (name: string, request: string, signerName: string, usages: string[], extra: Record<string, unknown> = {}, headers?: Record<string, string>) => {
    const r = await s.client.post(base, csrObject(name, request, signerName, usages, extra), headers);
    assert.equal(r.status, 201, r.text);
    return r.json;
  };
  const issued = (name: string) => eventually(`a certificate for ${name}`, async () => {
    const csr = (await s.client.get(`${base}/${name}`)).json;
    return csr.status?.certificate ? Buffer.from(csr.status.certificate, 'base64').toString() : undefined;
  });
  const failed = (name: string) => eventually(`the Failed condition of ${name}`, async () => {
    const csr = (await s.client.get(`${base}/${name}`)).json;
    return (csr.status?.conditions ?? []).find((c: any) => c.type === 'Failed');
  });
  const approveRaw = async (name: string) => {
    const csr = (await s.client.get(`${base}/${name}`)).json;
    const r = await s.client.put(`${base}/${name}/approval`, { ...csr, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'RawHttp', message: 'by test' }] } });
    assert.equal(r.status, 200, r.text);
  };
  const lifetimeMs = (pem: string) => {
    const cert = new X509Certificate(pem);
    return Date.parse(cert.validTo) - Date.parse(cert.validFrom);
  };

  before(async () => {
    s = await startTestServer();
    ca = await serverCa(s.dataDir);
  });
  after(async () => {
    await s.close();
  });

  test('kubectl certificate approve: the certificate verifies, names the user, has the usages and the requested lifetime, and authenticates', async () => {
    const jane = opensslRequest({ subject: '/O=dev/O=qa/CN=jane', keyType: 'rsa' });
    const manifest = JSON.stringify({ ...csrObject('jane', jane.request, vocabulary.apiserverClientSigner, clientUsages, { expirationSeconds: 3600 }), apiVersion: 'certificates.k8s.io/v1' });
    const created = await s.kubectl(['create', '-f', '-'], manifest);
    assert.equal(created.code, 0, created.stderr);
    const approved = await s.kubectl(['certificate', 'approve', 'jane']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /jane approved/);
    const pem = await issued('jane');
    assert.ok(opensslVerifies(pem, ca.cert, 'sslclient'), 'verifies against the cluster CA for client auth');
    const text = opensslText(pem);
    assert.match(text, /Subject: O ?= ?dev, O ?= ?qa, CN ?= ?jane/);
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    assert.match(text, /X509v3 Extended Key Usage:\s+TLS Web Client Authentication/);
    assert.match(text, /CA:FALSE/);
    // Short lifetimes start backdated by five minutes and end when asked.
    assert.equal(lifetimeMs(pem), 60 * minute + 5 * minute);
    const got = await s.kubectl(['get', 'csr', 'jane']);
    assert.deepEqual(got.stdout.trim().split('\n')[1]!.split(/\s+/).slice(2), [vocabulary.apiserverClientSigner, 'admin', '60m', 'Approved,Issued']);

    // The certificate and its key authenticate as jane, groups from the organizations.
    const client = new TestClient({ server: s.client.creds.server, ca: s.client.creds.ca, cert: pem, key: jane.key });
    try {
      const review = await client.post(`/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' });
      assert.equal(review.status, 201, review.text);
      assert.equal(review.json.status.userInfo.username, 'jane');
      assert.deepEqual(review.json.status.userInfo.groups, ['dev', 'qa', 'system:authenticated']);
    } finally {
      client.close();
    }
    const kubeconfig = join(tempDir(), 'jane.kubeconfig');
    writeFileSync(kubeconfig, renderKubeconfig({ server: s.url, caPem: ca.cert, certPem: pem, keyPem: jane.key, user: 'jane' }));
    const whoami = await runKubectl(kubeconfig, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.equal(whoami.stdout, 'jane');
  });

  test('kubectl certificate deny: no certificate, and the condition says so', async () => {
    await create('denied', opensslRequest({ subject: '/CN=nobody' }).request, vocabulary.apiserverClientSigner, clientUsages);
    const denied = await s.kubectl(['certificate', 'deny', 'denied']);
    assert.equal(denied.code, 0, denied.stderr);
    const csr = (await s.client.get(`${base}/denied`)).json;
    assert.deepEqual(csr.status.conditions.map((c: any) => [c.type, c.status]), [['Denied', 'True']]);
    // A denied request cannot be approved afterwards.
    const again = await s.kubectl(['certificate', 'approve', 'denied']);
    assert.notEqual(again.code, 0);
    assert.equal((await s.client.get(`${base}/denied`)).json.status.certificate, undefined);
  });

  test('approval by raw HTTP and by kubectl patch --subresource=approval; lifetime is capped by the signing duration', async () => {
    const raw = opensslRequest({ subject: '/CN=raw' });
    await create('raw', raw.request, vocabulary.apiserverClientSigner, ['client auth']);
    await approveRaw('raw');
    const rawPem = await issued('raw');
    // No expirationSeconds: the signing duration (a year), ending backdated so it lasts exactly that.
    assert.equal(lifetimeMs(rawPem), 365 * 24 * 60 * minute);
    const patched = opensslRequest({ subject: '/CN=patched' });
    await create('patched', patched.request, vocabulary.apiserverClientSigner, ['client auth', 'digital signature'], { expirationSeconds: 600 });
    const patch = JSON.stringify({ status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlPatch', message: 'patched' }] } });
    const r = await s.kubectl(['patch', 'csr', 'patched', '--subresource=approval', '--type=merge', '-p', patch]);
    assert.equal(r.code, 0, r.stderr);
    const pem = await issued('patched');
    assert.equal(lifetimeMs(pem), 15 * minute);
    assert.match(opensslText(pem), /Subject: CN ?= ?patched/);
  });

  test('the node agent signers: subject and usage rules; failures set the Failed condition', async () => {
    const cases: [string, string[], string, string[], string][] = [
      ['node-san', ['subjectAltName=DNS:n1.example'], vocabulary.apiserverClientNodeagentSigner, clientUsages, 'DNS subjectAltNames are not allowed'],
      ['node-org', [], vocabulary.apiserverClientNodeagentSigner, clientUsages, 'subject organization is not system:nodes'],
      ['node-usages', [], vocabulary.apiserverClientNodeagentSigner, ['client auth', 'digital signature', 'key encipherment', 'server auth'], 'usages did not match [client auth digital signature key encipherment]'],
      ['serving-no-san', [], vocabulary.nodeagentServingSigner, ['digital signature', 'key encipherment', 'server auth'], 'DNS or IP subjectAltName is required'],
      ['serving-email', ['subjectAltName=DNS:n1.example,email:a@b.example'], vocabulary.nodeagentServingSigner, ['digital signature', 'key encipherment', 'server auth'], 'Email subjectAltNames are not allowed'],
      ['client-server-auth', [], vocabulary.apiserverClientSigner, ['client auth', 'server auth'], 'invalid usage for client certificate: server auth'],
      ['client-no-client-auth', [], vocabulary.apiserverClientSigner, ['digital signature'], 'missing required usage for client certificate: client auth'],
      ['wants-ca', ['basicConstraints=critical,CA:TRUE'], vocabulary.apiserverClientSigner, ['client auth'], 'CA certificates are not allowed: the request asks for basicConstraints CA:TRUE'],
    ];
    for (const [name, extensions, signer, usages] of cases) {
      const subject = name === 'node-org' ? '/CN=system:node:n1' : name.startsWith('node') || name.startsWith('serving') ? '/O=system:nodes/CN=system:node:n1' : `/CN=${name}`;
      await create(name, opensslRequest({ subject, extensions }).request, signer, usages);
      await approveRaw(name);
    }
    for (const [name, , , , message] of cases) {
      const condition = await failed(name);
      assert.deepEqual([condition.status, condition.reason, condition.message], ['True', 'SignerValidationFailure', message], name);
      assert.equal((await s.client.get(`${base}/${name}`)).json.status.certificate, undefined);
    }
    const got = await s.kubectl(['get', 'csr', 'wants-ca']);
    assert.match(got.stdout, /Approved,Failed/);
  });

  test('the node agent serving signer issues for DNS and IP names with server auth', async () => {
    await create('serving', opensslRequest({ subject: '/O=system:nodes/CN=system:node:n1', extensions: ['subjectAltName=DNS:n1.example,IP:10.0.0.7'] }).request,
      vocabulary.nodeagentServingSigner, ['digital signature', 'server auth']);
    await approveRaw('serving');
    const pem = await issued('serving');
    assert.ok(opensslVerifies(pem, ca.cert, 'sslserver'));
    const text = opensslText(pem);
    assert.match(text, /DNS:n1\.example, IP Address:10\.0\.0\.7/);
    assert.match(text, /TLS Web Server Authentication/);
  });

  test('requests for other signers are left alone', async () => {
    await create('external', opensslRequest({ subject: '/CN=ext' }).request, 'example.com/external', ['client auth']);
    await approveRaw('external');
    // The built-in signer has seen it by the time a later built-in request is issued.
    await create('marker', opensslRequest({ subject: '/CN=marker' }).request, vocabulary.apiserverClientSigner, ['client auth']);
    await approveRaw('marker');
    await issued('marker');
    const csr = (await s.client.get(`${base}/external`)).json;
    assert.equal(csr.status.certificate, undefined);
    assert.deepEqual(csr.status.conditions.map((c: any) => c.type), ['Approved']);
  });

  test('auto-approval: node agent client requests of requesters allowed nodeclient or selfnodeclient', async () => {
    const bind = async (name: string, role: string, subject: Record<string, string>) => {
      const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
      const r = await s.client.post(`${rbac}/clusterrolebindings`, {
        apiVersion: `${vocabulary.rbacGroup}/v1`, kind: 'ClusterRoleBinding', metadata: { name },
        roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: vocabulary.rbacGroup, ...subject }],
      });
      assert.equal(r.status, 201, r.text);
    };
    const certs = vocabulary.certificatesGroup;
    await bind('bootstrappers', 'system:node-bootstrapper', { kind: 'Group', name: 'bootstrappers' });
    await bind('bootstrappers-nodeclient', `system:${certs}:certificatesigningrequests:nodeclient`, { kind: 'Group', name: 'bootstrappers' });
    await bind('nodes-requests', 'system:node-bootstrapper', { kind: 'Group', name: 'system:nodes' });
    await bind('strangers-requests', 'system:node-bootstrapper', { kind: 'Group', name: 'strangers' });
    await bind('nodes-selfnodeclient', `system:${certs}:certificatesigningrequests:selfnodeclient`, { kind: 'Group', name: 'system:nodes' });
    const nodeRequest = (node: string) => opensslRequest({ subject: `/O=system:nodes/CN=system:node:${node}` }).request;
    const as = (user: string, group: string) => ({ 'Impersonate-User': user, 'Impersonate-Group': group });

    await create('bootstrap-n2', nodeRequest('n2'), vocabulary.apiserverClientNodeagentSigner, clientUsages, {}, as('bootstrap-token-abc', 'bootstrappers'));
    await create('renew-n3', nodeRequest('n3'), vocabulary.apiserverClientNodeagentSigner, clientUsages, {}, as('system:node:n3', 'system:nodes'));
    await create('other-node', nodeRequest('n4'), vocabulary.apiserverClientNodeagentSigner, clientUsages, {}, as('system:node:n3', 'system:nodes'));
    await create('stranger', nodeRequest('n5'), vocabulary.apiserverClientNodeagentSigner, clientUsages, {}, as('stranger', 'strangers'));
    for (const [name, message] of [['bootstrap-n2', 'Auto approving node agent client certificate after SubjectAccessReview.'], ['renew-n3', 'Auto approving self node agent client certificate after SubjectAccessReview.']]) {
      const pem = await issued(name!);
      assert.ok(opensslVerifies(pem, ca.cert));
      const approvedBy = (await s.client.get(`${base}/${name}`)).json.status.conditions.find((c: any) => c.type === 'Approved');
      assert.deepEqual([approvedBy.reason, approvedBy.message], ['AutoApproved', message]);
    }
    // Neither the self rule (another node's name) nor nodeclient (not held) approves these.
    await create('later', nodeRequest('n6'), vocabulary.apiserverClientNodeagentSigner, clientUsages, {}, as('bootstrap-token-def', 'bootstrappers'));
    await issued('later');
    for (const name of ['other-node', 'stranger']) {
      assert.equal((await s.client.get(`${base}/${name}`)).json.status?.conditions, undefined, name);
    }
  });
});

describe('--cluster-signing-* options', () => {
  test('a certificate without its key, or with another key, stops the start-up with the reason', async () => {
    const dir = tempDir();
    const one = await newCa('one');
    const two = await newCa('two');
    writeFileSync(join(dir, 'one.crt'), one.cert);
    writeFileSync(join(dir, 'two.key'), two.key);
    await assert.rejects(startTestServer({ clusterSigningCertFile: join(dir, 'one.crt') }), /--cluster-signing-cert-file and --cluster-signing-key-file must be given together/);
    await assert.rejects(startTestServer({ clusterSigningCertFile: join(dir, 'one.crt'), clusterSigningKeyFile: join(dir, 'two.key') }), /the key in .*two\.key does not belong to the certificate in .*one\.crt/);
  });

  test('another CA signs, and the signing duration caps requested lifetimes', async () => {
    const dir = tempDir();
    const other = await newCa('other-signing-ca');
    writeFileSync(join(dir, 'ca.crt'), other.cert);
    writeFileSync(join(dir, 'ca.key'), other.key);
    const s = await startTestServer({ clusterSigningCertFile: join(dir, 'ca.crt'), clusterSigningKeyFile: join(dir, 'ca.key'), clusterSigningDurationMs: 2 * 60 * minute });
    try {
      const r = await s.client.post(base, csrObject('capped', opensslRequest({ subject: '/CN=capped' }).request, vocabulary.apiserverClientSigner, ['client auth'], { expirationSeconds: 86_400 }));
      assert.equal(r.status, 201, r.text);
      const approval = await s.client.put(`${base}/capped/approval`, { ...r.json, status: { conditions: [{ type: 'Approved', status: 'True' }] } });
      assert.equal(approval.status, 200, approval.text);
      const pem = await eventually('a certificate', async () => {
        const csr = (await s.client.get(`${base}/capped`)).json;
        return csr.status?.certificate ? Buffer.from(csr.status.certificate, 'base64').toString() : undefined;
      });
      assert.ok(opensslVerifies(pem, other.cert));
      assert.ok(!opensslVerifies(pem, (await serverCa(s.dataDir)).cert));
      const cert = new X509Certificate(pem);
      assert.equal(Date.parse(cert.validTo) - Date.parse(cert.validFrom), 2 * 60 * minute + 5 * minute);
    } finally {
      await s.close();
    }
  });
});
