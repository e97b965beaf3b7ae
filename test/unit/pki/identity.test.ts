import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { DerError, generateEcKeyPair, issueCertificate, parseCertificateIdentity, splitPem } from '../../../src/pki/index.js';

describe('parseCertificateIdentity', async () => {
  const keys = await generateEcKeyPair();
  const selfSigned = (params: { commonName: string; organizations?: string[]; notAfter?: Date }) =>
    issueCertificate({ ...params, usages: ['client auth'], publicKey: keys.publicKeyPem, issuerKeyPem: keys.privateKeyPem });

  it('reads CN, every O in order, and validity from PEM and DER', async () => {
    const pem = await selfSigned({ commonName: 'jane', organizations: ['system:authenticated', 'devs', 'ops'] });
    const node = new X509Certificate(pem);
    for (const input of [pem, node.raw, new Uint8Array(node.raw), Buffer.from(pem)]) {
      const identity = parseCertificateIdentity(input);
      assert.equal(identity.commonName, 'jane');
      assert.deepEqual(identity.organizations, ['system:authenticated', 'devs', 'ops']);
      assert.equal(identity.notBefore.getTime(), Date.parse(node.validFrom));
      assert.equal(identity.notAfter.getTime(), Date.parse(node.validTo));
    }
  });

  it('decodes UTF-8 names and GeneralizedTime dates past 2049', async () => {
    const notAfter = new Date('2061-03-04T05:06:07Z');
    const pem = await selfSigned({ commonName: 'Zoë Ångström', organizations: ['équipe'], notAfter });
    const identity = parseCertificateIdentity(pem);
    assert.equal(identity.commonName, 'Zoë Ångström');
    assert.deepEqual(identity.organizations, ['équipe']);
    assert.equal(identity.notAfter.toISOString(), notAfter.toISOString());
  });

  it('gives an empty name and no groups for a certificate without them', async () => {
    const identity = parseCertificateIdentity(await selfSigned({ commonName: '' }));
    assert.equal(identity.commonName, '');
    assert.deepEqual(identity.organizations, []);
  });

  it('takes the first certificate of a bundle, skipping keys', async () => {
    const first = await selfSigned({ commonName: 'first' });
    const second = await selfSigned({ commonName: 'second' });
    assert.equal(parseCertificateIdentity(keys.privateKeyPem + first + second).commonName, 'first');
    assert.equal(splitPem(first + second).length, 2);
  });

  it('throws DerError on anything else', () => {
    for (const input of ['', 'not pem', keys.publicKeyPem, new Uint8Array([0x30, 0x05, 0x02]), new Uint8Array([0x04, 0x00])]) {
      assert.throws(() => parseCertificateIdentity(input), DerError);
    }
    // A public key is a valid SEQUENCE, but not a certificate.
    const spki = splitPem(keys.publicKeyPem)[0]!.der;
    assert.throws(() => parseCertificateIdentity(spki), DerError);
  });
});
