// Bearer tokens: `Authorization: Bearer <token>` handed to the token
// authenticators. A token that none of them accepts is rejected (401), never
// made anonymous; the reason is logged, the client learns nothing of it.

import type { IncomingMessage } from 'node:http';
import type { Authenticator, AuthnResult } from './authenticator.js';
import type { TokenAuthenticator } from './token.js';

export const invalidBearerToken = 'invalid bearer token';

/** The token of an Authorization header, as upstream reads it; undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const value = (header ?? '').trim();
  if (value === '') return undefined;
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  // `Bearer  x` (two spaces) has an empty token: not a bearer token at all.
  return parts[1] === '' ? undefined : parts[1];
}

export class BearerTokenAuthenticator implements Authenticator {
  readonly name = 'bearer';
  constructor(private readonly tokens: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const token = bearerToken(req.headers.authorization);
    if (token === undefined) return { kind: 'none' };
    const result = await this.authenticateToken(token, this.apiAudiences);
    // Nothing after this filter needs the credential: drop it, as upstream does.
    if (result.kind === 'user') delete req.headers.authorization;
    return result;
  }

  /** One token for the given audiences (a TokenReview asks for its own). */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthnResult> {
    const r = await this.tokens.authenticateToken(token, audiences);
    if (r.kind === 'none') return { kind: 'rejected', reason: invalidBearerToken };
    return r;
  }
}
