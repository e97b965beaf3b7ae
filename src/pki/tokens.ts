// Signing service-account tokens: a compact JWS over the claims, with the
// algorithm the key calls for (RS256 for RSA, ES256/384/512 by curve) and,
// as upstream, a key id made from the SHA-256 of the public key.

import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { CompactSign, importPKCS8 } from 'jose';
import type { TokenSigner } from '../machinery/serviceaccount.js';
import { normalizePrivateKeyPem } from './keys.js';

const curveAlgorithms: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** The JWS algorithm for a key; throws for key types upstream does not sign tokens with. */
export function tokenAlgorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const alg = curveAlgorithms[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg) return alg;
    throw new Error(`unsupported EC curve ${key.asymmetricKeyDetails?.namedCurve} for service-account tokens (P-256, P-384 or P-521)`);
  }
  throw new Error(`unsupported key type ${key.asymmetricKeyType} for service-account tokens (RSA or ECDSA)`);
}

/** base64url(SHA-256(SPKI DER)) of the key's public half (a private or a public key). */
export function tokenKeyId(key: KeyObject): string {
  const spki = (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64url');
}

/** A signer of tokens of `issuer` with a PEM private key (PKCS#8, PKCS#1 or SEC1). */
export async function createTokenSigner(privateKeyPem: string, issuer: string): Promise<TokenSigner> {
  const pkcs8 = normalizePrivateKeyPem(privateKeyPem, 'service-account signing key');
  const keyObject = createPrivateKey(pkcs8);
  const alg = tokenAlgorithmOf(keyObject);
  const kid = tokenKeyId(keyObject);
  const key = await importPKCS8(pkcs8, alg);
  const encoder = new TextEncoder();
  return {
    issuer,
    sign: (claims) => new CompactSign(encoder.encode(JSON.stringify({ iss: issuer, ...claims })))
      .setProtectedHeader({ alg, kid })
      .sign(key),
  };
}
