// Options of the identities established outside the server: the
// authenticating proxy, bootstrap tokens, OpenID Connect and the token
// webhook. Part of ServerOptions; kept apart so each can be read whole.

export interface ExternalIdentityOptions {
  /** Authenticating proxy: headers naming the user (the first with a value wins), its groups, and prefixes of extra keys. */
  requestheaderUsernameHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  /** CA bundle the proxy's client certificate must chain to before its headers are believed. */
  requestheaderClientCaFile?: string;
  /** CNs the proxy's certificate may carry; empty: any the CA signed. */
  requestheaderAllowedNames: string[];

  /** Bearer tokens `<id>.<secret>` kept in bootstrap token secrets. */
  enableBootstrapTokenAuth: boolean;

  /** OpenID Connect: the one issuer trusted (https, without the discovery path) and the client ID tokens are for. */
  oidcIssuerUrl?: string;
  oidcClientId?: string;
  oidcUsernameClaim: string;
  /** Unset: the issuer URL and `#` unless the claim is `email`; `-`: no prefix. */
  oidcUsernamePrefix?: string;
  oidcGroupsClaim?: string;
  oidcGroupsPrefix?: string;
  /** Claims (name, value) every token must carry. */
  oidcRequiredClaims: [string, string][];
  oidcSigningAlgs: string[];
  /** CA bundle of the provider's serving certificate; the host's roots when absent. */
  oidcCaFile?: string;

  /** Token webhook: a kubeconfig naming the remote service and how to reach it. */
  authenticationTokenWebhookConfigFile?: string;
  /** How long its answers (authenticated or not) are kept, in ms. */
  authenticationTokenWebhookCacheTtlMs: number;
  authenticationTokenWebhookVersion: 'v1' | 'v1beta1';
  /** How long one call may take, in ms (no flag, as upstream; capped by the request timeout). */
  authenticationTokenWebhookTimeoutMs: number;
}

export const defaultExternalIdentityOptions: ExternalIdentityOptions = {
  requestheaderUsernameHeaders: [],
  requestheaderGroupHeaders: [],
  requestheaderExtraHeadersPrefix: [],
  requestheaderAllowedNames: [],
  enableBootstrapTokenAuth: false,
  oidcUsernameClaim: 'sub',
  oidcRequiredClaims: [],
  oidcSigningAlgs: ['RS256'],
  authenticationTokenWebhookCacheTtlMs: 2 * 60 * 1000,
  authenticationTokenWebhookVersion: 'v1beta1',
  authenticationTokenWebhookTimeoutMs: 30 * 1000,
};
