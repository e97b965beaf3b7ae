// Service-account identities and the claims of their tokens, as upstream
// shapes them: bound tokens (a token request) carry the account, and the
// secret or pod they are bound to, under one private claim named after the
// product's domain; legacy tokens (kept in a token secret) carry flat claims
// under the old issuer. Pure: signing and verifying happen elsewhere.

import { isDns1123Label, isDns1123Subdomain } from './validation.js';
import { product, productKey, vocabulary } from './vocabulary.js';
import { audiencesOf, registeredClaimsProblem } from './jwtclaims.js';

export const serviceAccountUsernamePrefix = 'system:serviceaccount:';
export const allServiceAccountsGroup = 'system:serviceaccounts';

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${serviceAccountUsernamePrefix}${namespace}:${name}`;
}

/** The namespace and name of a service-account user name; undefined when it is not one. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(serviceAccountUsernamePrefix)) return undefined;
  const parts = username.slice(serviceAccountUsernamePrefix.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (isDns1123Label(namespace).length || isDns1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** The groups every service account of a namespace is in. */
export function serviceAccountGroups(namespace: string): string[] {
  return [allServiceAccountsGroup, `${allServiceAccountsGroup}:${namespace}`];
}

/** Keys of the user's extra information a service-account token adds. */
export const serviceAccountExtraKeys = {
  podName: `${vocabulary.authenticationGroup}/pod-name`,
  podUid: `${vocabulary.authenticationGroup}/pod-uid`,
  credentialId: `${vocabulary.authenticationGroup}/credential-id`,
} as const;

/** Issuer of the tokens the token controller puts in token secrets. */
export const legacyServiceAccountIssuer = `${product.name}/serviceaccount`;

/** Name of the private claim of bound tokens: the product domain, as upstream names it after its own. */
export const privateClaimName = product.domain;

/** Claims of legacy tokens. */
export const legacyClaimNames = {
  namespace: productKey('serviceaccount/namespace'),
  secretName: productKey('serviceaccount/secret.name'),
  serviceAccountName: productKey('serviceaccount/service-account.name'),
  serviceAccountUid: productKey('serviceaccount/service-account.uid'),
} as const;

export interface ObjectRef {
  name: string;
  uid: string;
}

/** Signs the claims of a token as a compact JWS; the signer sets the issuer (`iss`). */
export interface TokenSigner {
  readonly issuer: string;
  sign(claims: Record<string, unknown>): Promise<string>;
}

export interface BoundClaimsParams {
  namespace: string;
  account: ObjectRef;
  audiences: readonly string[];
  /** Seconds the token is valid from `now`. */
  lifetimeSeconds: number;
  /** Unix milliseconds. */
  now: number;
  /** Unique id of the token (jti). */
  id: string;
  secret?: ObjectRef;
  pod?: ObjectRef;
  /** Seconds after which use only warns (pod-bound tokens whose lifetime was extended). */
  warnAfterSeconds?: number;
}

/** Claims of a bound token: standard ones plus the private claim; `iss` comes from the signer. */
export function boundTokenClaims(p: BoundClaimsParams): Record<string, unknown> {
  const now = Math.floor(p.now / 1000);
  const own: Record<string, unknown> = { namespace: p.namespace, serviceaccount: { name: p.account.name, uid: p.account.uid } };
  if (p.pod) own.pod = { name: p.pod.name, uid: p.pod.uid };
  if (p.secret) own.secret = { name: p.secret.name, uid: p.secret.uid };
  if (p.warnAfterSeconds) own.warnafter = now + p.warnAfterSeconds;
  return {
    aud: [...p.audiences],
    exp: now + p.lifetimeSeconds,
    iat: now,
    jti: p.id,
    nbf: now,
    sub: serviceAccountUsername(p.namespace, p.account.name),
    [privateClaimName]: own,
  };
}

/** Claims of a legacy token kept in the secret `secretName`: no audience, no expiry. */
export function legacyTokenClaims(namespace: string, account: ObjectRef, secretName: string): Record<string, unknown> {
  return {
    [legacyClaimNames.namespace]: namespace,
    [legacyClaimNames.secretName]: secretName,
    [legacyClaimNames.serviceAccountName]: account.name,
    [legacyClaimNames.serviceAccountUid]: account.uid,
    sub: serviceAccountUsername(namespace, account.name),
  };
}

/** What a token says, read from its verified payload. */
export interface ServiceAccountClaims {
  legacy: boolean;
  issuer: string;
  subject?: string;
  audiences: string[];
  /** Unix seconds. */
  expiresAt?: number;
  notBefore?: number;
  issuedAt?: number;
  id?: string;
  namespace: string;
  account: ObjectRef;
  secret?: ObjectRef;
  pod?: ObjectRef;
  /** Unix seconds after which use only warns. */
  warnAfter?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function ref(v: unknown): ObjectRef | undefined {
  if (!isObject(v)) return undefined;
  return { name: str(v.name), uid: str(v.uid) };
}

/**
 * Reads the claims of a verified token of `issuer`: the legacy shape under
 * the legacy issuer, the bound shape otherwise. Answers the reason when a
 * claim the shape needs is missing, as upstream does.
 */
export function readServiceAccountClaims(payload: Record<string, unknown>, legacy: boolean): ServiceAccountClaims | string {
  const mistyped = registeredClaimsProblem(payload);
  if (mistyped) return mistyped;
  const common = {
    legacy,
    issuer: str(payload.iss),
    subject: typeof payload.sub === 'string' ? payload.sub : undefined,
    audiences: audiencesOf(payload),
    expiresAt: num(payload.exp),
    notBefore: num(payload.nbf),
    issuedAt: num(payload.iat),
    id: typeof payload.jti === 'string' ? payload.jti : undefined,
  };
  if (legacy) {
    const get = (name: string) => (Object.prototype.hasOwnProperty.call(payload, name) ? str(payload[name]) : '');
    if (!common.subject) return 'sub claim is missing';
    const namespace = get(legacyClaimNames.namespace);
    if (!namespace) return 'namespace claim is missing';
    const secretName = get(legacyClaimNames.secretName);
    if (!secretName) return 'secretName claim is missing';
    const name = get(legacyClaimNames.serviceAccountName);
    if (!name) return 'serviceAccountName claim is missing';
    const uid = get(legacyClaimNames.serviceAccountUid);
    if (!uid) return 'serviceAccountUID claim is missing';
    const subject = splitServiceAccountUsername(common.subject);
    if (!subject || subject.namespace !== namespace || subject.name !== name) return 'sub claim is invalid';
    return { ...common, namespace, account: { name, uid }, secret: { name: secretName, uid: '' } };
  }
  const own = Object.prototype.hasOwnProperty.call(payload, privateClaimName) ? payload[privateClaimName] : undefined;
  if (!isObject(own)) return `${privateClaimName} claim is missing`;
  const account = ref(own.serviceaccount);
  const namespace = str(own.namespace);
  if (!namespace || !account?.name || !account.uid) return 'service account claims are missing';
  return { ...common, namespace, account, secret: ref(own.secret), pod: ref(own.pod), warnAfter: num(own.warnafter) };
}

/** Upstream's clock leeway for exp, nbf and iat. */
export const claimLeewaySeconds = 60;

/** Why the token's times make it invalid at `nowSeconds`; undefined when they do not. */
export function checkClaimTimes(c: Pick<ServiceAccountClaims, 'expiresAt' | 'notBefore' | 'issuedAt'>, nowSeconds: number): string | undefined {
  if (c.notBefore !== undefined && nowSeconds + claimLeewaySeconds < c.notBefore) return 'service account token is not valid yet';
  if (c.expiresAt !== undefined && nowSeconds - claimLeewaySeconds > c.expiresAt) return 'service account token has expired';
  if (c.issuedAt !== undefined && nowSeconds + claimLeewaySeconds < c.issuedAt) return 'service account token is issued in the future';
  return undefined;
}
