// The built-in signers' rules, lifetimes and the cleaner's deadlines as pure
// functions: what each signer refuses, and when a request is due for removal.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCertificateRequest } from '../../../src/machinery/pkcs10.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { lifetimeMs, signerProblem } from '../../../src/controllers/csrsigners.js';
import { removalReason } from '../../../src/controllers/csrcleaner.js';
import { opensslRequest } from '../../support/csr.js';

const minute = 60_000;
const hour = 60 * minute;

describe('built-in signer rules', () => {
  const node = parseCertificateRequest(opensslRequest({ subject: '/O=system:nodes/CN=system:node:n1' }).request);
  const twoOrgs = parseCertificateRequest(opensslRequest({ subject: '/O=system:nodes/O=extra/CN=system:node:n1' }).request);
  const notNode = parseCertificateRequest(opensslRequest({ subject: '/O=system:nodes/CN=n1' }).request);
  const withIp = parseCertificateRequest(opensslRequest({ subject: '/O=system:nodes/CN=system:node:n1', extensions: ['subjectAltName=IP:10.1.2.3'] }).request);
  const withUri = parseCertificateRequest(opensslRequest({ subject: '/O=system:nodes/CN=system:node:n1', extensions: ['subjectAltName=IP:10.1.2.3,URI:spiffe://a/b'] }).request);

  test('node agent client: exactly system:nodes, a system:node: name, no subjectAltNames, exact usages (key encipherment optional)', () => {
    const signer = vocabulary.apiserverClientNodeagentSigner;
    assert.equal(signerProblem(signer, node, ['key encipherment', 'digital signature', 'client auth']), undefined);
    assert.equal(signerProblem(signer, node, ['digital signature', 'client auth']), undefined);
    assert.equal(signerProblem(signer, node, ['client auth']), 'usages did not match [client auth digital signature key encipherment]');
    assert.equal(signerProblem(signer, twoOrgs, ['digital signature', 'client auth']), 'subject organization is not system:nodes');
    assert.equal(signerProblem(signer, notNode, ['digital signature', 'client auth']), 'subject common name does not begin with system:node:');
    assert.equal(signerProblem(signer, withIp, ['digital signature', 'client auth']), 'IP subjectAltNames are not allowed');
  });

  test('node agent serving: a DNS or IP name, no URI, server auth usages', () => {
    const signer = vocabulary.nodeagentServingSigner;
    assert.equal(signerProblem(signer, withIp, ['digital signature', 'server auth']), undefined);
    assert.equal(signerProblem(signer, withUri, ['digital signature', 'server auth']), 'URI subjectAltNames are not allowed');
    assert.equal(signerProblem(signer, withIp, ['digital signature', 'client auth']), 'usages did not match [digital signature key encipherment server auth]');
  });

  test('API server client: any subject; client auth required, only signing usages besides', () => {
    const signer = vocabulary.apiserverClientSigner;
    assert.equal(signerProblem(signer, withUri, ['client auth']), undefined);
    assert.equal(signerProblem(signer, node, ['client auth', 'cert sign']), 'invalid usage for client certificate: cert sign');
  });

  test('lifetime: the smaller of the request and the signing duration, at least ten minutes', () => {
    assert.equal(lifetimeMs(undefined, 365 * 24 * hour), 365 * 24 * hour);
    assert.equal(lifetimeMs(3600, 365 * 24 * hour), hour);
    assert.equal(lifetimeMs(86_400, 2 * hour), 2 * hour);
    assert.equal(lifetimeMs(60, 2 * hour), 10 * minute);
  });
});

describe('cleaner deadlines', () => {
  const now = Date.parse('2026-01-02T12:00:00Z');
  const at = (ms: number) => new Date(now - ms).toISOString();
  const csr = (conditions: unknown[], created = at(0)) => ({ metadata: { name: 'x', creationTimestamp: created }, status: { conditions } });

  test('done requests go after an hour, counted from the condition\'s last update', () => {
    for (const type of ['Approved', 'Denied', 'Failed']) {
      assert.equal(removalReason(csr([{ type, status: 'True', lastUpdateTime: at(59 * minute) }], at(48 * hour)), now), undefined, type);
      assert.ok(removalReason(csr([{ type, status: 'True', lastUpdateTime: at(61 * minute) }]), now), type);
    }
  });

  test('pending requests go after a day; a condition of another type keeps them from counting as pending', () => {
    assert.equal(removalReason(csr([], at(23 * hour)), now), undefined);
    assert.equal(removalReason(csr([], at(25 * hour)), now), 'pending for more than a day');
    assert.equal(removalReason(csr([{ type: 'Checked', status: 'True', lastUpdateTime: at(25 * hour) }], at(25 * hour)), now), undefined);
  });
});
