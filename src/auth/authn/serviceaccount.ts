// Service-account tokens (JWTs). A token of one of our issuers, signed by one
// of the verifying keys, authenticates its account while the account (same
// uid), and the secret or pod it is bound to, still exist; a legacy token
// (issuer `<product>/serviceaccount`, kept in a token secret) while its
// secret still holds it. Verified tokens are cached by hash; the checks that
// depend on time and on stored objects run on every use.

import { createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import type { UserInfo } from '../../machinery/user.js';
import { sharedUser } from '../../machinery/user.js';
import { setOwn } from '../../machinery/ownkeys.js';
import {
  checkClaimTimes, claimLeewaySeconds, legacyServiceAccountIssuer, readServiceAccountClaims, serviceAccountExtraKeys,
  serviceAccountGroups, serviceAccountUsername, type ObjectRef, type ServiceAccountClaims,
} from '../../machinery/serviceaccount.js';
import { TokenFacts, type TokenAuthenticator, type TokenResult } from './token.js';
import { formatList, intersect } from './audiences.js';
import { VerifiedTokenCache } from './tokencache.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';

/** The parts of a stored object the checks read. */
export interface ObjectState {
  metadata?: { uid?: string; deletionTimestamp?: string };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
}

/** Reads the objects tokens depend on as they are now; undefined when absent (at once when held in memory). */
export interface TokenObjects {
  get(resource: 'serviceaccounts' | 'secrets' | 'pods', namespace: string, name: string): MaybePromise<ObjectState | undefined>;
}

export interface ServiceAccountAuthOptions {
  /** Issuers of bound tokens; the first one signs. */
  issuers: readonly string[];
  /** SPKI (or any public key) PEMs that verify tokens. */
  publicKeyPems: readonly string[];
  /** The server's own audiences: those of legacy tokens (which name none) and of requests that ask for none. */
  apiAudiences: readonly string[];
  objects: TokenObjects;
  /** Unix milliseconds; tests move the clock. */
  now?: () => number;
  cacheSize?: number;
}

const algorithmsOf = (key: KeyObject): string[] => {
  if (key.asymmetricKeyType === 'rsa') return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType === 'ec' && curve) return [{ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve] ?? ''].filter(Boolean);
  return [];
};

type Check = string | undefined;

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'serviceaccount';
  private readonly keys: { key: KeyObject; algorithms: string[] }[];
  private readonly issuers: Set<string>;
  private readonly cache: VerifiedTokenCache<ServiceAccountClaims>;
  /**
   * Tokens that claim none of our issuers (OpenID Connect and webhook tokens
   * tried after us): they never will, so their payload is read once, not per request.
   */
  private readonly others = new VerifiedTokenCache<true>();
  private readonly now: () => number;

  constructor(private readonly options: ServiceAccountAuthOptions) {
    this.keys = options.publicKeyPems.map((pem) => {
      const key = createPublicKey(pem);
      return { key, algorithms: algorithmsOf(key) };
    }).filter((k) => k.algorithms.length > 0);
    this.issuers = new Set([...options.issuers, legacyServiceAccountIssuer]);
    this.cache = new VerifiedTokenCache(options.cacheSize);
    this.now = options.now ?? Date.now;
  }

  /** How many verified tokens are kept (for metrics and tests). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /**
   * A token verified before (on this connection, or by its hash) is checked
   * without a promise while the objects it depends on are in the watch cache.
   */
  authenticateToken(token: string, audiences: readonly string[], facts = new TokenFacts(token)): MaybePromise<TokenResult> {
    const now = this.now();
    let claims = facts.verifiedBy<ServiceAccountClaims>(this);
    if (!claims) {
      claims = this.cache.get(facts.hash, now);
      if (!claims) return this.verifyFirst(token, audiences, facts, now);
      facts.rememberVerified(this, claims);
    }
    return this.checkUse(claims, token, audiences, now);
  }

  /** A token not verified lately: its signature checked, its claims kept until it expires. */
  private async verifyFirst(token: string, audiences: readonly string[], facts: TokenFacts, now: number): Promise<TokenResult> {
    const hash = facts.hash;
    if (this.others.get(hash, now)) return { kind: 'none' };
    const verified = await this.verify(token, facts.claimedIssuer);
    if (verified === undefined) {
      this.others.set(hash, true, Infinity);
      return { kind: 'none' };
    }
    if (typeof verified === 'string') return { kind: 'rejected', reason: verified };
    const until = verified.expiresAt === undefined ? Infinity : (verified.expiresAt + claimLeewaySeconds) * 1000;
    if (until > now) {
      this.cache.set(hash, verified, until);
      facts.rememberVerified(this, verified);
    }
    return this.checkUse(verified, token, audiences, now);
  }

  /** What every use of verified claims checks again: the audiences, the time, and the objects the token is bound to. */
  private checkUse(claims: ServiceAccountClaims, token: string, audiences: readonly string[], now: number): MaybePromise<TokenResult> {
    const implicit = this.options.apiAudiences;
    const tokenAudiences = claims.audiences.length ? claims.audiences : [...implicit];
    const requested = audiences.length ? audiences : implicit;
    const shared = intersect(tokenAudiences, requested);
    if (shared.length === 0 && implicit.length !== 0) {
      return { kind: 'rejected', reason: `token audiences ${formatList(tokenAudiences)} is invalid for the target audiences ${formatList(requested)}` };
    }
    const timeProblem = checkClaimTimes(claims, Math.floor(now / 1000));
    if (timeProblem) return { kind: 'rejected', reason: timeProblem };
    const decide = (problem: Check): TokenResult => (problem ? { kind: 'rejected', reason: problem } : { kind: 'user', user: userFor(claims), audiences: shared });
    const unableToCheck = (e: Error) => `unable to check the token: ${e.message}`;
    let problem: MaybePromise<Check>;
    try {
      problem = claims.legacy ? this.checkLegacy(claims, token) : this.checkBound(claims, now);
    } catch (e) {
      problem = unableToCheck(e as Error);
    }
    return problem instanceof Promise ? problem.catch(unableToCheck).then(decide) : decide(problem);
  }

  /** Claims of a token of ours with a good signature; undefined when the token is not ours at all; the reason when it is bad. */
  private async verify(token: string, issuer: string | undefined): Promise<ServiceAccountClaims | string | undefined> {
    if (issuer === undefined || !this.issuers.has(issuer)) return undefined;
    const failures: string[] = [];
    for (const { key, algorithms } of this.keys) {
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(new TextDecoder().decode((await compactVerify(token, key, { algorithms })).payload));
      } catch (e) {
        failures.push((e as Error).message);
        continue;
      }
      if (payload.iss !== issuer) return `token issuer ${JSON.stringify(String(payload.iss))} is invalid`;
      return readServiceAccountClaims(payload, issuer === legacyServiceAccountIssuer);
    }
    const unique = [...new Set(failures)];
    return unique.length === 0 ? 'no key verifies service-account tokens' : unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
  }

  /** A bound token: the account with the same uid, and its secret or pod, still exist. */
  private checkBound(c: ServiceAccountClaims, now: number): MaybePromise<Check> {
    // Objects deleted less than the leeway ago still count, as upstream.
    const deletedLongAgo = (o: ObjectState) => {
      const at = o.metadata?.deletionTimestamp;
      return at !== undefined && Date.parse(at) < now - claimLeewaySeconds * 1000;
    };
    const objects = this.options.objects;
    const boundProblem = (bound: ObjectState | undefined, ref: ObjectRef, what: 'secret' | 'pod'): Check => {
      if (!bound || deletedLongAgo(bound)) return 'service account token has been invalidated';
      if (bound.metadata?.uid !== ref.uid) return `${what} UID (${bound.metadata?.uid ?? ''}) does not match service account ${what} ref claim (${ref.uid})`;
      return undefined;
    };
    const checkPod = (): MaybePromise<Check> => (c.pod ? andThen(objects.get('pods', c.namespace, c.pod.name), (pod) => boundProblem(pod, c.pod!, 'pod')) : undefined);
    return andThen(objects.get('serviceaccounts', c.namespace, c.account.name), (account) => {
      if (!account) return `serviceaccounts "${c.account.name}" not found`;
      if (account.metadata?.uid !== c.account.uid) return `service account UID (${account.metadata?.uid ?? ''}) does not match claim (${c.account.uid})`;
      if (deletedLongAgo(account)) return `service account ${c.namespace}/${c.account.name} has been deleted`;
      if (!c.secret) return checkPod();
      return andThen(objects.get('secrets', c.namespace, c.secret.name), (secret) => boundProblem(secret, c.secret!, 'secret') ?? checkPod());
    });
  }

  /** A legacy token: its secret still holds exactly this token, and the account (same uid) exists. */
  private async checkLegacy(c: ServiceAccountClaims, token: string): Promise<Check> {
    const objects = this.options.objects;
    const secret = await objects.get('secrets', c.namespace, c.secret!.name);
    if (!secret || secret.metadata?.deletionTimestamp) return 'token has been invalidated';
    const kept = Buffer.from(typeof secret.data?.token === 'string' ? secret.data.token : '', 'base64');
    const given = Buffer.from(token, 'utf8');
    if (kept.length !== given.length || !timingSafeEqual(kept, given)) return "token does not match server's copy";
    const account = await objects.get('serviceaccounts', c.namespace, c.account.name);
    if (!account) return `serviceaccounts "${c.account.name}" not found`;
    if (account.metadata?.deletionTimestamp) return `ServiceAccount ${c.namespace}/${c.account.name} has been deleted`;
    if (account.metadata?.uid !== c.account.uid) return `ServiceAccount UID (${account.metadata?.uid ?? ''}) does not match claim (${c.account.uid})`;
    return undefined;
  }
}

/** One frozen user per verified (cached) claims object: requests with the same token share it. */
const usersByClaims = new WeakMap<ServiceAccountClaims, UserInfo>();

function userFor(c: ServiceAccountClaims): UserInfo {
  let user = usersByClaims.get(c);
  if (user === undefined) usersByClaims.set(c, (user = sharedUser(userOf(c))));
  return user;
}

function userOf(c: ServiceAccountClaims): UserInfo {
  const user: UserInfo = { username: serviceAccountUsername(c.namespace, c.account.name), uid: c.account.uid, groups: serviceAccountGroups(c.namespace) };
  const extra: Record<string, string[]> = {};
  const pod: ObjectRef | undefined = c.pod;
  if (pod?.name && pod.uid) {
    setOwn(extra, serviceAccountExtraKeys.podName, [pod.name]);
    setOwn(extra, serviceAccountExtraKeys.podUid, [pod.uid]);
  }
  if (!c.legacy && c.id) setOwn(extra, serviceAccountExtraKeys.credentialId, [`JTI=${c.id}`]);
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}
