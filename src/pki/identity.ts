// Who a client certificate says it is: CommonName is the user, each
// Organization a group (the upstream x509 authenticator's mapping).

import { DerError, children, decodeOid, decodeString, decodeTime, expectTag, readTlv, tags, type Tlv } from '../machinery/der.js';
import { splitPem } from '../machinery/pem.js';

export interface CertificateIdentity {
  commonName: string;
  organizations: string[];
  notBefore: Date;
  notAfter: Date;
}

const commonNameOid = '2.5.4.3';
const organizationOid = '2.5.4.10';

/**
 * Reads subject and validity from a certificate given as PEM text (the first
 * CERTIFICATE block) or DER bytes. Throws on anything that is not one.
 */
export function parseCertificateIdentity(pemOrDer: string | Uint8Array): CertificateIdentity {
  const der = toDer(pemOrDer);
  const certificate = expectTag(readTlv(der, 0), tags.sequence, 'Certificate SEQUENCE');
  const tbs = expectTag(children(der, certificate)[0], tags.sequence, 'TBSCertificate SEQUENCE');
  const fields = children(der, tbs);
  // [0] version is optional (absent means v1); serial and signature follow.
  const at = fields[0]?.tag === tags.context0 ? 1 : 0;
  const validity = expectTag(fields[at + 3], tags.sequence, 'Validity SEQUENCE');
  const subject = expectTag(fields[at + 4], tags.sequence, 'subject Name');
  const [notBefore, notAfter] = children(der, validity);
  if (!notBefore || !notAfter) throw new DerError('certificate validity is incomplete');

  const identity: CertificateIdentity = {
    commonName: '',
    organizations: [],
    notBefore: decodeTime(der, notBefore),
    notAfter: decodeTime(der, notAfter),
  };
  for (const [oid, value] of nameAttributes(der, subject)) {
    // Several CNs are unusual; the first one wins, as in Go's pkix.Name.
    if (oid === commonNameOid && identity.commonName === '') identity.commonName = value;
    else if (oid === organizationOid) identity.organizations.push(value);
  }
  return identity;
}

/** (type OID, value) pairs of a Name, in encoding order. */
function* nameAttributes(der: Uint8Array, name: Tlv): Generator<[string, string]> {
  for (const rdn of children(der, name)) {
    expectTag(rdn, tags.set, 'RelativeDistinguishedName SET');
    for (const attribute of children(der, rdn)) {
      const [type, value] = children(der, expectTag(attribute, tags.sequence, 'AttributeTypeAndValue'));
      if (!value) continue;
      const oid = decodeOid(der, expectTag(type, tags.oid, 'attribute type'));
      if (oid === commonNameOid || oid === organizationOid) yield [oid, decodeString(der, value)];
    }
  }
}

function toDer(pemOrDer: string | Uint8Array): Uint8Array {
  const looksLikePem =
    typeof pemOrDer === 'string' || Buffer.from(pemOrDer.subarray(0, 11)).toString('latin1') === '-----BEGIN ';
  if (!looksLikePem) return pemOrDer;
  const text = typeof pemOrDer === 'string' ? pemOrDer : Buffer.from(pemOrDer).toString('latin1');
  const block = splitPem(text).find((candidate) => candidate.label === 'CERTIFICATE');
  if (!block) throw new DerError('no CERTIFICATE block in PEM input');
  return block.der;
}
