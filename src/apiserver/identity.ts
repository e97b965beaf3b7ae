// Who a request comes from: the authenticators of the server's options, in
// upstream's order (the authenticating proxy, client certificates, then bearer
// tokens: static tokens, service-account tokens, bootstrap tokens, OpenID
// Connect, the token webhook), with anonymous requests as the options say.

import type { Logger } from 'pino';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { certificatePems } from '../pki/index.js';
import { RequestHeaderAuthenticator } from '../auth/authn/requestheader.js';
import { BootstrapTokenAuthenticator } from '../auth/authn/bootstraptoken.js';
import { OidcAuthenticator } from '../auth/authn/oidc.js';
import { WebhookTokenAuthenticator } from '../auth/authn/webhook.js';
import { readKubeconfigEndpoint } from '../client/kubeconfig.js';
import type { RemoteEndpoint } from '../machinery/endpoint.js';
import { UnionAuthenticator, withAuthenticatedGroup, type Authenticator } from '../auth/authn/authenticator.js';
import { X509Authenticator } from '../auth/authn/x509.js';
import { BearerTokenAuthenticator, invalidBearerToken } from '../auth/authn/bearer.js';
import { AudienceAgnostic, UnionTokenAuthenticator, type TokenAuthenticator } from '../auth/authn/token.js';
import { loadTokenFile, TokenFileAuthenticator, type TokenFile } from '../auth/authn/tokenfile.js';
import { anonymousAuthEnabled } from '../auth/authn/anonymous.js';
import { ServiceAccountTokenAuthenticator, type TokenObjects } from '../auth/authn/serviceaccount.js';
import { createTokenSigner, KeyMaterialError } from '../pki/index.js';
import { legacyServiceAccountIssuer, type TokenSigner } from '../machinery/serviceaccount.js';
import { authenticationRests, type TokenReviewer } from '../registry/authentication.js';
import type { Registry } from '../registry/registry.js';
import type { ServerOptions } from '../server/options.js';

/** What is read from the options' files before anything else starts, so a bad file stops the start early. */
export interface IdentityFiles {
  tokenFile?: TokenFile;
  /** The authenticating proxy's CAs (PEM), which the TLS layer trusts beside the client CAs. */
  requestHeaderCaPem?: string;
  /** The CAs of the OpenID Connect provider's serving certificate. */
  oidcCaPem?: string;
  /** The token webhook and how to reach it. */
  tokenWebhook?: RemoteEndpoint;
}

/** A bad identity option or file given to startServer (the CLI reports it in one line). */
export class IdentityConfigError extends Error {
  override name = 'IdentityConfigError';
}

/** The certificates of a CA bundle file named by `flag`; at least one. */
async function readCaBundle(flag: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new IdentityConfigError(`${flag} ${path}: ${(e as Error).message}`);
  }
  const pems = certificatePems(text);
  if (pems.length === 0) throw new IdentityConfigError(`${flag} ${path}: no certificate in the file`);
  return pems.join('');
}

const anchorsOf = (pem: string): X509Certificate[] => certificatePems(pem).map((c) => new X509Certificate(c));

/** Options of identity from outside that are valid alone but not together. */
function identityOptionsProblem(options: ServerOptions): string | undefined {
  if ((options.oidcIssuerUrl === undefined) !== (options.oidcClientId === undefined)) return '--oidc-issuer-url and --oidc-client-id must be given together';
  const issuer = options.oidcIssuerUrl;
  if (issuer !== undefined && (!URL.canParse(issuer) || new URL(issuer).protocol !== 'https:')) return '--oidc-issuer-url must be an https URL';
  if ((options.requestheaderClientCaFile === undefined) !== (options.requestheaderUsernameHeaders.length === 0)) {
    return '--requestheader-client-ca-file and --requestheader-username-headers must be given together';
  }
  return undefined;
}

export async function readIdentityFiles(options: ServerOptions, log: Logger): Promise<IdentityFiles> {
  const problem = identityOptionsProblem(options);
  if (problem) throw new IdentityConfigError(problem);
  const files: IdentityFiles = {};
  if (options.tokenAuthFile) {
    files.tokenFile = await loadTokenFile(options.tokenAuthFile);
    for (const warning of files.tokenFile.warnings) log.warn(warning);
  }
  if (options.requestheaderClientCaFile) files.requestHeaderCaPem = await readCaBundle('--requestheader-client-ca-file', options.requestheaderClientCaFile);
  if (options.oidcCaFile) files.oidcCaPem = await readCaBundle('--oidc-ca-file', options.oidcCaFile);
  if (options.authenticationTokenWebhookConfigFile) {
    try {
      files.tokenWebhook = await readKubeconfigEndpoint(options.authenticationTokenWebhookConfigFile);
    } catch (e) {
      throw new IdentityConfigError(`--authentication-token-webhook-config-file ${options.authenticationTokenWebhookConfigFile}: ${(e as Error).message}`);
    }
  }
  return files;
}

/** The audiences this server's tokens are for: --api-audiences, else the first issuer. */
export function apiAudiencesOf(options: ServerOptions): string[] {
  if (options.apiAudiences.length > 0) return [...options.apiAudiences];
  return options.serviceAccountIssuer.slice(0, 1);
}

export interface IdentityParts {
  authenticator: UnionAuthenticator;
  /** Token authentication alone, for TokenReviews. */
  bearer: BearerTokenAuthenticator;
  apiAudiences: string[];
}

export interface AuthenticationInputs {
  /** The modes of the authorizer, which decide whether anonymous requests are on by default. */
  authorizationModes: readonly string[];
  /** Keys that verify service-account tokens. */
  serviceAccountPublicKeyPems: readonly string[];
  /** The objects service-account tokens depend on. */
  objects: TokenObjects;
  /** The client CAs (PEM): a client certificate must chain to one of them to name a user. */
  clientCaPem: string;
}

export function buildAuthentication(options: ServerOptions, files: IdentityFiles, inputs: AuthenticationInputs): IdentityParts {
  const apiAudiences = apiAudiencesOf(options);
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (files.tokenFile) tokenAuthenticators.push(new AudienceAgnostic(new TokenFileAuthenticator(files.tokenFile.tokens), apiAudiences));
  tokenAuthenticators.push(new ServiceAccountTokenAuthenticator({
    issuers: options.serviceAccountIssuer,
    publicKeyPems: inputs.serviceAccountPublicKeyPems,
    apiAudiences,
    objects: inputs.objects,
  }));
  if (options.enableBootstrapTokenAuth) tokenAuthenticators.push(new AudienceAgnostic(new BootstrapTokenAuthenticator(inputs.objects), apiAudiences));
  // After the service-account tokens, as upstream: both are JWTs, and only this one may call its provider.
  if (options.oidcIssuerUrl && options.oidcClientId) {
    tokenAuthenticators.push(new AudienceAgnostic(new OidcAuthenticator({
      issuerUrl: options.oidcIssuerUrl, clientId: options.oidcClientId,
      usernameClaim: options.oidcUsernameClaim, usernamePrefix: options.oidcUsernamePrefix,
      groupsClaim: options.oidcGroupsClaim, groupsPrefix: options.oidcGroupsPrefix,
      requiredClaims: options.oidcRequiredClaims, signingAlgs: options.oidcSigningAlgs,
      caPem: files.oidcCaPem, timeoutMs: Math.min(10_000, options.requestTimeoutMs),
    }), apiAudiences));
  }
  if (files.tokenWebhook) {
    tokenAuthenticators.push(new WebhookTokenAuthenticator({
      endpoint: files.tokenWebhook, version: options.authenticationTokenWebhookVersion, apiAudiences,
      cacheTtlMs: options.authenticationTokenWebhookCacheTtlMs,
      // A request never waits on the webhook longer than it may wait at all.
      timeoutMs: Math.min(options.authenticationTokenWebhookTimeoutMs, options.requestTimeoutMs),
    }));
  }
  const bearer = new BearerTokenAuthenticator(new UnionTokenAuthenticator(tokenAuthenticators), apiAudiences);
  const requestAuthenticators: Authenticator[] = [];
  if (files.requestHeaderCaPem) {
    requestAuthenticators.push(new RequestHeaderAuthenticator({
      anchors: anchorsOf(files.requestHeaderCaPem),
      allowedNames: options.requestheaderAllowedNames,
      usernameHeaders: options.requestheaderUsernameHeaders,
      groupHeaders: options.requestheaderGroupHeaders,
      extraHeaderPrefixes: options.requestheaderExtraHeadersPrefix,
    }));
  }
  // The TLS layer trusts the proxy's CAs too: then a certificate must chain to a client CA to name a user.
  requestAuthenticators.push(new X509Authenticator(files.requestHeaderCaPem ? anchorsOf(inputs.clientCaPem) : undefined), bearer);
  const authenticator = new UnionAuthenticator(requestAuthenticators, {
    anonymous: anonymousAuthEnabled(options.anonymousAuth, inputs.authorizationModes),
    apiAudiences,
  });
  return { authenticator, bearer, apiAudiences };
}

/** Signers of service-account tokens: bound ones (the first issuer) and legacy ones (for token secrets). */
export interface TokenSigners {
  bound: TokenSigner;
  legacy: TokenSigner;
}

export async function tokenSigners(options: ServerOptions, signingKeyPem: string): Promise<TokenSigners> {
  try {
    const [bound, legacy] = await Promise.all([
      createTokenSigner(signingKeyPem, options.serviceAccountIssuer[0]!),
      createTokenSigner(signingKeyPem, legacyServiceAccountIssuer),
    ]);
    return { bound, legacy };
  } catch (e) {
    // A key of a type tokens are not signed with (Ed25519, an odd curve): a start-up failure to report in one line.
    throw new KeyMaterialError(`--service-account-signing-key-file: ${(e as Error).message}`);
  }
}

/** Serves authentication/v1: token requests, token reviews (by the same token authenticators as requests) and self reviews. */
export function serveAuthentication(registry: Registry, options: ServerOptions, parts: IdentityParts, signers: TokenSigners): void {
  const review: TokenReviewer = async (token, audiences) => {
    const r = await parts.bearer.authenticateToken(token, audiences);
    if (r.kind === 'user') return { user: withAuthenticatedGroup(r.user), audiences: r.audiences };
    return { error: r.kind === 'rejected' ? r.reason : invalidBearerToken };
  };
  const issuing = {
    signer: signers.bound,
    apiAudiences: parts.apiAudiences,
    maxExpirationSeconds: Math.floor(options.serviceAccountMaxTokenExpirationMs / 1000),
    extendExpiration: options.serviceAccountExtendTokenExpiration,
  };
  for (const rest of authenticationRests(registry, issuing, review)) registry.addRest(rest);
}
