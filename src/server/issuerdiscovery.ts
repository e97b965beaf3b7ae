// Service-account issuer discovery, as upstream: an OpenID provider
// configuration at /.well-known/openid-configuration and the key set at
// /openid/v1/jwks, so that a relying party outside the cluster can verify
// service-account tokens with nothing but these two documents. Both are
// rendered once at start (the keys do not change while the server runs).
// OpenID Connect requires an https issuer without query or fragment: for any
// other issuer nothing is served and the start logs why, as upstream does.

import { createPublicKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenAlgorithmOf, tokenKeyId } from '../pki/index.js';
import { errors } from '../machinery/errors.js';

export const openIdConfigPath = '/.well-known/openid-configuration';
export const jwksPath = '/openid/v1/jwks';

/** Relying parties may keep both documents this long (upstream's default max-age). */
const maxAgeSeconds = 3600;

export interface IssuerDiscoveryInputs {
  /** The first --service-account-issuer: the one tokens are signed for. */
  issuer: string;
  /** --service-account-jwks-uri; else https://<address>/openid/v1/jwks. */
  jwksUri?: string;
  /** host:port the server is reached at. */
  address: string;
  /** Keys that verify service-account tokens (PEM keys or certificates). */
  publicKeyPems: readonly string[];
}

/** Why the documents cannot be served for these inputs; undefined when they can. */
export function issuerDiscoveryProblem(issuer: string, jwksUri: string | undefined): string | undefined {
  if (!URL.canParse(issuer)) return `issuer URL ${JSON.stringify(issuer)} is not a URL`;
  const iss = new URL(issuer);
  if (iss.protocol !== 'https:') return `issuer URL must use https scheme, got: ${issuer}`;
  if (iss.search !== '') return `issuer URL may not include a query, got: ${issuer}`;
  if (iss.hash !== '') return `issuer URL may not include a fragment, got: ${issuer}`;
  if (jwksUri !== undefined && (!URL.canParse(jwksUri) || new URL(jwksUri).protocol !== 'https:')) return `jwksURI requires https scheme, got: ${jwksUri}`;
  return undefined;
}

interface PublicJwk extends Record<string, unknown> {
  kid: string;
  alg: string;
}

/** The keys as JWKs with upstream's kid and alg; keys tokens are never signed with are left out, each key once. */
function publicJwks(pems: readonly string[]): PublicJwk[] {
  const byKid = new Map<string, PublicJwk>();
  for (const pem of pems) {
    const key: KeyObject = createPublicKey(pem);
    let alg: string;
    try {
      alg = tokenAlgorithmOf(key);
    } catch {
      continue;
    }
    const kid = tokenKeyId(key);
    byKid.set(kid, { use: 'sig', ...key.export({ format: 'jwk' }), kid, alg });
  }
  return [...byKid.values()];
}

export type IssuerDiscoveryHandler = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

/** The handler of both paths (with or without a trailing slash); false for any other path. */
export function issuerDiscovery(inputs: IssuerDiscoveryInputs): IssuerDiscoveryHandler {
  const keys = publicJwks(inputs.publicKeyPems);
  const config = Buffer.from(JSON.stringify({
    issuer: inputs.issuer,
    jwks_uri: inputs.jwksUri ?? `https://${inputs.address}${jwksPath}`,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
  }));
  const keySet = Buffer.from(JSON.stringify({ keys }));
  const documents = new Map<string, [Buffer, string]>([
    [openIdConfigPath, [config, 'application/json']],
    [jwksPath, [keySet, 'application/jwk-set+json']],
  ]);
  return (req, res, path) => {
    const document = documents.get(path.endsWith('/') ? path.slice(0, -1) : path);
    if (!document) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') throw errors.methodNotAllowed();
    const [body, contentType] = document;
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length, 'Cache-Control': `public, max-age=${maxAgeSeconds}` });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
