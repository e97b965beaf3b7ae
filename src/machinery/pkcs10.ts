// PKCS#10 certificate requests (RFC 2986), read synchronously so that
// validation can check one: the subject, the requested subjectAltNames and
// basic constraints, the public key, and whether the signature verifies.
// Certificates in PEM are checked here too (status.certificate).

import { createPublicKey, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { DerError, children, decodeOid, decodeString, expectTag, readTlv, tags, type Tlv } from './der.js';
import { splitPem } from './pem.js';

export interface CertificateRequestInfo {
  /** DER of the subject Name, copied as is into an issued certificate. */
  subjectDer: Uint8Array;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** The request asks for basicConstraints CA:TRUE. */
  requestsCa: boolean;
  /** SubjectPublicKeyInfo DER. */
  publicKeyDer: Uint8Array;
  publicKey: KeyObject;
}

export class CertificateRequestError extends Error {
  override name = 'CertificateRequestError';
}

const oids = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
};

/** Hash of each signature algorithm; null for EdDSA (no separate hash). SHA-1 is refused as Go refuses it. */
const signatureHashes: Record<string, string | null> = {
  '1.2.840.113549.1.1.11': 'sha256', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null, // Ed25519
};

const requestLabel = 'CERTIFICATE REQUEST';

/**
 * Parses the first PEM block of `pem` as a certificate request and verifies
 * its signature; throws CertificateRequestError with the reason otherwise.
 */
export function parseCertificateRequest(pem: Uint8Array | string): CertificateRequestInfo {
  const text = typeof pem === 'string' ? pem : Buffer.from(pem).toString('latin1');
  const block = splitPem(text)[0];
  if (!block || block.label !== requestLabel) throw new CertificateRequestError(`PEM block type must be ${requestLabel}`);
  try {
    return readRequest(block.der);
  } catch (e) {
    if (e instanceof DerError) throw new CertificateRequestError(`x509: malformed certificate request: ${e.message}`);
    throw e;
  }
}

function readRequest(der: Uint8Array): CertificateRequestInfo {
  const outer = expectTag(readTlv(der, 0), tags.sequence, 'CertificationRequest SEQUENCE');
  if (outer.end !== der.length) throw new DerError('trailing data after the request');
  const [info, algorithm, signature] = children(der, outer);
  expectTag(info, tags.sequence, 'CertificationRequestInfo SEQUENCE');
  const fields = children(der, info!);
  const subject = expectTag(fields[1], tags.sequence, 'subject Name');
  const spki = expectTag(fields[2], tags.sequence, 'SubjectPublicKeyInfo');
  const algorithmOid = decodeOid(der, expectTag(children(der, expectTag(algorithm, tags.sequence, 'signature algorithm'))[0], tags.oid, 'algorithm OID'));
  const bits = expectTag(signature, 0x03, 'signature BIT STRING');
  const publicKeyDer = der.slice(spki.offset, spki.end);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: Buffer.from(publicKeyDer), format: 'der', type: 'spki' });
  } catch {
    throw new CertificateRequestError('x509: unsupported or malformed public key');
  }
  if (!(algorithmOid in signatureHashes)) throw new CertificateRequestError(`x509: cannot verify signature: algorithm ${algorithmOid} is unsupported`);
  const signed = der.subarray(info!.offset, info!.end);
  // A BIT STRING starts with the count of unused bits, 0 for signatures.
  const signatureBytes = der.subarray(bits.start + 1, bits.end);
  let good = false;
  try {
    good = verify(signatureHashes[algorithmOid]!, signed, publicKey, signatureBytes);
  } catch {
    good = false;
  }
  if (!good) throw new CertificateRequestError('x509: signature of the certificate request does not verify');

  const request: CertificateRequestInfo = {
    subjectDer: der.slice(subject.offset, subject.end),
    commonName: '', organizations: [], dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [],
    requestsCa: false, publicKeyDer, publicKey,
  };
  readSubject(der, subject, request);
  const attributes = fields[3];
  if (attributes && attributes.tag === tags.context0) readAttributes(der, attributes, request);
  return request;
}

function readSubject(der: Uint8Array, subject: Tlv, into: CertificateRequestInfo): void {
  for (const rdn of children(der, subject)) {
    for (const attribute of children(der, expectTag(rdn, tags.set, 'RelativeDistinguishedName SET'))) {
      const [type, value] = children(der, expectTag(attribute, tags.sequence, 'AttributeTypeAndValue'));
      if (!value) continue;
      const oid = decodeOid(der, expectTag(type, tags.oid, 'attribute type'));
      if (oid === oids.commonName && into.commonName === '') into.commonName = decodeString(der, value);
      else if (oid === oids.organization) into.organizations.push(decodeString(der, value));
    }
  }
}

function readAttributes(der: Uint8Array, attributes: Tlv, into: CertificateRequestInfo): void {
  for (const attribute of children(der, attributes)) {
    const [type, values] = children(der, expectTag(attribute, tags.sequence, 'Attribute'));
    if (decodeOid(der, expectTag(type, tags.oid, 'attribute type')) !== oids.extensionRequest || !values) continue;
    for (const extensions of children(der, expectTag(values, tags.set, 'attribute values'))) {
      for (const extension of children(der, expectTag(extensions, tags.sequence, 'Extensions'))) {
        const parts = children(der, expectTag(extension, tags.sequence, 'Extension'));
        const oid = decodeOid(der, expectTag(parts[0], tags.oid, 'extension id'));
        const value = expectTag(parts[parts.length - 1], 0x04, 'extension value');
        if (oid === oids.subjectAltName) readAltNames(der, readTlv(der, value.start, value.end), into);
        else if (oid === oids.basicConstraints) into.requestsCa = readIsCa(der, readTlv(der, value.start, value.end));
      }
    }
  }
}

function readAltNames(der: Uint8Array, names: Tlv, into: CertificateRequestInfo): void {
  for (const name of children(der, expectTag(names, tags.sequence, 'GeneralNames'))) {
    const bytes = Buffer.from(der.subarray(name.start, name.end));
    switch (name.tag) {
      case 0x81: into.emailAddresses.push(bytes.toString('latin1')); break;
      case 0x82: into.dnsNames.push(bytes.toString('latin1')); break;
      case 0x86: into.uris.push(bytes.toString('latin1')); break;
      case 0x87: into.ipAddresses.push(ipText(bytes)); break;
      default: break; // other name forms are carried by no built-in signer
    }
  }
}

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
    return groups.join(':');
  }
  throw new DerError('malformed IP address in subjectAltName');
}

function readIsCa(der: Uint8Array, constraints: Tlv): boolean {
  const first = children(der, expectTag(constraints, tags.sequence, 'BasicConstraints'))[0];
  return first?.tag === 0x01 && der[first.start] !== 0;
}

/**
 * Why `pem` is not a bundle of PEM CERTIFICATE blocks (no headers, each a
 * certificate), or undefined when it is; empty input is fine, as upstream.
 */
export function certificateBundleProblem(pem: Uint8Array): string | undefined {
  if (pem.length === 0) return undefined;
  const blocks = splitPem(Buffer.from(pem).toString('latin1'));
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const block of blocks) {
    if (block.label !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.label)}`;
    if (block.hasHeaders) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(block.der);
    } catch (e) {
      return `x509: malformed certificate: ${(e as Error).message}`;
    }
  }
  return undefined;
}
