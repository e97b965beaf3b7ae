// Bootstrap tokens: `<id>.<secret>` bearer tokens kept in secrets of type
// `bootstrap.<domain>/token` named `bootstrap-token-<id>` in the system
// namespace. What a token secret says (its id and secret, expiry, usages and
// extra groups) is read here once for the authenticator, the token cleaner
// and the bootstrap signer; and the detached JWS the signer writes into the
// cluster-info ConfigMap is cut and rejoined here for signer and client.

import { ownValue } from './ownkeys.js';
import { vocabulary } from './vocabulary.js';

export const bootstrapTokenPattern = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const bootstrapTokenSecretPrefix = 'bootstrap-token-';
export const bootstrapUserPrefix = 'system:bootstrap:';
export const bootstrapDefaultGroup = 'system:bootstrappers';
/** Extra groups: the default group, a colon, then lowercase letters, digits, colons and dashes. */
export const bootstrapGroupPattern = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** The data keys of a token secret. */
export const bootstrapKeys = {
  description: 'description',
  tokenId: 'token-id',
  tokenSecret: 'token-secret',
  expiration: 'expiration',
  usageAuthentication: 'usage-bootstrap-authentication',
  usageSigning: 'usage-bootstrap-signing',
  extraGroups: 'auth-extra-groups',
} as const;

/** The ConfigMap the bootstrap signer signs, in the public namespace, and its keys. */
export const clusterInfo = {
  namespace: vocabulary.publicNamespace,
  name: 'cluster-info',
  kubeconfigKey: 'kubeconfig',
  signaturePrefix: 'jws-kubeconfig-',
} as const;

export interface TokenSecretLike {
  type?: string;
  metadata?: { name?: string; deletionTimestamp?: string };
  data?: Record<string, string>;
}

/** The id and secret of a token of the bootstrap format; undefined for any other text. */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = bootstrapTokenPattern.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export const bootstrapSecretName = (id: string): string => `${bootstrapTokenSecretPrefix}${id}`;

/** A data value of a secret, decoded (secrets keep data base64); undefined when absent. */
export function secretValue(secret: TokenSecretLike, key: string): string | undefined {
  const value = secret.data === undefined ? undefined : ownValue(secret.data, key);
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/**
 * Milliseconds until the token expires: undefined when it never does, 0 when
 * it has (an expiration that is not RFC 3339 counts as passed, as upstream).
 */
export function timeToExpiry(secret: TokenSecretLike, now: number): number | undefined {
  const text = secretValue(secret, bootstrapKeys.expiration);
  if (text === undefined || text === '') return undefined;
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const at = rfc3339.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at)) return 0;
  return Math.max(0, at - now);
}

export const isExpired = (secret: TokenSecretLike, now: number): boolean => timeToExpiry(secret, now) === 0;

/** The groups of a token's user, sorted and without repeats; the reason when an extra group is malformed. */
export function bootstrapGroups(secret: TokenSecretLike): string[] | { error: string } {
  const groups = new Set([bootstrapDefaultGroup]);
  const extra = secretValue(secret, bootstrapKeys.extraGroups) ?? '';
  if (extra !== '') {
    for (const group of extra.split(',')) {
      if (!bootstrapGroupPattern.test(group)) return { error: `bootstrap group ${JSON.stringify(group)} is invalid (must match ${bootstrapGroupPattern.source})` };
      groups.add(group);
    }
  }
  return [...groups].sort();
}

/** The token id a secret's name carries; undefined for other names. */
export function tokenIdOfSecretName(name: string | undefined): string | undefined {
  if (!name?.startsWith(bootstrapTokenSecretPrefix)) return undefined;
  const id = name.slice(bootstrapTokenSecretPrefix.length);
  return /^[a-z0-9]{6}$/.test(id) ? id : undefined;
}

/** A token the signer signs with: a live token secret whose name, id and secret agree and whose signing usage is on. */
export function signingToken(secret: TokenSecretLike, now: number): { id: string; secret: string } | undefined {
  if (secret.type !== vocabulary.bootstrapTokenSecretType || secret.metadata?.deletionTimestamp) return undefined;
  const id = secretValue(secret, bootstrapKeys.tokenId);
  const tokenSecret = secretValue(secret, bootstrapKeys.tokenSecret);
  if (!id || !tokenSecret || tokenIdOfSecretName(secret.metadata?.name) !== id) return undefined;
  if (isExpired(secret, now) || secretValue(secret, bootstrapKeys.usageSigning) !== 'true') return undefined;
  return { id, secret: tokenSecret };
}

/** The HMAC key of a token's signatures: the whole token `<id>.<secret>`, as the spec says. */
export const signatureKey = (id: string, secret: string): Uint8Array => new TextEncoder().encode(`${id}.${secret}`);

/** A compact JWS without its payload: `header..signature`. */
export function detachPayload(compact: string): string {
  const [header, , signature] = compact.split('.');
  return `${header}..${signature}`;
}

/** A detached JWS with `content` put back as its payload (base64url, no padding); undefined when not of the detached form. */
export function attachPayload(detached: string, content: string): string | undefined {
  const parts = detached.split('.');
  if (parts.length !== 3 || parts[1] !== '') return undefined;
  return `${parts[0]}.${Buffer.from(content, 'utf8').toString('base64url')}.${parts[2]}`;
}
