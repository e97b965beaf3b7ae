// Joining a cluster with nothing but its address and a bootstrap token, as
// a node agent does: read the public cluster-info ConfigMap anonymously,
// trust its server address and CA only once the token's HS256 signature of
// it verifies, then ask for a client certificate with a
// CertificateSigningRequest made with the token, wait for it to be issued,
// and write a kubeconfig that uses it.

import { createHash, webcrypto } from 'node:crypto';
import YAML from 'yaml';
import { loadX509 } from '../pki/x509-lib.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { clusterInfo, parseBootstrapToken } from '../machinery/bootstraptoken.js';
import { ClusterInfoSignatureError, verifiedClusterInfo } from './clusterinfo.js';
import { RemoteClient, StatusError, type RemoteClientOptions } from './remote.js';
import type { ApiObject } from './types.js';

export interface TrustedCluster {
  /** The server address cluster-info names. */
  server: string;
  caPem: string;
  /** The verified kubeconfig document, as cluster-info holds it. */
  kubeconfig: string;
}

/**
 * Reads cluster-info from `server` without credentials and checks its
 * signature for `token`. The TLS certificate is not checked on this one
 * request (the server's CA is what it is about to learn); the signature is
 * what makes the answer trustworthy, so nothing in it is used unless it verifies.
 */
export async function discoverCluster(server: string, token: string, options: RemoteClientOptions = {}): Promise<TrustedCluster> {
  if (!parseBootstrapToken(token)) throw new ClusterInfoSignatureError('the token is not a bootstrap token (<6 characters>.<16 characters>)');
  const anonymous = new RemoteClient({ server, namespace: vocabulary.publicNamespace, insecureSkipTlsVerify: true }, options);
  let configMap: ApiObject;
  try {
    configMap = await anonymous.requestJson('GET', `/api/v1/namespaces/${clusterInfo.namespace}/configmaps/${clusterInfo.name}`);
  } finally {
    anonymous.close();
  }
  const kubeconfig = await verifiedClusterInfo(configMap, token);
  const doc: unknown = YAML.parse(kubeconfig);
  const cluster = (doc as { clusters?: { cluster?: Record<string, unknown> }[] } | null)?.clusters?.[0]?.cluster;
  const address = cluster?.server;
  const caData = cluster?.['certificate-authority-data'];
  if (typeof address !== 'string' || typeof caData !== 'string') throw new ClusterInfoSignatureError('the signed cluster-info names no server and CA');
  return { server: address, caPem: Buffer.from(caData, 'base64').toString('utf8'), kubeconfig };
}

export interface NodeAgentCredentials {
  certPem: string;
  keyPem: string;
  /** A kubeconfig for the node agent with the issued certificate and key. */
  kubeconfig: string;
  /** The CertificateSigningRequest's name. */
  requestName: string;
}

export interface NodeAgentBootstrapOptions extends RemoteClientOptions {
  /** How long to wait for approval and issuance; 5 minutes by default. */
  timeoutMs?: number;
  /** The certificate's requested lifetime (expirationSeconds), if any. */
  expirationSeconds?: number;
}

const toPem = (label: string, der: ArrayBuffer) => `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;

/**
 * The node-agent flow: a new P-256 key, a CSR for `system:node:<nodeName>` in
 * `system:nodes` to the node-agent client signer, created with the bootstrap
 * token; resolves once the certificate is issued (rejects when the request is
 * denied or fails, or after `timeoutMs`).
 */
export async function bootstrapNodeAgent(cluster: TrustedCluster, token: string, nodeName: string, options: NodeAgentBootstrapOptions = {}): Promise<NodeAgentCredentials> {
  const x509 = await loadX509();
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']) as CryptoKeyPair;
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ O: ['system:nodes'] }, { CN: [`system:node:${nodeName}`] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  const keyPem = toPem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  // Named after the key, as upstream's node agent names its requests: a retry with the same key finds its own request.
  const requestName = `node-csr-${createHash('sha256').update(Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey))).digest('base64url').slice(0, 43)}`;
  const client = new RemoteClient({ server: cluster.server, caPem: cluster.caPem, token, namespace: 'default' }, options);
  try {
    const csrs = await client.resource({ group: vocabulary.certificatesGroup, resource: 'certificatesigningrequests', version: 'v1' });
    const spec: Record<string, unknown> = {
      request: Buffer.from(request.toString('pem')).toString('base64'),
      signerName: vocabulary.apiserverClientNodeagentSigner,
      usages: ['digital signature', 'key encipherment', 'client auth'],
    };
    if (options.expirationSeconds !== undefined) spec.expirationSeconds = options.expirationSeconds;
    const created = await csrs.create({ apiVersion: `${vocabulary.certificatesGroup}/v1`, kind: 'CertificateSigningRequest', metadata: { name: requestName }, spec });
    const certPem = await waitForCertificate(csrs, created, options.timeoutMs ?? 300_000);
    const kubeconfig = YAML.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'default',
      clusters: [{ name: 'default', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64') } }],
      contexts: [{ name: 'default', context: { cluster: 'default', user: 'default' } }],
      users: [{ name: 'default', user: { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') } }],
    });
    return { certPem, keyPem, kubeconfig, requestName };
  } finally {
    client.close();
  }
}

type Csrs = Awaited<ReturnType<RemoteClient['resource']>>;

/** The issued certificate of `csr`, watched for until it comes, the request is denied or failed, or time runs out. */
async function waitForCertificate(csrs: Csrs, csr: ApiObject, timeoutMs: number): Promise<string> {
  const name = String(csr.metadata?.name);
  const outcome = (o: ApiObject): string | undefined => {
    const conditions: ApiObject[] = Array.isArray(o.status?.conditions) ? o.status.conditions : [];
    const refused = conditions.find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status !== 'False');
    if (refused) throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 403, reason: 'Forbidden', message: `certificate signing request ${name} was ${refused.type === 'Denied' ? 'denied' : 'failed'}: ${refused.reason ?? ''} ${refused.message ?? ''}`.trim() });
    const cert = o.status?.certificate;
    return typeof cert === 'string' && cert ? Buffer.from(cert, 'base64').toString('utf8') : undefined;
  };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const now = await csrs.get(name);
    const ready = outcome(now);
    if (ready) return ready;
    for await (const e of csrs.watch({ fieldSelector: `metadata.name=${name}`, resourceVersion: now.metadata?.resourceVersion, signal: controller.signal })) {
      if (e.type === 'DELETED') break;
      const cert = outcome(e.object);
      if (cert) return cert;
    }
  } finally {
    clearTimeout(timer);
  }
  throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 504, reason: 'Timeout', message: `certificate signing request ${name} was not issued in time` });
}
