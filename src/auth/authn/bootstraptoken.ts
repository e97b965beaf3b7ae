// Bootstrap tokens as bearer tokens: `<id>.<secret>` authenticates as
// `system:bootstrap:<id>` (group system:bootstrappers plus the secret's valid
// extra groups) while its secret exists, agrees, allows authentication and
// has not expired. Anything else is no opinion, as upstream: the request then
// fails as carrying an invalid bearer token. Secrets are read from the watch
// cache, never from storage per request.

import { timingSafeEqual } from 'node:crypto';
import { vocabulary } from '../../machinery/vocabulary.js';
import {
  bootstrapGroups, bootstrapKeys, bootstrapSecretName, bootstrapUserPrefix, isExpired, parseBootstrapToken, secretValue,
} from '../../machinery/bootstraptoken.js';
import type { TokenObjects } from './serviceaccount.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

/** Equal text, compared in time that does not depend on where they differ. */
function sameSecret(kept: string, given: string): boolean {
  const a = Buffer.from(kept, 'utf8');
  const b = Buffer.from(given, 'utf8');
  // The length is no secret (always 16); the bytes are.
  return a.length === b.length && timingSafeEqual(a, b);
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';

  constructor(private readonly objects: TokenObjects, private readonly now: () => number = Date.now) {}

  async authenticateToken(token: string): Promise<TokenResult> {
    const parsed = parseBootstrapToken(token);
    if (!parsed) return { kind: 'none' };
    const secret = await this.objects.get('secrets', vocabulary.systemNamespace, bootstrapSecretName(parsed.id));
    if (!secret || secret.metadata?.deletionTimestamp) return { kind: 'none' };
    const typed = secret as { type?: string; data?: Record<string, string> };
    if (typed.type !== vocabulary.bootstrapTokenSecretType || !typed.data) return { kind: 'none' };
    if (!sameSecret(secretValue(typed, bootstrapKeys.tokenSecret) ?? '', parsed.secret)) return { kind: 'none' };
    if (secretValue(typed, bootstrapKeys.tokenId) !== parsed.id) return { kind: 'none' };
    if (isExpired(typed, this.now())) return { kind: 'none' };
    if (secretValue(typed, bootstrapKeys.usageAuthentication) !== 'true') return { kind: 'none' };
    const groups = bootstrapGroups(typed);
    if ('error' in groups) return { kind: 'none' };
    return { kind: 'user', user: { username: `${bootstrapUserPrefix}${parsed.id}`, groups }, audiences: [] };
  }
}
