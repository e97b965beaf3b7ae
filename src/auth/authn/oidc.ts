// OpenID Connect ID tokens as bearer tokens. One issuer is trusted: its
// discovery document names its keys (JWKS), fetched over TLS once and again
// only when a token names a key id not seen yet, so no request calls the
// provider. A token is checked for its signature (the allowed algorithms),
// issuer, audience (the client ID in `aud`), the types of the registered
// claims, expiry and the
// required claims, then names its user by the username claim (prefixed as
// the flags say) and groups. Verified tokens are cached by hash until they
// expire.

import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { hasOwn } from '../../machinery/ownkeys.js';
import { audiencesOf, registeredClaimsProblem } from '../../machinery/jwtclaims.js';
import type { UserInfo } from '../../machinery/user.js';
import { sharedUser } from '../../machinery/user.js';
import { callJson } from '../remotejson.js';
import { formatList } from './audiences.js';
import { VerifiedTokenCache } from './tokencache.js';
import { TokenFacts, type TokenAuthenticator, type TokenResult } from './token.js';

export interface OidcOptions {
  issuerUrl: string;
  clientId: string;
  usernameClaim: string;
  /** As the flag gives it: unset, `-` (none) or the prefix. */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims: readonly (readonly [string, string])[];
  signingAlgs: readonly string[];
  /** CAs of the provider's serving certificate; the host's roots when absent. */
  caPem?: string;
  /** Longest wait for the provider, in ms. */
  timeoutMs?: number;
  /** After a key refresh that found nothing new (or failed), the next waits this long, in ms. */
  refreshBackoffMs?: number;
  now?: () => number;
  cacheSize?: number;
}

/** The prefix of user names, as upstream derives it from the flags. */
export function usernamePrefixOf(o: Pick<OidcOptions, 'issuerUrl' | 'usernameClaim' | 'usernamePrefix'>): string {
  if (o.usernamePrefix === '-') return '';
  if (o.usernamePrefix === undefined || o.usernamePrefix === '') return o.usernameClaim === 'email' ? '' : `${o.issuerUrl}#`;
  return o.usernamePrefix;
}

interface Keys {
  getKey: ReturnType<typeof createLocalJWKSet>;
  /** The key set's identity, to tell a refresh that found new keys from one that did not. */
  text: string;
}

class OidcError extends Error {}

export class OidcAuthenticator implements TokenAuthenticator {
  readonly name = 'oidc';
  private readonly cache: VerifiedTokenCache<UserInfo>;
  private readonly now: () => number;
  private readonly prefix: string;
  private jwksUri?: string;
  private keys?: Keys;
  private loading?: Promise<void>;
  /** When a load last failed or found no new key, and why. */
  private fruitless?: { at: number; reason: string };

  constructor(private readonly o: OidcOptions) {
    this.cache = new VerifiedTokenCache(o.cacheSize);
    this.now = o.now ?? Date.now;
    this.prefix = usernamePrefixOf(o);
    // Fetched at once, so that the first token rarely waits.
    void this.load().catch(() => undefined);
  }

  async authenticateToken(token: string, _audiences: readonly string[] = [], facts = new TokenFacts(token)): Promise<TokenResult> {
    const hash = facts.hash;
    const now = this.now();
    const cached = this.cache.get(hash, now);
    // Frozen when cached: every request of the token shares one user object, which nobody can change.
    if (cached) return { kind: 'user', user: cached, audiences: [] };
    // Not this issuer's token: another authenticator's, no opinion.
    if (facts.claimedIssuer !== this.o.issuerUrl) return { kind: 'none' };
    try {
      const { payload, user } = await this.verify(token);
      this.cache.set(hash, sharedUser(user), payload.exp! * 1000);
      return { kind: 'user', user, audiences: [] };
    } catch (e) {
      return { kind: 'rejected', reason: e instanceof OidcError ? e.message : `oidc: verify token: ${(e as Error).message}` };
    }
  }

  private async verify(token: string): Promise<{ payload: JWTPayload; user: UserInfo }> {
    const payload = await this.checkSignature(token);
    const mistyped = registeredClaimsProblem(payload);
    if (mistyped) throw new OidcError(`oidc: malformed claims: ${mistyped}`);
    // As upstream's verifier: the client ID must be among the audiences; `azp` is no substitute.
    const aud = audiencesOf(payload);
    if (!aud.includes(this.o.clientId)) {
      throw new OidcError(`oidc: verify token: oidc: expected audience ${JSON.stringify(this.o.clientId)} got ${formatList(aud)}`);
    }
    for (const [claim, want] of this.o.requiredClaims) {
      if (!hasOwn(payload, claim)) throw new OidcError(`oidc: required claim ${claim} not present in ID token`);
      const got = payload[claim];
      if (got !== want) throw new OidcError(`oidc: required claim ${claim} value does not match. Got = ${typeof got === 'string' ? got : JSON.stringify(got)}, want = ${want}`);
    }
    return { payload, user: this.userOf(payload) };
  }

  /** The payload of a token with a good signature from the issuer, not expired. */
  private async checkSignature(token: string): Promise<JWTPayload> {
    const options = { issuer: this.o.issuerUrl, algorithms: [...this.o.signingAlgs], requiredClaims: ['exp'] };
    let keys = await this.currentKeys();
    for (let attempt = 0; ; attempt++) {
      try {
        return (await jwtVerify(token, keys.getKey, options)).payload;
      } catch (e) {
        if (e instanceof joseErrors.JWTExpired) {
          const exp = typeof e.payload.exp === 'number' ? new Date(e.payload.exp * 1000).toISOString() : 'unknown';
          throw new OidcError(`oidc: verify token: oidc: token is expired (Token Expiry: ${exp})`);
        }
        if (!(e instanceof joseErrors.JWKSNoMatchingKey) || attempt > 0) throw e;
        // A key not seen yet: the provider may have rotated its keys.
        const fresh = await this.refreshedKeys(keys);
        if (!fresh) throw new OidcError('oidc: verify token: failed to verify signature: no key of the issuer matches the token');
        keys = fresh;
      }
    }
  }

  private userOf(payload: JWTPayload): UserInfo {
    const claim = this.o.usernameClaim;
    if (!hasOwn(payload, claim)) throw new OidcError(`oidc: parse username claims ${JSON.stringify(claim)}: claim not present`);
    const name = payload[claim];
    if (typeof name !== 'string' || name === '') throw new OidcError(`oidc: parse username claims ${JSON.stringify(claim)}: claim is not a non-empty string`);
    if (claim === 'email' && hasOwn(payload, 'email_verified')) {
      // As upstream: when the provider says whether the address is verified, it must say yes.
      if (typeof payload.email_verified !== 'boolean') throw new OidcError('oidc: parse \'email_verified\' claim: not a boolean');
      if (!payload.email_verified) throw new OidcError('oidc: email not verified');
    }
    const user: UserInfo = { username: `${this.prefix}${name}`, groups: [] };
    const groupsClaim = this.o.groupsClaim;
    if (groupsClaim && hasOwn(payload, groupsClaim)) {
      const value = payload[groupsClaim];
      const groups = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string')) {
        throw new OidcError(`oidc: parse groups claim ${JSON.stringify(groupsClaim)}: not a string or a list of strings`);
      }
      user.groups = groups.map((g) => `${this.o.groupsPrefix ?? ''}${g}`);
    }
    return user;
  }

  /** The keys known, loading them first when none are. */
  private async currentKeys(): Promise<Keys> {
    if (!this.keys) await this.loadUnlessBackingOff();
    if (!this.keys) throw new OidcError(`oidc: authenticator not initialized: ${this.fruitless?.reason ?? 'the provider was not reached yet'}`);
    return this.keys;
  }

  /** Keys newer than `seen`, or undefined when the provider has none (or cannot be asked now). */
  private async refreshedKeys(seen: Keys): Promise<Keys | undefined> {
    if (this.keys && this.keys !== seen) return this.keys;
    await this.loadUnlessBackingOff();
    return this.keys && this.keys.text !== seen.text ? this.keys : undefined;
  }

  private async loadUnlessBackingOff(): Promise<void> {
    const backoff = this.o.refreshBackoffMs ?? 10_000;
    if (!this.loading && this.fruitless && this.now() - this.fruitless.at < backoff) return;
    await this.load().catch(() => undefined);
  }

  /** Discovery (once) and the key set; one load at a time, shared by every caller. */
  private load(): Promise<void> {
    this.loading ??= (async () => {
      const before = this.keys?.text;
      try {
        this.jwksUri ??= await this.discover();
        const jwks = await this.fetch(this.jwksUri);
        if (typeof jwks !== 'object' || jwks === null || !Array.isArray((jwks as JSONWebKeySet).keys)) throw new Error('the key set has no keys');
        const text = JSON.stringify(jwks);
        if (text !== before) this.keys = { getKey: createLocalJWKSet(jwks as JSONWebKeySet), text };
        this.fruitless = text === before ? { at: this.now(), reason: 'no new key' } : undefined;
      } catch (e) {
        this.fruitless = { at: this.now(), reason: (e as Error).message };
        throw e;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async discover(): Promise<string> {
    const url = `${this.o.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const doc = await this.fetch(url) as Record<string, unknown> | null;
    if (typeof doc !== 'object' || doc === null) throw new Error('the discovery document is not an object');
    if (doc.issuer !== this.o.issuerUrl) {
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.o.issuerUrl)} got ${JSON.stringify(doc.issuer)}`);
    }
    if (typeof doc.jwks_uri !== 'string') throw new Error('the discovery document names no jwks_uri');
    if (new URL(doc.jwks_uri).protocol !== 'https:') throw new Error('the jwks_uri is not an https URL');
    return doc.jwks_uri;
  }

  private fetch(url: string): Promise<unknown> {
    return callJson({ method: 'GET', url, caPem: this.o.caPem, timeoutMs: this.o.timeoutMs ?? 10_000, remote: 'the provider' });
  }
}
