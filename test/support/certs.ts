// Certificates for authentication tests: a CA of the test's own, the server's
// CA read from its data folder, and client certificates issued by either.

import { readFile } from 'node:fs/promises';
import { generateEcKeyPair, issueCertificate, keyMaterialPaths, type CertificateUsage } from '../../src/pki/index.js';

export interface CertPair {
  cert: string;
  key: string;
}

/** A self-signed CA no server trusts. */
export async function newCa(commonName: string): Promise<CertPair> {
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName, usages: ['digital signature', 'cert sign', 'crl sign'], isCA: true,
    publicKey: keys.publicKeyPem, issuerKeyPem: keys.privateKeyPem,
  });
  return { cert, key: keys.privateKeyPem };
}

/** The CA a server generated in its data folder (it verifies client certificates). */
export async function serverCa(dataDir: string): Promise<CertPair> {
  const paths = keyMaterialPaths(dataDir);
  return { cert: await readFile(paths.caCert, 'utf8'), key: await readFile(paths.caKey, 'utf8') };
}

export interface ClientCertOptions {
  /** Each becomes an O= attribute, read as a group. */
  organizations?: string[];
  /** Default: a year from now. A date in the past makes an expired certificate. */
  notAfter?: Date;
  /** Default: digital signature, key encipherment, client auth. */
  usages?: CertificateUsage[];
}

/** A client certificate with CN `commonName`, signed by `ca`. */
export async function clientCert(ca: CertPair, commonName: string, options: ClientCertOptions = {}): Promise<CertPair> {
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName,
    organizations: options.organizations,
    usages: options.usages ?? ['digital signature', 'key encipherment', 'client auth'],
    notAfter: options.notAfter,
    publicKey: keys.publicKeyPem,
    issuerKeyPem: ca.key,
    issuerCertPem: ca.cert,
  });
  return { cert, key: keys.privateKeyPem };
}
