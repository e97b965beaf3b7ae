// Token authenticators: each looks at a bearer token (from a request's
// Authorization header, or from a TokenReview) and answers user, rejected
// (a token of its kind, but not valid) or none. Their union asks them in order.

import type { UserInfo } from '../../machinery/user.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { firstAccepting, joinReasons } from './authenticator.js';
import { intersect } from './audiences.js';
import { tokenHash } from './tokencache.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';

export type TokenResult =
  /** `audiences`: those of the requested ones the token is valid for. */
  | { kind: 'user'; user: UserInfo; audiences: string[] }
  | { kind: 'rejected'; reason: string }
  | { kind: 'none' };

/** The issuer a compact JWS claims, read before any signature check (cheap, and tells whose token it is). */
export function claimedIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const text = Buffer.from(parts[1]!, 'base64url').toString('utf8');
    if (jsonTextExceedsDepth(text)) return undefined;
    const payload = JSON.parse(text);
    return typeof payload?.iss === 'string' ? payload.iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the authenticators tried in turn read from one token, worked out once
 * for all of them: its hash (the caches' key), the issuer it claims, and
 * what an authenticator verified of it. Made per request, or per connection
 * for the requests of one keep-alive connection that send the same header
 * again (BearerTokenAuthenticator), and dropped with it: the token is kept
 * nowhere longer than the connection that sent it.
 */
export class TokenFacts {
  private hashed?: string;
  private issuer?: string | null;
  private verified?: Map<TokenAuthenticator, unknown>;
  /** `header`: the Authorization header the token came in, when it came in one. */
  constructor(readonly token: string, readonly header?: string) {}

  get hash(): string {
    return (this.hashed ??= tokenHash(this.token));
  }

  get claimedIssuer(): string | undefined {
    if (this.issuer === undefined) this.issuer = claimedIssuer(this.token) ?? null;
    return this.issuer ?? undefined;
  }

  /**
   * What `by` verified of this token before (its signature's claims), to be
   * checked again on each use for what depends on time and stored objects.
   */
  verifiedBy<V>(by: TokenAuthenticator): V | undefined {
    return this.verified?.get(by) as V | undefined;
  }

  rememberVerified(by: TokenAuthenticator, value: unknown): void {
    (this.verified ??= new Map()).set(by, value);
  }
}

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `audiences`: who the caller needs the token to be for (empty: anyone).
   * `facts`: the token's hash and claimed issuer, shared with the other authenticators asked.
   */
  authenticateToken(token: string, audiences: readonly string[], facts?: TokenFacts): MaybePromise<TokenResult>;
}

/** The first authenticator that accepts decides; when none does, every rejection is reported. */
export class UnionTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'token-union';
  constructor(private readonly authenticators: readonly TokenAuthenticator[]) {}

  authenticateToken(token: string, audiences: readonly string[], facts = new TokenFacts(token)): MaybePromise<TokenResult> {
    const reasons: string[] = [];
    return andThen(firstAccepting(this.authenticators.length, (i) => this.authenticators[i]!.authenticateToken(token, audiences, facts), reasons),
      (r): TokenResult => r ?? (reasons.length ? { kind: 'rejected', reason: joinReasons(reasons) } : { kind: 'none' }));
  }
}

/**
 * Tokens that name no audience (static tokens) are valid for this server
 * only: they answer for the requested audiences that are the server's own,
 * and not at all when the caller wants a token for someone else.
 */
export class AudienceAgnostic implements TokenAuthenticator {
  readonly name: string;
  constructor(private readonly inner: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {
    this.name = inner.name;
  }

  authenticateToken(token: string, audiences: readonly string[], facts?: TokenFacts): MaybePromise<TokenResult> {
    const shared = audiences.length === 0 ? [...this.apiAudiences] : intersect(this.apiAudiences, audiences);
    if (audiences.length > 0 && shared.length === 0) return { kind: 'none' };
    return andThen(this.inner.authenticateToken(token, audiences, facts), (r) => (r.kind === 'user' ? { ...r, audiences: shared } : r));
  }
}
