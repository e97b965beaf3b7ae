// PKCS#10 requests read synchronously: subject, subjectAltNames, the CA bit,
// and a signature that must verify; PEM certificate bundles as
// status.certificate accepts them.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { certificateBundleProblem, CertificateRequestError, parseCertificateRequest } from '../../../src/machinery/pkcs10.js';
import { splitPem, toPem } from '../../../src/machinery/pem.js';
import { opensslRequest } from '../../support/csr.js';
import { newCa } from '../../support/certs.js';

describe('parseCertificateRequest', () => {
  test('reads subject, every subjectAltName form and the CA bit from an EC request', () => {
    const { request } = opensslRequest({
      subject: '/O=a/O=b/CN=c',
      extensions: ['subjectAltName=DNS:x.example,IP:10.0.0.1,IP:fd00::1,email:e@x.example,URI:spiffe://x/y', 'basicConstraints=critical,CA:TRUE'],
    });
    const r = parseCertificateRequest(request);
    assert.deepEqual([r.commonName, r.organizations, r.dnsNames, r.ipAddresses, r.emailAddresses, r.uris, r.requestsCa],
      ['c', ['a', 'b'], ['x.example'], ['10.0.0.1', 'fd00:0:0:0:0:0:0:1'], ['e@x.example'], ['spiffe://x/y'], true]);
  });

  test('RSA and Ed25519 requests verify', () => {
    assert.equal(parseCertificateRequest(opensslRequest({ subject: '/CN=rsa', keyType: 'rsa' }).request).commonName, 'rsa');
    const ed = execFileSync('sh', ['-c', 'openssl genpkey -algorithm ed25519 | openssl req -new -key /dev/stdin -subj /CN=ed']).toString();
    assert.equal(parseCertificateRequest(ed).commonName, 'ed');
  });

  test('refuses other PEM blocks, broken DER and signatures that do not verify', () => {
    const { request } = opensslRequest({ subject: '/CN=x' });
    const der = splitPem(request)[0]!.der;
    const refused = (pem: string | Uint8Array, message: RegExp) => assert.throws(() => parseCertificateRequest(pem), (e: Error) => e instanceof CertificateRequestError && message.test(e.message));
    refused('', /^PEM block type must be CERTIFICATE REQUEST$/);
    refused(toPem('CERTIFICATE', der), /^PEM block type must be CERTIFICATE REQUEST$/);
    refused(toPem('CERTIFICATE REQUEST', der.subarray(0, der.length - 3)), /^x509: malformed certificate request/);
    refused(toPem('CERTIFICATE REQUEST', Buffer.concat([der, Buffer.from([0])])), /^x509: malformed certificate request/);
    // The subject's CN is signed: changing one letter breaks the signature.
    const changed = Buffer.from(der);
    // commonName's OID (2.5.4.3), then the string's tag and length, then its one letter.
    changed[changed.indexOf(Buffer.from([0x55, 0x04, 0x03])) + 5] = 'y'.charCodeAt(0);
    refused(toPem('CERTIFICATE REQUEST', changed), /^x509: signature of the certificate request does not verify$/);
  });
});

describe('certificateBundleProblem', () => {
  test('accepts CERTIFICATE blocks with text around them, refuses headers, other blocks and garbage', async () => {
    const { cert } = await newCa('bundle');
    assert.equal(certificateBundleProblem(Buffer.alloc(0)), undefined);
    assert.equal(certificateBundleProblem(Buffer.from(`intro\n${cert}between\n${cert}`)), undefined);
    const withHeaders = cert.replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\n\n');
    assert.equal(certificateBundleProblem(Buffer.from(withHeaders)), 'no PEM block headers are permitted');
    assert.equal(certificateBundleProblem(Buffer.from(toPem('CERTIFICATE', Buffer.from('nonsense')))) !== undefined, true);
    assert.equal(certificateBundleProblem(Buffer.from('-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n')), 'only CERTIFICATE PEM blocks are allowed, found "RSA PRIVATE KEY"');
  });
});
