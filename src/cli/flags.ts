// Command-line flags, upstream style. The flag table is data: adding a flag is
// one `option(...)` line naming its type, its ServerOptions field and its help.

import { boolType, intType, portType, ipType, stringType, listOf, commaListOf, urlType, enumOf, durationType, type FlagType } from './flagtypes.js';
import { parseNodePortRange, parseServiceIPRanges } from '../registry/allocation/index.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import { formatDuration, parseDuration } from '../machinery/time.js';
import { auditModes, loggingFormats, defaultServerOptions, type ServerOptions } from '../server/options.js';
import { backendKinds, isSharedStore } from '../storage/kinds.js';
import { badControllerEntry, controllerNames, disabledByDefault } from '../controllers/names.js';
import { authorizationModeNames, badAuthorizationMode } from '../auth/authz/modes.js';
import { parseRuntimeConfig } from '../api/versioning.js';

export const commandName = `${product.name}-apiserver`;

/** A bad command line. The CLI prints the message and exits with status 2. */
export class FlagError extends Error {
  override name = 'FlagError';
  constructor(
    message: string,
    readonly flag?: string,
    readonly value?: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------
// Value types of this server's own (the generic ones are flagtypes.ts)

/** The CIDR (or dual-stack pair) Service cluster IPs come from, checked as upstream checks it. */
export const serviceCidrType: FlagType<string> = {
  label: 'string',
  parse(raw) {
    parseServiceIPRanges(raw);
    return raw;
  },
  format: String,
};

/** Ports min-max, inclusive, as upstream's portRange. */
export const portRangeType: FlagType<string> = {
  label: 'portRange',
  parse(raw) {
    parseNodePortRange(raw);
    return raw;
  },
  format: String,
};

export { formatDuration, parseDuration };

// ---------------------------------------------------------------------------
// The flag table

export interface Flag {
  name: string;
  /** One-letter alias, e.g. `h` for `-h`. */
  shorthand?: string;
  type: FlagType<unknown>;
  help: string;
  /** The value shown as default; `undefined` prints nothing. */
  defaultText(defaults: ServerOptions): string | undefined;
  /** Stores the parsed value. */
  apply(options: ServerOptions, value: unknown): void;
}

/** A flag that sets one ServerOptions field. `shownDefault` overrides the printed default. */
function option<K extends keyof ServerOptions>(
  name: string,
  type: FlagType<NonNullable<ServerOptions[K]>>,
  key: K,
  help: string,
  shownDefault?: string,
): Flag {
  const erased = type as FlagType<unknown>;
  return {
    name,
    type: erased,
    help,
    defaultText: (defaults) =>
      shownDefault ?? (defaults[key] === undefined ? undefined : erased.format(defaults[key])),
    apply: (options, value) => {
      options[key] = value as ServerOptions[K];
    },
  };
}

const storageBackends = backendKinds;
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const helpFlag: Flag = {
  name: 'help',
  shorthand: 'h',
  type: boolType as FlagType<unknown>,
  help: `Print this help and exit.`,
  defaultText: () => undefined,
  apply: () => {},
};

export const versionFlag: Flag = {
  name: 'version',
  type: boolType as FlagType<unknown>,
  help: `Print the version and exit.`,
  defaultText: () => undefined,
  apply: () => {},
};

// Identity: who a request comes from (tokens, anonymous requests).

/** Repeatable, and each occurrence may list several values separated by commas (pflag's stringSlice). */
export const stringSliceType: FlagType<string[]> = {
  label: 'strings',
  parse: (raw, previous) => [...(previous ?? []), ...raw.split(',').map((v) => v.trim()).filter((v) => v !== '')],
  format: (values) => `[${values.join(',')}]`,
};

const hourMs = 3600_000;
const maxTokenSeconds = 2 ** 32;

/** 0 (no cap) or between an hour and 2^32 seconds, as upstream checks it. */
export const tokenExpirationType: FlagType<number> = {
  ...durationType,
  parse(raw) {
    const ms = durationType.parse(raw, undefined);
    if (ms !== 0 && (ms < hourMs || ms > maxTokenSeconds * 1000)) throw new Error('must be between 1 hour and 2^32 seconds');
    return ms;
  },
};

/** `--controllers`: a list of `*`, `name` and `-name` entries, each naming a known controller. */
export const controllersType: FlagType<string[]> = {
  ...stringSliceType,
  parse(raw, previous) {
    const values = stringSliceType.parse(raw, previous);
    for (const value of values) {
      const bad = badControllerEntry(value);
      if (bad) throw new Error(bad);
    }
    return values;
  },
};

const identityFlags: readonly Flag[] = [
  option('anonymous-auth', boolType, 'anonymousAuth', 'Let requests without credentials in as system:anonymous (group system:unauthenticated) instead of answering 401.', 'true unless the authorization mode is AlwaysAllow'),
  option('token-auth-file', stringType, 'tokenAuthFile', 'CSV file of static bearer tokens: token,user,uid[,"group1,group2"].', 'none'),
  option('api-audiences', stringSliceType, 'apiAudiences', 'Audiences a token must be meant for to authenticate to this server; comma-separated, repeatable.', 'the first --service-account-issuer'),
  option('service-account-max-token-expiration', tokenExpirationType, 'serviceAccountMaxTokenExpirationMs', 'Longest lifetime a token request may get (0: no cap; else 1h to 2^32 s).'),
  option('service-account-extend-token-expiration', boolType, 'serviceAccountExtendTokenExpiration', 'Extend pod-bound tokens of the admission-injected lifetime to a year (warning after the requested one).'),
  option('controllers', controllersType, 'controllers', `In-process controllers to run: * for all but ${[...disabledByDefault].join(', ')}, name to enable, -name to disable; the first entry naming one decides (${controllerNames.join(', ')}).`),
];

// ---------------------------------------------------------------------------
// Admission flags

export const admissionFlags: readonly Flag[] = [
  option('enable-admission-plugins', stringSliceType, 'enableAdmissionPlugins', 'Admission plugins to turn on beside the default ones (comma-separated; their order does not matter).'),
  option('disable-admission-plugins', stringSliceType, 'disableAdmissionPlugins', 'Admission plugins to turn off, default ones included (comma-separated).'),
  option('admission-control-config-file', stringType, 'admissionControlConfigFile', 'AdmissionConfiguration file (YAML or JSON) with the configuration of admission plugins.', 'none'),
  option('default-not-ready-toleration-seconds', intType, 'defaultNotReadyTolerationSeconds', 'Seconds a pod tolerates the not-ready:NoExecute taint; DefaultTolerationSeconds adds the toleration to pods that have none.'),
  option('default-unreachable-toleration-seconds', intType, 'defaultUnreachableTolerationSeconds', 'Seconds a pod tolerates the unreachable:NoExecute taint; DefaultTolerationSeconds adds the toleration to pods that have none.'),
];

// ---------------------------------------------------------------------------
// Versioning: which API versions are served, feature gates, hidden metrics.

/** `--runtime-config`: `key[=value]` pairs, comma-separated and repeatable (upstream's ConfigurationMap). */
export const runtimeConfigType: FlagType<[string, string][]> = {
  label: 'mapStringString',
  parse: (raw, previous) => parseRuntimeConfig(raw, previous),
  format: (pairs) => `[${pairs.map(([k, v]) => (v === '' ? k : `${k}=${v}`)).join(',')}]`,
};

/** `--feature-gates`: `Name=bool` pairs, comma-separated and repeatable (pflag's mapStringBool); a later name replaces an earlier one. */
export const featureGatesType: FlagType<[string, boolean][]> = {
  label: 'mapStringBool',
  parse(raw, previous) {
    const gates = new Map(previous ?? []);
    for (const part of raw.split(',')) {
      if (part.trim() === '') continue;
      const equals = part.indexOf('=');
      if (equals <= 0) throw new Error(`missing bool value for ${part.trim()}`);
      const name = part.slice(0, equals).trim();
      const value = part.slice(equals + 1).trim();
      let on: boolean;
      try {
        on = boolType.parse(value, undefined);
      } catch {
        throw new Error(`invalid value of ${name}=${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
      }
      gates.delete(name);
      gates.set(name, on);
    }
    return [...gates];
  },
  format: (gates) => `[${gates.map(([k, v]) => `${k}=${v}`).join(',')}]`,
};

const versioningFlags: readonly Flag[] = [
  option('runtime-config', runtimeConfigType, 'runtimeConfig', 'key[=value] pairs turning API versions on and off: <group>/<version> (v1 for the core group), <group>/<version>/<resource>, api/all, api/ga, api/beta, api/alpha; an omitted value is true. Alpha versions are off unless turned on; removed versions cannot be named.'),
  option('feature-gates', featureGatesType, 'featureGates', 'Name=true|false pairs of feature gates (comma-separated). Upstream API-server gates this server does not implement are accepted with a warning; an unknown gate, or turning off a GA gate locked on, is refused.'),
  option('show-hidden-metrics-for-version', stringType, 'showHiddenMetricsForVersion', 'The previous minor release (the only value accepted, e.g. 1.31): show the metrics it deprecated, which are hidden otherwise.', 'none'),
];

// ---------------------------------------------------------------------------
// Authorization: which modules decide, and their files.

/** `--authorization-mode`: comma-separated, each a mode this server has. */
export const authorizationModesType: FlagType<string[]> = {
  ...stringSliceType,
  parse(raw, previous) {
    const values = stringSliceType.parse(raw, previous);
    for (const value of values) {
      const bad = badAuthorizationMode(value);
      if (bad) throw new Error(bad);
    }
    return values;
  },
};

const authorizationFlags: readonly Flag[] = [
  option('authorization-mode', authorizationModesType, 'authorizationMode', `Ordered list of authorization modules: ${authorizationModeNames.join(', ')}; the first that allows or denies decides.`),
  option('authorization-policy-file', stringType, 'authorizationPolicyFile', 'ABAC policy file: one JSON Policy object per line; needs --authorization-mode ABAC.', 'none'),
  option('authorization-webhook-config-file', stringType, 'authorizationWebhookConfigFile', 'Kubeconfig-format file naming the webhook authorizer; needs --authorization-mode Webhook.', 'none'),
  option('authorization-webhook-version', enumOf(['v1', 'v1beta1'] as const), 'authorizationWebhookVersion', 'apiVersion of the SubjectAccessReview sent to the webhook: v1 or v1beta1.'),
  option('authorization-webhook-cache-authorized-ttl', durationType, 'authorizationWebhookCacheAuthorizedTtlMs', 'How long to cache allowed answers of the webhook authorizer.'),
  option('authorization-webhook-cache-unauthorized-ttl', durationType, 'authorizationWebhookCacheUnauthorizedTtlMs', 'How long to cache not-allowed answers of the webhook authorizer.'),
];

const certificateSigningFlags: readonly Flag[] = [
  option('cluster-signing-cert-file', stringType, 'clusterSigningCertFile', 'CA certificate (PEM) the built-in certificate signers sign with; needs --cluster-signing-key-file.', 'the generated CA'),
  option('cluster-signing-key-file', stringType, 'clusterSigningKeyFile', 'Private key (PEM) of --cluster-signing-cert-file.', 'the generated CA\'s key'),
  option('cluster-signing-duration', durationType, 'clusterSigningDurationMs', 'Longest lifetime of certificates the built-in signers issue; a request\'s expirationSeconds may ask for less.'),
];

// ---------------------------------------------------------------------------
// Identity from outside: authenticating proxy, bootstrap tokens, OpenID Connect, token webhook.

/** An https URL (the OIDC issuer). */
export const httpsUrlType: FlagType<string> = {
  ...urlType,
  parse(raw) {
    urlType.parse(raw, undefined);
    if (new URL(raw).protocol !== 'https:') throw new Error('must be an https URL');
    return raw;
  },
};

/** `key=value` pairs, comma-separated and repeatable (pflag's mapStringString); a later key replaces an earlier one. */
export const keyValuePairsType: FlagType<[string, string][]> = {
  label: 'mapStringString',
  parse(raw, previous) {
    const pairs = [...(previous ?? [])];
    for (const part of raw.split(',')) {
      const equals = part.indexOf('=');
      if (equals <= 0) throw new Error(`${JSON.stringify(part)} must be formatted as key=value`);
      const key = part.slice(0, equals);
      const at = pairs.findIndex(([k]) => k === key);
      if (at >= 0) pairs.splice(at, 1);
      pairs.push([key, part.slice(equals + 1)]);
    }
    return pairs;
  },
  format: (pairs) => `[${pairs.map(([k, v]) => `${k}=${v}`).join(',')}]`,
};

/** The JWS algorithms an ID token may be signed with (asymmetric only, as upstream). */
export const oidcSigningAlgs = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

const externalIdentityFlags: readonly Flag[] = [
  option('requestheader-username-headers', stringSliceType, 'requestheaderUsernameHeaders', 'Request headers naming the user, in order; the first with a value wins (X-Remote-User is common).'),
  option('requestheader-group-headers', stringSliceType, 'requestheaderGroupHeaders', 'Request headers whose every value is a group (X-Remote-Group is common).'),
  option('requestheader-extra-headers-prefix', stringSliceType, 'requestheaderExtraHeadersPrefix', 'Request header prefixes of extra user information; the rest of the name, lowercased and percent-decoded, is the key (X-Remote-Extra- is common).'),
  option('requestheader-client-ca-file', stringType, 'requestheaderClientCaFile', 'CA bundle that must have signed the authenticating proxy\'s client certificate before its request headers are believed.', 'none'),
  option('requestheader-allowed-names', stringSliceType, 'requestheaderAllowedNames', 'Common names the authenticating proxy\'s certificate may carry; empty: any the CA signed.'),
  option('enable-bootstrap-token-auth', boolType, 'enableBootstrapTokenAuth', 'Accept bootstrap tokens (<id>.<secret>, kept in secrets of the bootstrap token type) as bearer tokens.'),
  option('oidc-issuer-url', httpsUrlType, 'oidcIssuerUrl', 'https URL of the OpenID Connect issuer trusted for ID tokens (discovery path excluded); needs --oidc-client-id.', 'none'),
  option('oidc-client-id', stringType, 'oidcClientId', 'Client ID every ID token must name in its aud claim; needs --oidc-issuer-url.', 'none'),
  option('oidc-username-claim', stringType, 'oidcUsernameClaim', 'ID token claim used as the user name; claims other than email get the issuer URL and # as prefix unless a username prefix is given.'),
  option('oidc-username-prefix', stringType, 'oidcUsernamePrefix', 'Prefix of user names from ID tokens; - for none.', 'the issuer URL and # unless the claim is email'),
  option('oidc-groups-claim', stringType, 'oidcGroupsClaim', 'ID token claim holding the user\'s groups (a string or a list of strings).', 'none'),
  option('oidc-groups-prefix', stringType, 'oidcGroupsPrefix', 'Prefix of group names from ID tokens.', 'none'),
  option('oidc-required-claim', keyValuePairsType, 'oidcRequiredClaims', 'key=value claims every ID token must carry; comma-separated, repeatable.'),
  option('oidc-signing-algs', commaListOf(enumOf(oidcSigningAlgs)), 'oidcSigningAlgs', `JWS algorithms ID tokens may be signed with: ${oidcSigningAlgs.join(', ')}.`),
  option('oidc-ca-file', stringType, 'oidcCaFile', 'CA bundle that verifies the OpenID Connect provider\'s serving certificate.', 'the host\'s roots'),
  option('authentication-token-webhook-config-file', stringType, 'authenticationTokenWebhookConfigFile', 'Kubeconfig-format file naming the token authentication webhook (cluster: server and CA; user: client certificate).', 'none'),
  option('authentication-token-webhook-cache-ttl', durationType, 'authenticationTokenWebhookCacheTtlMs', 'How long the token webhook\'s answers are cached, authenticated or not.'),
  option('authentication-token-webhook-version', enumOf(['v1', 'v1beta1'] as const), 'authenticationTokenWebhookVersion', 'apiVersion of the TokenReview sent to the token webhook: v1 or v1beta1.'),
];

// ---------------------------------------------------------------------------
// Operating the server: in-flight limits, audit, start and stop, request logs.

/** A rate or other number that may have a fraction, not negative. */
export const rateType: FlagType<number> = {
  label: 'float',
  parse(raw) {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) throw new Error('not a number');
    if (value < 0) throw new Error('must not be negative');
    return value;
  },
  format: String,
};

/** A count that may be 0 (often: no limit). */
export const countType: FlagType<number> = {
  ...intType,
  parse(raw) {
    const value = intType.parse(raw, undefined);
    if (value < 0) throw new Error('must not be negative');
    return value;
  },
};

/** A count of at least 1. */
const positiveCountType: FlagType<number> = {
  ...countType,
  parse(raw) {
    const value = countType.parse(raw, undefined);
    if (value < 1) throw new Error('must be at least 1');
    return value;
  },
};

const operationFlags: readonly Flag[] = [
  option('max-requests-inflight', countType, 'maxRequestsInflight', 'Most non-mutating requests served at once; more are answered 429 with Retry-After (0: no limit). Watches, health probes and system:masters are never limited.'),
  option('max-mutating-requests-inflight', countType, 'maxMutatingRequestsInflight', 'Most mutating requests served at once; more are answered 429 (0: no limit).'),
  option('audit-policy-file', stringType, 'auditPolicyFile', `Audit policy (${vocabulary.auditGroup}/v1 Policy, YAML or JSON); without it nothing is audited.`, 'none'),
  option('audit-log-path', stringType, 'auditLogPath', 'File the audit events are appended to; - for standard output.', 'none'),
  option('audit-log-format', enumOf(['json', 'legacy'] as const), 'auditLogFormat', 'Format of the audit log: json (one Event per line) or legacy (one text line per event).'),
  option('audit-log-mode', enumOf(auditModes), 'auditLogMode', 'How events reach the audit log: batch (written in the background), blocking (a request waits for its RequestReceived event to be written) or blocking-strict (and fails with 500 when that write fails).'),
  option('audit-log-maxage', countType, 'auditLogMaxAge', 'Days to keep rotated audit log files (0: no limit).'),
  option('audit-log-maxbackup', countType, 'auditLogMaxBackup', 'Rotated audit log files to keep (0: no limit).'),
  option('audit-log-maxsize', countType, 'auditLogMaxSize', 'Megabytes an audit log file reaches before it is rotated (0: never).'),
  option('audit-webhook-config-file', stringType, 'auditWebhookConfigFile', 'Kubeconfig-format file naming the audit webhook, which gets EventLists in batches.', 'none'),
  option('audit-webhook-batch-buffer-size', countType, 'auditWebhookBatchBufferSize', 'Events buffered for the audit webhook before new ones are dropped.'),
  option('audit-webhook-batch-max-size', countType, 'auditWebhookBatchMaxSize', 'Most events in one batch sent to the audit webhook.'),
  option('audit-webhook-batch-max-wait', durationType, 'auditWebhookBatchMaxWaitMs', 'Longest an event waits before a partial batch is sent to the audit webhook.'),
  option('audit-webhook-initial-backoff', durationType, 'auditWebhookInitialBackoffMs', 'Wait before a batch the audit webhook failed to take (reset connection, 429, 500, 504, Retry-After) is sent again; each later retry waits 1.5 times longer, five tries in all.'),
  option('audit-webhook-batch-initial-backoff', durationType, 'auditWebhookInitialBackoffMs', 'Deprecated: use --audit-webhook-initial-backoff.'),
  option('audit-webhook-batch-throttle-enable', boolType, 'auditWebhookBatchThrottleEnable', 'Limit how many batches a second the audit webhook gets (the throttle qps and burst flags).'),
  option('audit-webhook-batch-throttle-qps', rateType, 'auditWebhookBatchThrottleQps', 'Batches a second the audit webhook gets at most, on average.'),
  option('audit-webhook-batch-throttle-burst', countType, 'auditWebhookBatchThrottleBurst', 'Batches sent to the audit webhook at once after a quiet while.'),
  option('audit-webhook-mode', enumOf(auditModes), 'auditWebhookMode', 'How events reach the audit webhook: batch (buffered, posted in batches), blocking (each event posted on its own; a request waits for its RequestReceived event) or blocking-strict (and fails with 500 when that post fails).'),
  option('livez-grace-period', durationType, 'livezGracePeriodMs', 'Time after start during which /livez does not fail for post-start work still running.'),
  option('shutdown-delay-duration', durationType, 'shutdownDelayDurationMs', 'On SIGTERM, time /readyz fails while requests are still served, before the listener closes.'),
  option('shutdown-send-retry-after', boolType, 'shutdownSendRetryAfter', 'During the shutdown delay, answer new requests 429 with Retry-After and Connection: close.'),
  option('shutdown-watch-termination-grace-period', durationType, 'shutdownWatchTerminationGracePeriodMs', 'On shutdown, time open watches get to drain before they are closed.'),
  { ...option('v', countType, 'verbosity', 'Log verbosity: 3 or more logs one line per request (verb, URI, latency, user agent, audit ID, status).'), shorthand: 'v' },
];

export const serverFlags: readonly Flag[] = [
  option('secure-port', portType, 'securePort', 'Port to serve HTTPS on; 0 picks a free port.'),
  option('bind-address', ipType, 'bindAddress', 'IP address to listen on (0.0.0.0 or :: for every interface).'),
  option('advertise-address', ipType, 'advertiseAddress', `The IP address this server gives the cluster in the Endpoints of the ${product.name} Service in default. Not listened on.`, 'the first non-loopback IPv4 address of the host'),
  option('tls-cert-file', stringType, 'tlsCertFile', 'Serving certificate (PEM, may include its chain); needs --tls-private-key-file.', 'generated under --data-dir'),
  option('tls-private-key-file', stringType, 'tlsPrivateKeyFile', 'Private key (PEM) of --tls-cert-file.', 'generated under --data-dir'),
  option('proxy-client-cert-file', stringType, 'proxyClientCertFile', 'Client certificate (PEM) the aggregator presents to aggregated API servers, which read the user from its request headers; needs --proxy-client-key-file.', 'generated under --data-dir, issued by a generated front-proxy CA'),
  option('proxy-client-key-file', stringType, 'proxyClientKeyFile', 'Private key (PEM) of --proxy-client-cert-file.', 'generated under --data-dir'),
  option('enable-aggregator-routing', boolType, 'enableAggregatorRouting', 'Reach aggregated API servers through the endpoints of their Service instead of its address (only loopback addresses are ever dialed).'),
  option('client-ca-file', stringType, 'clientCaFile', 'CA bundle (PEM) trusted to sign client certificates, beside the generated CA.', 'the generated CA only'),
  option('service-account-key-file', listOf(stringType), 'serviceAccountKeyFiles', 'PEM file of keys that verify service-account tokens; repeatable.', 'the signing key only'),
  option('service-account-signing-key-file', stringType, 'serviceAccountSigningKeyFile', 'Private key (PEM) that signs service-account tokens.', 'generated under --data-dir'),
  option('service-account-issuer', listOf(stringType), 'serviceAccountIssuer', 'Issuer (iss) of service-account tokens; the first one signs, all are accepted; repeatable.'),
  option('service-account-jwks-uri', httpsUrlType, 'serviceAccountJwksUri', 'jwks_uri of the service-account issuer discovery document (/.well-known/openid-configuration), for relying parties that fetch the keys elsewhere (https).', 'https://<this server>/openid/v1/jwks'),
  option('storage-backend', enumOf(storageBackends), 'storageBackend', `Storage backend: ${storageBackends.join(' or ')}.`),
  option('data-dir', stringType, 'dataDir', 'Folder for the store, generated key material and admin.kubeconfig.'),
  option('etcd-compaction-interval', durationType, 'etcdCompactionIntervalMs', 'How long history is kept for watches and continue tokens (e.g. 300ms, 2s, 5m, 1h30m).'),
  option('max-stored-object-bytes', positiveCountType, 'maxStoredObjectBytes', 'Most bytes an object may take in the store once encoded (after defaulting, as stored); a larger create or update is answered 413 and nothing is written, on every storage backend. The default is etcd\'s own request limit.'),
  option('watch-cache-window-bytes', countType, 'watchCacheWindowBytes', 'Most bytes the watch caches\' windows of recent events hold together (each event counts its value and the previous one); a watch or continue token older than the window is served from the store\'s history. The store keeps at most as many bytes of recent events in memory for its own watchers.'),
  option('etcd-servers', commaListOf(urlType), 'etcdServers', 'Client URLs (scheme://ip:port) of the cluster store, comma separated; needed by --storage-backend etcd3.'),
  option('etcd-prefix', stringType, 'etcdPrefix', 'The prefix to prepend to all resource paths in the cluster store.'),
  option('etcd-cafile', stringType, 'etcdCaFile', 'SSL Certificate Authority file used to secure communication with the cluster store.', 'plain connections'),
  option('etcd-certfile', stringType, 'etcdCertFile', 'SSL certification file used to secure communication with the cluster store.', 'none'),
  option('etcd-keyfile', stringType, 'etcdKeyFile', 'SSL key file used to secure communication with the cluster store.', 'none'),
  option('event-ttl', durationType, 'eventTtlMs', 'Amount of time to retain events (cluster store only).'),
  option('service-cluster-ip-range', serviceCidrType, 'serviceClusterIpRange', 'A CIDR notation IP range from which to assign service cluster IPs, or two (one IPv4, one IPv6) separated by a comma for dual-stack services; at most 2^20 addresses each (IPv6: 65,536 of them are used).'),
  option('service-node-port-range', portRangeType, 'serviceNodePortRange', 'A port range (min-max, inclusive) Service node ports are allocated from.'),
  option('request-timeout', durationType, 'requestTimeoutMs', 'Longest a request (not a watch or another stream) may take before it is answered 504 Timeout.'),
  option('leader-elect', boolType, 'leaderElect', 'Run the controllers only while this server holds the leader lease, and publish its identity lease (for several servers on one store).', 'true with --storage-backend etcd3, else false'),
  option('leader-elect-lease-duration', durationType, 'leaderElectLeaseDurationMs', 'How long other servers wait after the leader\'s last renewal before taking over.'),
  option('leader-elect-renew-deadline', durationType, 'leaderElectRenewDeadlineMs', 'How long the leader retries renewing before it stops leading; less than the lease duration.'),
  option('leader-elect-retry-period', durationType, 'leaderElectRetryPeriodMs', 'Time between attempts to acquire or renew the leader lease.'),
  option('log-level', enumOf(logLevels), 'logLevel', `Log level: ${logLevels.join(', ')}.`),
  option('logging-format', enumOf(loggingFormats), 'loggingFormat', `Sets the log format. Permitted formats: ${loggingFormats.map((f) => `"${f}"`).join(', ')} (text: upstream's klog lines; json: one JSON object a line).`),
  ...identityFlags,
  ...admissionFlags,
  ...versioningFlags,
  ...authorizationFlags,
  ...certificateSigningFlags,
  ...externalIdentityFlags,
  ...operationFlags,
  helpFlag,
  versionFlag,
];

// ---------------------------------------------------------------------------
// Parsing

/**
 * Parses the arguments after the program name. `--flag value` and
 * `--flag=value` both work; booleans take `--flag` or `--flag=true|false`.
 * Returns the help text when -h/--help is given, `version` for --version (they win over any other
 * error); throws FlagError for anything malformed.
 */
export function parseFlags(argv: readonly string[], flags: readonly Flag[] = serverFlags, usage?: string): { options: ServerOptions } | { help: string } | { version: true } {
  const byName = new Map(flags.map((flag) => [flag.name, flag]));
  const byShorthand = new Map(flags.filter((flag) => flag.shorthand).map((flag) => [flag.shorthand!, flag]));
  const tokens = tokenize(argv, byName, byShorthand);
  if (wants(tokens, helpFlag)) return { help: helpText(flags, defaultServerOptions, usage) };
  if (wants(tokens, versionFlag)) return { version: true };

  const values = new Map<Flag, unknown>();
  for (const token of tokens) {
    if (token.kind === 'error') throw token.error;
    if (token.kind === 'positional') throw new FlagError(`${commandName} takes no arguments, got ${JSON.stringify(token.value)}`);
    values.set(token.flag, parseValue(token, values.get(token.flag)));
  }
  const options = cloneOptions(defaultServerOptions);
  for (const [flag, value] of values) flag.apply(options, value);
  checkCombinations(options);
  return { options };
}

type FlagToken = { kind: 'flag'; flag: Flag; raw: string; spelled: string };
/** Errors are kept as tokens so that a later --help still wins. */
type Token = FlagToken | { kind: 'positional'; value: string } | { kind: 'error'; error: FlagError };

function tokenize(argv: readonly string[], byName: Map<string, Flag>, byShorthand: Map<string, Flag>): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      for (const value of argv.slice(i + 1)) tokens.push({ kind: 'positional', value });
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      tokens.push({ kind: 'positional', value: arg });
      continue;
    }
    const long = arg.startsWith('--');
    const body = arg.slice(long ? 2 : 1);
    const equals = body.indexOf('=');
    const name = equals < 0 ? body : body.slice(0, equals);
    const spelled = `${long ? '--' : '-'}${name}`;
    const flag = long ? byName.get(name) : byShorthand.get(name);
    if (!flag) {
      tokens.push({ kind: 'error', error: new FlagError(`unknown flag: ${spelled}`, spelled) });
      continue;
    }
    let raw: string;
    if (equals >= 0) raw = body.slice(equals + 1);
    else if (flag.type.boolean) raw = 'true';
    else {
      const next = argv[i + 1];
      // A following flag is a forgotten value, not a value; `--flag=--x` still works.
      if (next === undefined || next.startsWith('--')) {
        tokens.push({ kind: 'error', error: new FlagError(`flag needs an argument: ${spelled}`, spelled) });
        continue;
      }
      raw = next;
      i++;
    }
    tokens.push({ kind: 'flag', flag, raw, spelled });
  }
  return tokens;
}

/** Whether a boolean flag that answers at once (help, version) was given true. */
function wants(tokens: readonly Token[], flag: Flag): boolean {
  return tokens.some((token) => token.kind === 'flag' && token.flag === flag && parseValue(token, undefined) === true);
}

function parseValue(token: FlagToken, previous: unknown): unknown {
  try {
    return token.flag.type.parse(token.raw, previous);
  } catch (error) {
    const reason = (error as Error).message;
    throw new FlagError(`invalid argument ${JSON.stringify(token.raw)} for "${token.spelled}" flag: ${reason}`, token.spelled, token.raw);
  }
}

/** Flags that are valid alone but not together. */
function checkCombinations(options: ServerOptions): void {
  if (isSharedStore(options.storageBackend) && options.etcdServers.length === 0) {
    throw new FlagError(`--etcd-servers must be specified with --storage-backend ${options.storageBackend}`, '--etcd-servers');
  }
  if (options.requestTimeoutMs <= 0) throw new FlagError('--request-timeout must be positive', '--request-timeout');
  if (options.clusterSigningDurationMs <= 0) throw new FlagError('--cluster-signing-duration must be positive', '--cluster-signing-duration');
  const { leaderElectLeaseDurationMs: lease, leaderElectRenewDeadlineMs: renew, leaderElectRetryPeriodMs: retry } = options;
  if (!(lease > renew && renew > retry && retry > 0)) {
    throw new FlagError('--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline, and that greater than --leader-elect-retry-period (> 0)');
  }
}

function cloneOptions(options: ServerOptions): ServerOptions {
  return {
    ...options,
    serviceAccountKeyFiles: [...options.serviceAccountKeyFiles],
    serviceAccountIssuer: [...options.serviceAccountIssuer],
    etcdServers: [...options.etcdServers],
    apiAudiences: [...options.apiAudiences],
    controllers: [...options.controllers],
    enableAdmissionPlugins: [...options.enableAdmissionPlugins],
    disableAdmissionPlugins: [...options.disableAdmissionPlugins],
    runtimeConfig: [...options.runtimeConfig],
    featureGates: [...options.featureGates],
    authorizationMode: [...options.authorizationMode],
  };
}

// ---------------------------------------------------------------------------
// Help

/** Usage text listing every flag with its type, description and default. */
export function helpText(flags: readonly Flag[] = serverFlags, defaults: ServerOptions = defaultServerOptions, usage = `${commandName} [flags]`): string {
  const rows = flags.map((flag) => {
    const names = `${flag.shorthand ? `-${flag.shorthand}, ` : '    '}--${flag.name}`;
    const shown = flag.defaultText(defaults);
    const fallback = shown === undefined ? '' : ` (default ${shown})`;
    return { left: `  ${names}${flag.type.label ? ` ${flag.type.label}` : ''}`, right: `${flag.help}${fallback}` };
  });
  const width = Math.max(...rows.map((row) => row.left.length)) + 3;
  const lines = rows.map((row) => `${row.left.padEnd(width)}${row.right}`);
  return [
    `${commandName}: a cluster control-plane API server.`,
    '',
    'Usage:',
    `  ${usage}`,
    '',
    'Flags:',
    ...lines,
    '',
  ].join('\n');
}

/**
 * The flag reference page (docs/flags.md): the rows of `--help` as a
 * Markdown table, from the same flag table, so the two cannot disagree.
 * scripts/flags-doc.mjs writes it; a test keeps the file equal to this.
 */
export function flagReference(flags: readonly Flag[] = serverFlags, defaults: ServerOptions = defaultServerOptions): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = flags.map((flag) => {
    const names = `${flag.shorthand ? `\`-${flag.shorthand}\`, ` : ''}\`--${flag.name}\``;
    const shown = flag.defaultText(defaults);
    return `| ${names} | ${flag.type.label ? `\`${flag.type.label}\`` : ''} | ${shown === undefined ? '' : cell(`\`${shown}\``)} | ${cell(flag.help)} |`;
  });
  return [
    `# ${commandName} flags`,
    '',
    `Generated from the flag table in src/cli/flags.ts by \`node scripts/flags-doc.mjs\`; \`${commandName} --help\` prints the same.`,
    `Flags pass through npm after \`--\`: \`npm start -- --secure-port 7443\`.`,
    '',
    '| flag | value | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
