// Bearer tokens: `Authorization: Bearer <token>` handed to the token
// authenticators. A token that none of them accepts is rejected (401), never
// made anonymous; the reason is logged, the client learns nothing of it.

import type { IncomingMessage } from 'node:http';
import type { Authenticator, AuthnResult } from './authenticator.js';
import { TokenFacts, type TokenAuthenticator, type TokenResult } from './token.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';

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

  authenticate(req: IncomingMessage): MaybePromise<AuthnResult> {
    const header = req.headers.authorization;
    const token = bearerToken(header);
    if (token === undefined) return { kind: 'none' };
    return andThen(this.tokens.authenticateToken(token, this.apiAudiences, factsOf(req, header!, token)), (r) => {
      // Nothing after this filter needs the credential: drop it, as upstream does.
      if (r.kind === 'user') delete req.headers.authorization;
      return bearerResult(r);
    });
  }

  /** One token for the given audiences (a TokenReview asks for its own). */
  authenticateToken(token: string, audiences: readonly string[]): MaybePromise<AuthnResult> {
    return andThen(this.tokens.authenticateToken(token, audiences), bearerResult);
  }
}

/** A bearer token no authenticator knows is a bad credential, never no credential. */
function bearerResult(r: TokenResult): AuthnResult {
  return r.kind === 'none' ? { kind: 'rejected', reason: invalidBearerToken } : r;
}

/**
 * The token facts of the connection's previous request when it sent the very
 * same Authorization header (a client on a keep-alive connection sends its
 * token again with every request): its hash and what was verified of it are
 * not worked out again. Every check that depends on the time or on stored
 * objects still runs per request. Kept with the connection and dropped with it.
 */
const factsByConnection = new WeakMap<object, TokenFacts>();

function factsOf(req: IncomingMessage, header: string, token: string): TokenFacts {
  const connection = req.socket;
  let facts = connection ? factsByConnection.get(connection) : undefined;
  if (facts?.header !== header) {
    facts = new TokenFacts(token, header);
    if (connection) factsByConnection.set(connection, facts);
  }
  return facts;
}
