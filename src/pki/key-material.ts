// The key material a server starts with. On the first start in a data folder
// everything is generated; every later start re-reads the same files (a few
// milliseconds) and generates only what is missing. Flags that name files
// replace the matching generated piece.

import { X509Certificate as NodeCertificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { product } from '../machinery/vocabulary.js';
import { ensurePrivateDir, privateFileMode, publicFileMode, readTextIfExists, writeFileAtomic } from './files.js';
import { issueCertificate } from './issuer-thread.js';
import { generateEcKeyPair, generateRsaKeyPair, normalizePrivateKeyPem, publicKeyPemOf, publicKeyPemsFrom } from './keys.js';
import { certificatePems, joinPem } from '../machinery/pem.js';

export interface KeyMaterialOptions {
  /** Serving certificate (PEM, may carry its chain); needs tlsPrivateKeyFile. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Extra CA bundle trusted for client certificates, beside our own CA. */
  clientCaFile?: string;
  /** Extra public keys that verify service-account tokens. */
  serviceAccountKeyFiles: readonly string[];
  /** Private key that signs service-account tokens instead of the generated one. */
  serviceAccountSigningKeyFile?: string;
  /** The client certificate the aggregator presents to aggregated servers, instead of the generated one; needs proxyClientKeyFile. */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
}

/** All PEM text. */
export interface KeyMaterial {
  /** Our CA: issues the generated serving and admin certificates (and later CSR certificates). */
  caCertPem: string;
  caKeyPem: string;
  /** Serving pair: from --tls-cert-file/--tls-private-key-file, else issued by our CA. */
  servingCertPem: string;
  servingKeyPem: string;
  /** Certificates that verify clients: the --client-ca-file bundle (if any) followed by our CA. */
  clientCaPem: string;
  /** CN=admin, O=system:masters, issued by our CA. */
  adminCertPem: string;
  adminKeyPem: string;
  /** PKCS#8 PEM; signs service-account tokens (RS256 for the generated RSA key). */
  serviceAccountSigningKeyPem: string;
  /** SPKI PEMs that verify service-account tokens: the signing key's own first, then the flag files'. */
  serviceAccountPublicKeyPems: string[];
  /** The aggregator's client certificate (from the flags, else `front-proxy-client`, issued by the front-proxy CA). */
  proxyClientCertPem: string;
  proxyClientKeyPem: string;
  /** The generated front-proxy CA: the request-header CA aggregated servers trust the proxy by. */
  frontProxyCaCertPem: string;
  /** Files written by this call (empty on a plain restart). */
  generated: string[];
}

export class KeyMaterialError extends Error {
  override name = 'KeyMaterialError';
}

/** Where the generated files live: `<dataDir>/pki/`, names as kubeadm uses them. */
export function keyMaterialPaths(dataDir: string) {
  const dir = join(dataDir, 'pki');
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPublicKey: join(dir, 'sa.pub'),
    frontProxyCaCert: join(dir, 'front-proxy-ca.crt'),
    frontProxyCaKey: join(dir, 'front-proxy-ca.key'),
    frontProxyClientCert: join(dir, 'front-proxy-client.crt'),
    frontProxyClientKey: join(dir, 'front-proxy-client.key'),
  };
}

type Paths = ReturnType<typeof keyMaterialPaths>;

const caLifetimeDays = 3650;
const leafLifetimeDays = 365;

/** Names the serving certificate answers to, beside loopback addresses. */
export function servingDnsNames(): string[] {
  const name = product.name;
  return ['localhost', name, `${name}.default`, `${name}.default.svc`, `${name}.default.svc.cluster.local`];
}

export async function ensureKeyMaterial(dataDir: string, options: KeyMaterialOptions): Promise<KeyMaterial> {
  // Everything named by flags is read and checked first, so a bad flag fails
  // the call before anything is generated.
  const given = await readGivenFiles(options);
  const paths = keyMaterialPaths(dataDir);
  await ensurePrivateDir(dataDir);
  await ensurePrivateDir(paths.dir);
  const generated: string[] = [];
  const writer = new PairWriter(generated);

  // The RSA key (the slow part) generates while the CA signs. Both branches
  // are awaited even when one fails, so no write outlives this call.
  const [certificates, serviceAccount, frontProxy] = await settleAll([
    ensureCertificates(paths, writer, given.serving === undefined),
    ensureServiceAccountKeys(paths, writer, given.serviceAccountSigningKey, given.serviceAccountPublicKeys),
    ensureFrontProxy(paths, writer),
  ]);
  const proxyClient = given.proxyClient ?? frontProxy.client;
  const serving = given.serving ?? certificates.serving!;

  const clientCas = [...given.clientCas];
  if (!clientCas.some((pem) => samePem(pem, certificates.ca.cert))) clientCas.push(certificates.ca.cert);

  return {
    caCertPem: certificates.ca.cert,
    caKeyPem: certificates.ca.key,
    servingCertPem: serving.cert,
    servingKeyPem: serving.key,
    clientCaPem: joinPem(clientCas),
    adminCertPem: certificates.admin.cert,
    adminKeyPem: certificates.admin.key,
    serviceAccountSigningKeyPem: serviceAccount.signingKey,
    serviceAccountPublicKeyPems: serviceAccount.publicKeys,
    proxyClientCertPem: proxyClient.cert,
    proxyClientKeyPem: proxyClient.key,
    frontProxyCaCertPem: frontProxy.ca.cert,
    generated,
  };
}

/** Like Promise.all, but settles every promise before rethrowing the first failure. */
async function settleAll<T extends readonly unknown[] | []>(values: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(values);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
  return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** The contents of every file a flag names, parsed and checked. */
async function readGivenFiles(options: KeyMaterialOptions) {
  if ((options.tlsCertFile === undefined) !== (options.tlsPrivateKeyFile === undefined)) {
    throw new KeyMaterialError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  if ((options.proxyClientCertFile === undefined) !== (options.proxyClientKeyFile === undefined)) {
    throw new KeyMaterialError('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  }
  const [serving, clientCas, serviceAccountSigningKey, serviceAccountPublicKeys, proxyClient] = await settleAll([
    options.tlsCertFile !== undefined ? readServingPair(options.tlsCertFile, options.tlsPrivateKeyFile!) : undefined,
    options.clientCaFile !== undefined ? readClientCaBundle(options.clientCaFile) : [],
    options.serviceAccountSigningKeyFile !== undefined ? readSigningKey(options.serviceAccountSigningKeyFile) : undefined,
    Promise.all(options.serviceAccountKeyFiles.map(readVerifyingKeys)).then((lists) => lists.flat()),
    options.proxyClientCertFile !== undefined ? readCertificatePair(options.proxyClientCertFile, options.proxyClientKeyFile!, ['--proxy-client-cert-file', '--proxy-client-key-file']) : undefined,
  ]);
  return { serving, clientCas, serviceAccountSigningKey, serviceAccountPublicKeys, proxyClient };
}

interface Pair {
  cert: string;
  key: string;
}

/** Our CA and the certificates it issues; leaves are only made after the CA. */
async function ensureCertificates(paths: Paths, writer: PairWriter, needServing: boolean) {
  const [ca, serving, admin] = await Promise.all([
    readPair(paths.caCert, paths.caKey),
    needServing ? readPair(paths.servingCert, paths.servingKey) : undefined,
    readPair(paths.adminCert, paths.adminKey),
  ]);
  let caPair = ca;
  if (!caPair) {
    // A leaf left over from a lost CA would no longer chain to the new one.
    const orphans = [serving && paths.servingCert, admin && paths.adminCert].filter(Boolean);
    if (orphans.length > 0) {
      throw new KeyMaterialError(
        `${paths.caCert} is missing but ${orphans.join(' and ')} ${orphans.length > 1 ? 'exist' : 'exists'}; ` +
          'restore the CA, or delete those certificates and their keys to regenerate them',
      );
    }
    caPair = await writer.write(paths.caCert, paths.caKey, createCa());
  }
  const issuer = caPair;
  const [servingPair, adminPair] = await settleAll([
    needServing ? (serving ?? writer.write(paths.servingCert, paths.servingKey, issueServing(issuer))) : undefined,
    admin ?? writer.write(paths.adminCert, paths.adminKey, issueAdmin(issuer)),
  ]);
  return { ca: issuer, serving: servingPair, admin: adminPair };
}

async function createCa(commonName = `${product.name}-ca`): Promise<Pair> {
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName,
    usages: ['digital signature', 'cert sign', 'crl sign'],
    isCA: true,
    lifetimeDays: caLifetimeDays,
    publicKey: keys.publicKeyPem,
    issuerKeyPem: keys.privateKeyPem,
  });
  return { cert, key: keys.privateKeyPem };
}

async function issueServing(ca: Pair): Promise<Pair> {
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: `${product.name}-apiserver`,
    dnsNames: servingDnsNames(),
    ipAddresses: ['127.0.0.1', '::1'],
    usages: ['digital signature', 'key encipherment', 'server auth'],
    lifetimeDays: leafLifetimeDays,
    publicKey: keys.publicKeyPem,
    issuerKeyPem: ca.key,
    issuerCertPem: ca.cert,
  });
  return { cert, key: keys.privateKeyPem };
}

function issueAdmin(ca: Pair): Promise<Pair> {
  return issueClient(ca, 'admin', ['system:masters']);
}

async function issueClient(ca: Pair, commonName: string, organizations: string[] = []): Promise<Pair> {
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName,
    ...(organizations.length ? { organizations } : {}),
    usages: ['digital signature', 'key encipherment', 'client auth'],
    lifetimeDays: leafLifetimeDays,
    publicKey: keys.publicKeyPem,
    issuerKeyPem: ca.key,
    issuerCertPem: ca.cert,
  });
  return { cert, key: keys.privateKeyPem };
}

/**
 * The front-proxy CA and the aggregator's client certificate it issues
 * (`front-proxy-client`, as kubeadm names them): aggregated servers trust
 * this CA's client certificates to carry the user in request headers.
 */
async function ensureFrontProxy(paths: Paths, writer: PairWriter): Promise<{ ca: Pair; client: Pair }> {
  const [ca, client] = await Promise.all([
    readPair(paths.frontProxyCaCert, paths.frontProxyCaKey),
    readPair(paths.frontProxyClientCert, paths.frontProxyClientKey),
  ]);
  if (!ca && client) {
    throw new KeyMaterialError(`${paths.frontProxyCaCert} is missing but ${paths.frontProxyClientCert} exists; restore the CA, or delete the certificate and its key to regenerate them`);
  }
  const caPair = ca ?? await writer.write(paths.frontProxyCaCert, paths.frontProxyCaKey, createCa(`${product.name}-front-proxy-ca`));
  const clientPair = client ?? await writer.write(paths.frontProxyClientCert, paths.frontProxyClientKey, issueClient(caPair, frontProxyClientName));
  return { ca: caPair, client: clientPair };
}

/** The common name of the generated proxy client certificate (what aggregated servers allow, as kubeadm's). */
export const frontProxyClientName = 'front-proxy-client';

/** The signing key (given, or `sa.key`) and every key that verifies tokens. */
async function ensureServiceAccountKeys(
  paths: Paths,
  writer: PairWriter,
  givenSigningKey: string | undefined,
  extraPublicKeys: readonly string[],
) {
  const signingKey = givenSigningKey ?? (await ensureOwnServiceAccountKey(paths, writer));
  const publicKeys = [publicKeyPemOf(signingKey)];
  for (const pem of extraPublicKeys) if (!publicKeys.some((known) => samePem(known, pem))) publicKeys.push(pem);
  return { signingKey, publicKeys };
}

async function ensureOwnServiceAccountKey(paths: Paths, writer: PairWriter): Promise<string> {
  const [key, publicKey] = await Promise.all([
    readTextIfExists(paths.serviceAccountKey),
    readTextIfExists(paths.serviceAccountPublicKey),
  ]);
  if (key === undefined && publicKey !== undefined) {
    throw new KeyMaterialError(
      `${paths.serviceAccountPublicKey} exists without ${paths.serviceAccountKey}; restore the key or delete both`,
    );
  }
  if (key === undefined) {
    const making = generateRsaKeyPair().then((keys) => ({ cert: keys.publicKeyPem, key: keys.privateKeyPem }));
    return (await writer.write(paths.serviceAccountPublicKey, paths.serviceAccountKey, making)).key;
  }
  // The public half is derived, not secret: writing it again changes nothing.
  if (publicKey === undefined) await writer.writeOne(paths.serviceAccountPublicKey, publicKeyPemOf(key), publicFileMode);
  return key;
}

async function readSigningKey(file: string): Promise<string> {
  const text = await readFlagFile('--service-account-signing-key-file', file);
  return asKeyMaterialError(() => normalizePrivateKeyPem(text, `--service-account-signing-key-file ${file}`));
}

async function readVerifyingKeys(file: string): Promise<string[]> {
  const text = await readFlagFile('--service-account-key-file', file);
  return asKeyMaterialError(() => publicKeyPemsFrom(text, `--service-account-key-file ${file}`));
}

function asKeyMaterialError<T>(action: () => T): T {
  try {
    return action();
  } catch (error) {
    throw error instanceof KeyMaterialError ? error : new KeyMaterialError((error as Error).message);
  }
}

function readServingPair(certFile: string, keyFile: string): Promise<Pair> {
  return readCertificatePair(certFile, keyFile, ['--tls-cert-file', '--tls-private-key-file']);
}

/** A certificate and its key from the files two flags name, checked to belong together. */
async function readCertificatePair(certFile: string, keyFile: string, [certFlag, keyFlag]: [string, string]): Promise<Pair> {
  const [cert, key] = await Promise.all([readFlagFile(certFlag, certFile), readFlagFile(keyFlag, keyFile)]);
  let matches: boolean;
  try {
    matches = new NodeCertificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch (error) {
    throw new KeyMaterialError(`${certFlag} ${certFile} / ${keyFlag} ${keyFile}: ${(error as Error).message}`);
  }
  if (!matches) throw new KeyMaterialError(`${keyFlag} ${keyFile} does not match the certificate in ${certFlag} ${certFile}`);
  return { cert, key };
}

async function readClientCaBundle(file: string): Promise<string[]> {
  const pems = certificatePems(await readFlagFile('--client-ca-file', file));
  if (pems.length === 0) throw new KeyMaterialError(`--client-ca-file ${file}: no CERTIFICATE PEM block found`);
  return pems;
}

async function readFlagFile(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new KeyMaterialError(`${flag} ${file}: ${(error as Error).message}`);
  }
}

/** Reads a cert/key pair; undefined when neither exists, an error when only one does. */
async function readPair(certPath: string, keyPath: string): Promise<Pair | undefined> {
  const [cert, key] = await Promise.all([readTextIfExists(certPath), readTextIfExists(keyPath)]);
  if (cert !== undefined && key !== undefined) return { cert, key };
  if (cert === undefined && key === undefined) return undefined;
  const [present, missing] = cert === undefined ? [keyPath, certPath] : [certPath, keyPath];
  throw new KeyMaterialError(`${present} exists but ${missing} does not; restore it or delete both to regenerate them`);
}

/** Writes generated pairs (key first, 0600) and records what it wrote. */
class PairWriter {
  constructor(private readonly generated: string[]) {}

  async write(certPath: string, keyPath: string, making: Promise<Pair>): Promise<Pair> {
    const pair = await making;
    // The key goes first: a crash between the two leaves "key without
    // certificate", which the next start reports instead of silently using.
    await this.writeOne(keyPath, pair.key, privateFileMode);
    await this.writeOne(certPath, pair.cert, publicFileMode);
    return pair;
  }

  async writeOne(path: string, text: string, mode: number): Promise<void> {
    await writeFileAtomic(path, text, mode);
    this.generated.push(path);
  }
}

function samePem(a: string, b: string): boolean {
  return a.replace(/\s+/g, '') === b.replace(/\s+/g, '');
}
