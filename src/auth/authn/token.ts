// Token authenticators: each looks at a bearer token (from a request's
// Authorization header, or from a TokenReview) and answers user, rejected
// (a token of its kind, but not valid) or none. Their union asks them in order.

import type { UserInfo } from '../../machinery/user.js';
import { joinReasons } from './authenticator.js';
import { intersect } from './audiences.js';

export type TokenResult =
  /** `audiences`: those of the requested ones the token is valid for. */
  | { kind: 'user'; user: UserInfo; audiences: string[] }
  | { kind: 'rejected'; reason: string }
  | { kind: 'none' };

export interface TokenAuthenticator {
  readonly name: string;
  /** `audiences`: who the caller needs the token to be for (empty: anyone). */
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResult> | TokenResult;
}

/** The first authenticator that accepts decides; when none does, every rejection is reported. */
export class UnionTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'token-union';
  constructor(private readonly authenticators: readonly TokenAuthenticator[]) {}

  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResult> {
    const reasons: string[] = [];
    for (const a of this.authenticators) {
      const r = await a.authenticateToken(token, audiences);
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

  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResult> {
    const shared = audiences.length === 0 ? [...this.apiAudiences] : intersect(this.apiAudiences, audiences);
    if (audiences.length > 0 && shared.length === 0) return { kind: 'none' };
    const r = await this.inner.authenticateToken(token, audiences);
    return r.kind === 'user' ? { ...r, audiences: shared } : r;
  }
}
