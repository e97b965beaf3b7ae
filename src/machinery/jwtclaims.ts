// The registered claims of a JSON Web Token (RFC 7519) have fixed JSON
// types. Upstream decodes them into typed fields, so a token whose `exp` is a
// string fails to decode; read loosely, such a claim would simply vanish (and
// an expiry that vanishes is a token that never expires). Every token
// authenticator checks them here first.

import { ownValue } from './ownkeys.js';

const numericClaims = ['exp', 'nbf', 'iat'] as const;
const stringClaims = ['iss', 'sub', 'jti'] as const;

/** Why the registered claims of `payload` have the wrong types, or undefined when they are well typed (or absent). */
export function registeredClaimsProblem(payload: Record<string, unknown>): string | undefined {
  for (const claim of numericClaims) {
    const v = ownValue(payload, claim);
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) return `claim "${claim}" is not a number`;
  }
  for (const claim of stringClaims) {
    const v = ownValue(payload, claim);
    if (v !== undefined && typeof v !== 'string') return `claim "${claim}" is not a string`;
  }
  const aud = ownValue(payload, 'aud');
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((a) => typeof a === 'string'))) {
    return 'claim "aud" is neither a string nor a list of strings';
  }
  return undefined;
}

/** The audiences of a token whose claims passed `registeredClaimsProblem`: `aud` may be one string or a list. */
export function audiencesOf(payload: Record<string, unknown>): string[] {
  const aud = ownValue(payload, 'aud');
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? [...(aud as string[])] : [];
}
