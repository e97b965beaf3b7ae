import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { generateEcKeyPair, generateRsaKeyPair, issueCertificate, parseCertificateIdentity, splitUsages } from '../../../src/pki/index.js';

describe('issueCertificate', async () => {
  const caKeys = await generateEcKeyPair();
  const caPem = await issueCertificate({
    commonName: 'test-ca',
    usages: ['cert sign', 'crl sign'],
    isCA: true,
    lifetimeDays: 30,
    publicKey: caKeys.publicKeyPem,
    issuerKeyPem: caKeys.privateKeyPem,
  });
  const ca = new X509Certificate(caPem);
  const leafKeys = await generateEcKeyPair();

  it('maps upstream CSR usage names onto key usage and extended key usage', async () => {
    const pem = await issueCertificate({
      commonName: 'node-1',
      organizations: ['system:nodes'],
      usages: ['signing', 'key encipherment', 'server auth', 'client auth', 'client auth'],
      publicKey: leafKeys.publicKeyPem,
      issuerKeyPem: caKeys.privateKeyPem,
      issuerCertPem: caPem,
    });
    const cert = new X509Certificate(pem);
    assert.ok(cert.checkIssued(ca));
    assert.ok(cert.verify(ca.publicKey));
    assert.deepEqual(cert.keyUsage?.sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    assert.deepEqual(splitUsages(['signing', 'key encipherment', 'cert sign']), { keyUsage: 1 | 4 | 32, extendedKeyUsages: [] });
    assert.throws(() => splitUsages(['flying' as never]), /unknown certificate usage "flying"/);
  });

  it('never outlives its issuer', async () => {
    const pem = await issueCertificate({
      commonName: 'long',
      usages: ['client auth'],
      lifetimeDays: 3650,
      publicKey: leafKeys.publicKeyPem,
      issuerKeyPem: caKeys.privateKeyPem,
      issuerCertPem: caPem,
    });
    assert.equal(parseCertificateIdentity(pem).notAfter.getTime(), parseCertificateIdentity(caPem).notAfter.getTime());
  });

  it('starts a few minutes in the past for clock skew', async () => {
    const before = Date.now();
    const pem = await issueCertificate({
      commonName: 'now',
      usages: ['client auth'],
      publicKey: leafKeys.publicKeyPem,
      issuerKeyPem: caKeys.privateKeyPem,
      issuerCertPem: caPem,
    });
    const { notBefore } = parseCertificateIdentity(pem);
    assert.ok(notBefore.getTime() <= before - 4 * 60 * 1000);
  });

  it('signs with RSA issuers and SEC1/PKCS#1 key files, and certifies RSA keys', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaKeyPem = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const rsaCa = await issueCertificate({
      commonName: 'rsa-ca',
      usages: ['cert sign'],
      isCA: true,
      publicKey: rsaKeyPem,
      issuerKeyPem: rsaKeyPem,
    });
    const subject = await generateRsaKeyPair();
    const leaf = new X509Certificate(
      await issueCertificate({
        commonName: 'rsa-leaf',
        usages: ['client auth'],
        publicKey: subject.publicKeyPem,
        issuerKeyPem: rsaKeyPem,
        issuerCertPem: rsaCa,
      }),
    );
    assert.ok(leaf.verify(new X509Certificate(rsaCa).publicKey));
    assert.equal(leaf.publicKey.asymmetricKeyType, 'rsa');

    const ec = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    const sec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const p384 = new X509Certificate(
      await issueCertificate({ commonName: 'p384', usages: ['cert sign'], isCA: true, publicKey: sec1, issuerKeyPem: sec1 }),
    );
    assert.ok(p384.verify(p384.publicKey));
  });

  it('accepts the subject key as SPKI DER', async () => {
    const der = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
    const pem = await issueCertificate({
      commonName: 'der',
      usages: ['client auth'],
      publicKey: new Uint8Array(der),
      issuerKeyPem: caKeys.privateKeyPem,
      issuerCertPem: caPem,
    });
    assert.ok(new X509Certificate(pem).publicKey.equals(ca.publicKey));
  });

  it('rejects an issuer key that does not belong to the issuer certificate, and bad IPs', async () => {
    const base = { commonName: 'x', usages: ['client auth'] as const, publicKey: leafKeys.publicKeyPem, issuerCertPem: caPem };
    await assert.rejects(
      issueCertificate({ ...base, issuerKeyPem: leafKeys.privateKeyPem }),
      /issuer private key does not match the issuer certificate/,
    );
    await assert.rejects(
      issueCertificate({ ...base, issuerKeyPem: caKeys.privateKeyPem, ipAddresses: ['localhost'] }),
      /not an IP address: "localhost"/,
    );
  });

  it('builds certificates asked for together, and again once the certificate thread has ended for idleness', async () => {
    const ask = (cn: string) => issueCertificate({
      commonName: cn, usages: ['client auth'], publicKey: leafKeys.publicKeyPem, issuerKeyPem: caKeys.privateKeyPem, issuerCertPem: caPem,
    });
    const together = await Promise.all(['a', 'b', 'c'].map(ask));
    assert.deepEqual(together.map((pem) => parseCertificateIdentity(pem).commonName), ['a', 'b', 'c']);
    // The thread ends after a quarter of a second without work; the next certificate starts a new one.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const later = new X509Certificate(await ask('d'));
    assert.ok(later.checkIssued(ca));
    assert.ok(later.verify(ca.publicKey));
  });
});
