// The built-in signers' rules, as upstream's: what each accepts of a request
// (subject, subjectAltNames, usages; never a CA), and the lifetime of what it
// issues. Pure functions, so the rules are tested without a server.

import type { CertificateRequestInfo } from '../machinery/pkcs10.js';
import { vocabulary } from '../machinery/vocabulary.js';

/** The signer names the signing controller serves. */
export const builtinSigners: readonly string[] = [
  vocabulary.apiserverClientSigner,
  vocabulary.apiserverClientNodeagentSigner,
  vocabulary.nodeagentServingSigner,
  vocabulary.legacyUnknownSigner,
];

import { nodesGroup, nodeUserPrefix } from '../machinery/nodeidentity.js';

/** Usages a node agent's certificates must have exactly; keys that cannot encipher (EC) may leave key encipherment out, as upstream. */
const nodeClientUsages = ['client auth', 'digital signature', 'key encipherment'];
const nodeClientUsagesNoRsa = ['client auth', 'digital signature'];
const nodeServingUsages = ['digital signature', 'key encipherment', 'server auth'];
const nodeServingUsagesNoRsa = ['digital signature', 'server auth'];

function sameSet(usages: readonly string[], wanted: readonly string[]): boolean {
  const given = new Set(usages);
  return given.size === wanted.length && wanted.every((u) => given.has(u));
}

/** Why a node agent's client request is refused, or undefined (upstream's order of checks). */
export function nodeClientProblem(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== nodesGroup) return `subject organization is not ${nodesGroup}`;
  if (req.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, nodeClientUsages) && !sameSet(usages, nodeClientUsagesNoRsa)) return `usages did not match [${nodeClientUsages.join(' ')}]`;
  if (!req.commonName.startsWith(nodeUserPrefix)) return `subject common name does not begin with ${nodeUserPrefix}`;
  return undefined;
}

function nodeServingProblem(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== nodesGroup) return `subject organization is not ${nodesGroup}`;
  if (!req.dnsNames.length && !req.ipAddresses.length) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, nodeServingUsages) && !sameSet(usages, nodeServingUsagesNoRsa)) return `usages did not match [${nodeServingUsages.join(' ')}]`;
  if (!req.commonName.startsWith(nodeUserPrefix)) return `subject common name does not begin with ${nodeUserPrefix}`;
  return undefined;
}

function apiserverClientProblem(usages: readonly string[]): string | undefined {
  for (const u of usages) {
    if (u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth') return `invalid usage for client certificate: ${u}`;
  }
  if (!usages.includes('client auth')) return 'missing required usage for client certificate: client auth';
  return undefined;
}

/** Why `signerName` refuses the request, or undefined when it signs it. Only for built-in signers. */
export function signerProblem(signerName: string, req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  // No built-in signer makes a CA.
  if (req.requestsCa) return 'CA certificates are not allowed: the request asks for basicConstraints CA:TRUE';
  switch (signerName) {
    case vocabulary.apiserverClientSigner: return apiserverClientProblem(usages);
    case vocabulary.apiserverClientNodeagentSigner: return nodeClientProblem(req, usages);
    case vocabulary.nodeagentServingSigner: return nodeServingProblem(req, usages);
    default: return undefined; // legacy-unknown: no restriction beyond the CA bit
  }
}

const minute = 60_000;
/** Shortest lifetime a built-in signer issues: twice the backdate of certificates. */
const minimumMs = 10 * minute;

/** The requested lifetime bounded by the signer's (`--cluster-signing-duration`), as upstream. */
export function lifetimeMs(expirationSeconds: unknown, signingDurationMs: number): number {
  if (typeof expirationSeconds !== 'number') return signingDurationMs;
  const requested = expirationSeconds * 1000;
  if (requested > signingDurationMs) return signingDurationMs;
  return Math.max(requested, minimumMs);
}
