// Certificate signing requests made the way users make them: with openssl.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vocabulary } from '../../src/machinery/vocabulary.js';

export interface OpensslRequest {
  /** PEM CERTIFICATE REQUEST. */
  request: string;
  /** PEM private key. */
  key: string;
}

export interface RequestOptions {
  /** openssl -subj, e.g. `/O=system:nodes/CN=system:node:n1`. */
  subject: string;
  /** openssl -addext values, e.g. `subjectAltName=DNS:a.example`. */
  extensions?: string[];
  /** `ec` (P-256, default) or `rsa` (2048 bits). */
  keyType?: 'ec' | 'rsa';
}

export function opensslRequest(options: RequestOptions): OpensslRequest {
  const dir = mkdtempSync(join(tmpdir(), 'plat-csr-'));
  try {
    const keyArgs = options.keyType === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
    const extensions = (options.extensions ?? []).flatMap((e) => ['-addext', e]);
    execFileSync('openssl', ['req', '-new', ...keyArgs, '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'req.pem'), '-subj', options.subject, ...extensions], { stdio: 'pipe' });
    return { request: readFileSync(join(dir, 'req.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text openssl prints for a PEM certificate (`openssl x509 -text`). */
export function opensslText(certificatePem: string): string {
  return execFileSync('openssl', ['x509', '-noout', '-text'], { input: certificatePem }).toString();
}

/** Whether openssl verifies `certificatePem` against `caPem` for `purpose` (sslclient, sslserver). */
export function opensslVerifies(certificatePem: string, caPem: string, purpose = 'sslclient'): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'plat-verify-'));
  try {
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, caPem);
    execFileSync('openssl', ['verify', '-purpose', purpose, '-CAfile', ca], { input: certificatePem, stdio: 'pipe' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CertificateSigningRequest object for `request`. */
export function csrObject(name: string, request: string, signerName: string, usages: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: `${vocabulary.certificatesGroup}/v1`, kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(request).toString('base64'), signerName, usages, ...extra },
  };
}
