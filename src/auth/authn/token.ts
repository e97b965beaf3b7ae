// Token authenticators: each looks at a bearer token (from a request's
// Authorization header, or from a TokenReview) and answers user, rejected
// (a token of its kind, but not valid) or none. Their union asks them in order.

import type { UserInfo } from '../../machinery/user.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { joinReasons } from './authenticator.js';
import { intersect } from './audiences.js';
import { tokenHash } from './tokencache.js';

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
 * for all of them: its hash (the caches' key) and the issuer it claims. Made
 * per request and dropped with it, so the token is kept nowhere.
 */
export class TokenFacts {
  private hashed?: string;
  private issuer?: string | null;
  constructor(readonly token: string) {}

  get hash(): string {
    return (this.hashed ??= tokenHash(this.token));
  }

  get claimedIssuer(): string | undefined {
    if (this.issuer === undefined) this.issuer = claimedIssuer(this.token) ?? null;
    return this.issuer ?? undefined;
  }
}

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `audiences`: who the caller needs the token to be for (empty: anyone).
   * `facts`: the token's hash and claimed issuer, shared with the other authenticators asked.
   */
  authenticateToken(token: string, audiences: readonly string[], facts?: TokenFacts): Promise<TokenResult> | TokenResult;
}

/** The first authenticator that accepts decides; when none does, every rejection is reported. */
export class UnionTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'token-union';
  constructor(private readonly authenticators: readonly TokenAuthenticator[]) {}

  async authenticateToken(token: string, audiences: readonly string[], facts = new TokenFacts(token)): Promise<TokenResult> {
    const reasons: string[] = [];
    for (const a of this.authenticators) {
      const r = await a.authenticateToken(token, audiences, facts);
      if (r.kind === 'user') return r;
      if (r.kind === 'rejected') reasons.push(r.reason);
    }
    return reasons.length ? { kind: 'rejected', reason: joinReasons(reasons) } : { kind: 'none' };
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

  async authenticateToken(token: string, audiences: readonly string[], facts?: TokenFacts): Promise<TokenResult> {
    const shared = audiences.length === 0 ? [...this.apiAudiences] : intersect(this.apiAudiences, audiences);
    if (audiences.length > 0 && shared.length === 0) return { kind: 'none' };
    const r = await this.inner.authenticateToken(token, audiences, facts);
    return r.kind === 'user' ? { ...r, audiences: shared } : r;
  }
}
