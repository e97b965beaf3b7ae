// Signs certificate requests with a CA, as the built-in signers do: the
// request's subject and subjectAltNames, the usages the CSR object names,
// never a CA, and a lifetime that ends no later than the CA's.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { CertificateRequestInfo } from '../machinery/pkcs10.js';
import type { CertificateUsage } from '../machinery/usages.js';
import { parseCertificateIdentity } from './identity.js';
import { backdateMs } from './issue.js';
import { issueCertificate } from './issuer-thread.js';
import { KeyMaterialError } from './key-material.js';

export interface RequestSigner {
  /** The CA that signs (PEM): issued certificates verify against it. */
  readonly caCertPem: string;
  /** PEM of a certificate for `request`, valid for `lifetimeMs` from now (less if the CA ends sooner). */
  sign(request: CertificateRequestInfo, usages: readonly CertificateUsage[], lifetimeMs: number): Promise<string>;
}

/** Below this lifetime the end is not moved back by the backdate (the certificate would lose too much of it). */
const shortMs = 8 * 60 * 60 * 1000;

export function requestSigner(caCertPem: string, caKeyPem: string, now: () => number = Date.now): RequestSigner {
  const caNotAfter = parseCertificateIdentity(caCertPem).notAfter;
  return {
    caCertPem,
    async sign(request, usages, lifetimeMs) {
      const at = now();
      if (at >= caNotAfter.getTime()) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${caNotAfter.toISOString()}`);
      // Starts backdated; long lifetimes end backdated too, so that they last exactly what was asked.
      const notAfter = new Date(lifetimeMs < shortMs ? at + lifetimeMs : at + lifetimeMs - backdateMs);
      return issueCertificate({
        commonName: request.commonName,
        subjectDer: request.subjectDer,
        dnsNames: request.dnsNames,
        ipAddresses: request.ipAddresses,
        emailAddresses: request.emailAddresses,
        uris: request.uris,
        usages,
        isCA: false,
        notBefore: new Date(at - backdateMs),
        notAfter,
        publicKey: request.publicKeyDer,
        issuerKeyPem: caKeyPem,
        issuerCertPem: caCertPem,
      });
    },
  };
}

/**
 * The signer of `--cluster-signing-cert-file`/`--cluster-signing-key-file`,
 * or of `fallback` (the server's CA) when they are not given. A pair that
 * does not belong together stops the start-up.
 */
export async function loadRequestSigner(certFile: string | undefined, keyFile: string | undefined, fallback: { certPem: string; keyPem: string }): Promise<RequestSigner> {
  if (certFile === undefined && keyFile === undefined) return requestSigner(fallback.certPem, fallback.keyPem);
  if (certFile === undefined || keyFile === undefined) throw new KeyMaterialError('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  let matches: boolean;
  let certPem: string;
  let keyPem: string;
  try {
    [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    matches = new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch (e) {
    throw new KeyMaterialError(`cluster signing CA: cannot use ${certFile} and ${keyFile}: ${(e as Error).message}`);
  }
  if (!matches) throw new KeyMaterialError(`cluster signing CA: the key in ${keyFile} does not belong to the certificate in ${certFile}`);
  return requestSigner(certPem, keyPem);
}
