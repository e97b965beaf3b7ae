// Builds X.509 certificates. The same function makes our CA, the serving and
// admin certificates, and the certificates the CSR signers hand out. It runs
// in the certificate thread (issuer-thread.ts), which alone loads the X.509
// library.

import { createPrivateKey, randomBytes, X509Certificate as NodeCertificate } from 'node:crypto';
import { isIP } from 'node:net';
import { parseCertificateIdentity } from './identity.js';
import { importSigningKey, spkiDerOf } from './keys.js';
import { toPem } from '../machinery/pem.js';
import { splitUsages, type CertificateUsage } from '../machinery/usages.js';
import { loadX509 } from './x509-lib.js';

export interface IssueCertificateParams {
  commonName: string;
  /** Each becomes an O= attribute; the API server reads them as groups. */
  organizations?: readonly string[];
  /** The subject Name as DER, copied as is (a CSR's); replaces commonName and organizations. */
  subjectDer?: Uint8Array;
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  emailAddresses?: readonly string[];
  uris?: readonly string[];
  /** Upstream CSR usage names, e.g. `digital signature`, `server auth`. */
  usages: readonly CertificateUsage[];
  /** Sets basicConstraints CA:true. Default false. */
  isCA?: boolean;
  /** Validity length from now. Default 365. Ignored when `notAfter` is given. */
  lifetimeDays?: number;
  notAfter?: Date;
  /** Default: five minutes ago (see backdateMs). */
  notBefore?: Date;
  /** The subject's public key: SPKI PEM or DER, or any PEM a key can be taken from. */
  publicKey: string | Uint8Array;
  /** The signer's private key (PEM, any flavour). */
  issuerKeyPem: string;
  /** The signer's certificate; absent means self-signed. */
  issuerCertPem?: string;
}

/** Certificates start slightly in the past so peers with a lagging clock accept them. */
export const backdateMs = 5 * 60 * 1000;
const dayMs = 24 * 60 * 60 * 1000;

/** Returns the new certificate as PEM. Call issueCertificate (issuer-thread.ts), which runs this off the server's heap. */
export async function buildCertificate(params: IssueCertificateParams): Promise<string> {
  const x509 = await loadX509();
  const signer = await importSigningKey(params.issuerKeyPem);
  const subjectKey = typeof params.publicKey === 'string' ? spkiDerOf(params.publicKey) : new Uint8Array(params.publicKey);
  const issuer = params.issuerCertPem ? new x509.X509Certificate(params.issuerCertPem) : undefined;
  if (params.issuerCertPem && !new NodeCertificate(params.issuerCertPem).checkPrivateKey(createPrivateKey(params.issuerKeyPem))) {
    throw new Error('issuer private key does not match the issuer certificate');
  }

  const now = Date.now();
  const notBefore = params.notBefore ?? new Date(now - backdateMs);
  let notAfter = params.notAfter ?? new Date(now + (params.lifetimeDays ?? 365) * dayMs);
  // A certificate cannot outlive the one that vouches for it.
  if (params.issuerCertPem) {
    const issuerNotAfter = parseCertificateIdentity(params.issuerCertPem).notAfter;
    if (issuerNotAfter < notAfter) notAfter = issuerNotAfter;
  }

  const subject: Record<string, string[]>[] = [];
  for (const organization of params.organizations ?? []) subject.push({ O: [organization] });
  if (params.commonName) subject.push({ CN: [params.commonName] });
  const subjectName = params.subjectDer ? new x509.Name(Uint8Array.from(params.subjectDer).buffer) : new x509.Name(subject);

  const { keyUsage, extendedKeyUsages } = splitUsages(params.usages);
  const extensions: InstanceType<X509['Extension']>[] = [
    new x509.BasicConstraintsExtension(params.isCA ?? false, undefined, true),
    await x509.SubjectKeyIdentifierExtension.create(subjectKey),
  ];
  if (keyUsage !== 0) extensions.push(new x509.KeyUsagesExtension(keyUsage, true));
  if (extendedKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extendedKeyUsages));
  const altNames = [
    ...(params.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(params.ipAddresses ?? []).map((value) => {
      if (!isIP(value)) throw new Error(`not an IP address: ${JSON.stringify(value)}`);
      return { type: 'ip' as const, value };
    }),
    ...(params.emailAddresses ?? []).map((value) => ({ type: 'email' as const, value })),
    ...(params.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
  if (altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(altNames));
  if (issuer) {
    // Point at the issuer's own key identifier so chain builders can match it.
    const issuerKeyId = issuer.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    extensions.push(
      issuerKeyId
        ? new x509.AuthorityKeyIdentifierExtension(issuerKeyId)
        : await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey),
    );
  }

  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: subjectName,
    issuer: issuer ? issuer.subjectName : subjectName,
    notBefore,
    notAfter,
    publicKey: subjectKey,
    signingKey: signer.key as unknown as CryptoKey,
    signingAlgorithm: signer.algorithm,
    extensions,
  });
  return toPem('CERTIFICATE', certificate.rawData);
}

type X509 = Awaited<ReturnType<typeof loadX509>>;

/** 128 random bits, top bit cleared and next bit set: positive and always 16 bytes. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}
