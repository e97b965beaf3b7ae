// What a server is started with. The CLI fills this from flags (src/cli/flags.ts);
// tests fill it directly through startServer().

import { product } from '../machinery/vocabulary.js';
import { defaultBackendKind, type BackendKind } from '../storage/kinds.js';
import { defaultMaxValueBytes } from '../storage/backend.js';
import type { LogDestination, LoggingFormat } from './logging.js';
import { defaultExternalIdentityOptions, type ExternalIdentityOptions } from './external-identity-options.js';

/** How an audit backend takes events, with upstream's names. */
export const auditModes = ['batch', 'blocking', 'blocking-strict'] as const;
export type AuditMode = (typeof auditModes)[number];

export { loggingFormats, type LoggingFormat } from './logging.js';

/** Which store: the names live in storage/. */
export type StorageBackendName = BackendKind;

export interface ServerOptions extends ExternalIdentityOptions {
  /** Port to listen on; 0 picks a free one. Default 6443. */
  securePort: number;
  /** Address to listen on. Default 127.0.0.1. */
  bindAddress: string;
  /** Folder for the SQLite store, generated key material and admin.kubeconfig. Default ./data. */
  dataDir: string;
  storageBackend: StorageBackendName;
  /** Serving certificate and key (PEM files); generated under dataDir when absent. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** CA bundle that verifies client certificates; the generated CA when absent. */
  clientCaFile?: string;
  /** Public keys (PEM) that verify service-account tokens; repeatable. */
  serviceAccountKeyFiles: string[];
  /** Private key (PEM) that signs service-account tokens. */
  serviceAccountSigningKeyFile?: string;
  /** The client certificate and key (PEM files) the aggregator presents to aggregated servers; generated under dataDir when absent. */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  /** Reach aggregated servers through their Service's endpoints rather than its address, as upstream's flag. */
  enableAggregatorRouting: boolean;
  serviceAccountIssuer: string[];
  /** jwks_uri of the issuer discovery document; https://<address>/openid/v1/jwks when absent. */
  serviceAccountJwksUri?: string;
  /** How long the store keeps history for watches and continue tokens, in ms. Default 5 minutes. */
  etcdCompactionIntervalMs: number;
  /** Client URLs of the cluster store's members (storageBackend etcd3). */
  etcdServers: string[];
  /** Key prefix of every object in the cluster store. Default /registry. */
  etcdPrefix: string;
  /** TLS to the cluster store: CA bundle, client certificate and key (PEM files). */
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  /** How long Events live in the cluster store before it drops them, in ms. Default 1 hour. */
  eventTtlMs: number;
  /** Range (CIDR) Service cluster IPs are allocated from. Default 10.0.0.0/24. */
  serviceClusterIpRange: string;
  /**
   * The address this server gives the cluster in the product Service's
   * Endpoints; default: the first non-loopback IPv4 address of the host's
   * interfaces (nothing is served or dialed there).
   */
  advertiseAddress?: string;
  /** Ports (min-max) Service node ports are allocated from. Default 30000-32767. */
  serviceNodePortRange: string;
  /** Longest a request may wait for the store before it is answered 504, in ms. Default 1 minute. */
  requestTimeoutMs: number;
  /**
   * Run the controllers only while holding the leader lease, and publish an
   * identity lease; for servers sharing a store. Default: on with etcd3 only.
   */
  leaderElect?: boolean;
  /** Leader election timing (ms): others take over after the lease duration without renewal. */
  leaderElectLeaseDurationMs: number;
  leaderElectRenewDeadlineMs: number;
  leaderElectRetryPeriodMs: number;
  /** Events queued for a watcher that stops reading before it is cut off (its socket buffers come on top). */
  watchMaxBufferedEvents: number;
  /** Bytes the watch caches' event windows hold together at most (and, apart, the store's own recent events for its watchers). */
  watchCacheWindowBytes: number;
  /** Most bytes an object may take in the store once encoded; larger writes are answered 413. */
  maxStoredObjectBytes: number;
  /**
   * Unauthenticated requests become system:anonymous instead of 401.
   * Unset: on unless the authorization modes include AlwaysAllow.
   */
  anonymousAuth?: boolean;
  /** CSV file of static bearer tokens: token,user,uid[,"group1,group2"]. */
  tokenAuthFile?: string;
  /** Audiences the server accepts tokens for; empty: the first service-account issuer. */
  apiAudiences: string[];
  /** Longest lifetime of a requested service-account token, in ms; 0: no cap. */
  serviceAccountMaxTokenExpirationMs: number;
  /** Pod-bound tokens of the admission-injected lifetime are valid for a year, as upstream's safe transition. */
  serviceAccountExtendTokenExpiration: boolean;
  /** In-process controllers to run, as upstream's --controllers: `*`, `name`, `-name`; the first entry naming one decides. */
  controllers: string[];
  /** Log level for pino: fatal, error, warn, info, debug, trace, silent. */
  logLevel: string;
  /** How log lines look, as upstream's --logging-format: text (klog's lines, the default) or json (pino's). */
  loggingFormat: LoggingFormat;
  /** Where log lines go instead of standard error (tests, a program embedding the server). */
  logDestination?: LogDestination;
  /** Admission plugins to turn on beside the default set (order irrelevant). */
  enableAdmissionPlugins: string[];
  /** Admission plugins to turn off, default ones included. */
  disableAdmissionPlugins: string[];
  /** AdmissionConfiguration file (YAML or JSON) with per-plugin configuration. */
  admissionControlConfigFile?: string;
  /** Seconds pods tolerate a not-ready and an unreachable node (DefaultTolerationSeconds). */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;

  // Versioning
  /** --runtime-config: `key` -> value ('' when omitted), in the order given; a later key replaced an earlier one. */
  runtimeConfig: [string, string][];
  /** --feature-gates: gate name -> wanted state, in the order given. */
  featureGates: [string, boolean][];
  /** --show-hidden-metrics-for-version: the previous minor (`1.31`) shows the metrics it deprecated. */
  showHiddenMetricsForVersion?: string;

  // Authorization
  /** --authorization-mode: the modules asked, in order (AlwaysAllow, AlwaysDeny, ABAC, RBAC, Webhook). */
  authorizationMode: string[];
  /** ABAC: one JSON policy per line. */
  authorizationPolicyFile?: string;
  /** Webhook: a kubeconfig naming the remote authorizer and how to reach it. */
  authorizationWebhookConfigFile?: string;
  /** apiVersion of the SubjectAccessReview sent to the webhook. */
  authorizationWebhookVersion: 'v1' | 'v1beta1';
  /** How long the webhook's allowed and not-allowed answers are cached, in ms. */
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  /** How long one webhook call may take before it counts as no opinion, in ms. */
  authorizationWebhookTimeoutMs: number;

  // Certificate signing (the built-in signers of certificate signing requests)
  /** CA certificate (PEM) the built-in signers sign with; default the server's CA. Needs clusterSigningKeyFile. */
  clusterSigningCertFile?: string;
  /** Private key (PEM) of clusterSigningCertFile. */
  clusterSigningKeyFile?: string;
  /** Longest certificate the built-in signers issue, in ms; a request's expirationSeconds may ask for less. Default a year. */
  clusterSigningDurationMs: number;

  // Operating the server: limits, audit, start and stop, request logs.
  /** Non-mutating requests served at once before 429 (long-running ones do not count). */
  maxRequestsInflight: number;
  /** Mutating requests served at once before 429. */
  maxMutatingRequestsInflight: number;
  /** Audit Policy file (the audit group, v1); no file, no audit. */
  auditPolicyFile?: string;
  /** Audit log file; `-` for standard output. */
  auditLogPath?: string;
  auditLogFormat: 'json' | 'legacy';
  /**
   * batch: written in the background; blocking: a request waits for the write
   * of its RequestReceived event; blocking-strict: and fails when that write does.
   */
  auditLogMode: AuditMode;
  /** Rotation: days to keep old files, how many to keep, megabytes before rotating (0: no limit). */
  auditLogMaxAge: number;
  auditLogMaxBackup: number;
  auditLogMaxSize: number;
  /** Kubeconfig-format file naming the audit webhook. */
  auditWebhookConfigFile?: string;
  auditWebhookBatchBufferSize: number;
  auditWebhookBatchMaxSize: number;
  auditWebhookBatchMaxWaitMs: number;
  /** Wait before the first retry of a batch the webhook failed to take for a passing reason. */
  auditWebhookInitialBackoffMs: number;
  /** Batches sent to the webhook are limited to `qps` a second, `burst` at once. */
  auditWebhookBatchThrottleEnable: boolean;
  auditWebhookBatchThrottleQps: number;
  auditWebhookBatchThrottleBurst: number;
  /** As auditLogMode, for the webhook: blocking posts each event on its own. */
  auditWebhookMode: AuditMode;
  /** /livez reports not live for this long after start while the post-start work runs. */
  livezGracePeriodMs: number;
  /** On SIGTERM, /readyz fails for this long before the listener closes. */
  shutdownDelayDurationMs: number;
  /** During the shutdown delay, answer new requests 429 with Retry-After and Connection: close. */
  shutdownSendRetryAfter: boolean;
  /** How long open watches are given to end before the process exits. */
  shutdownWatchTerminationGracePeriodMs: number;
  /** Log verbosity as upstream's -v: 3 or more logs one line per request. */
  verbosity: number;
}

export const defaultServerOptions: ServerOptions = {
  enableAggregatorRouting: false,
  securePort: 6443,
  bindAddress: '127.0.0.1',
  dataDir: './data',
  storageBackend: defaultBackendKind,
  serviceAccountKeyFiles: [],
  serviceAccountIssuer: [`https://${product.name}.default.svc.cluster.local`],
  etcdCompactionIntervalMs: 5 * 60 * 1000,
  etcdServers: [],
  etcdPrefix: '/registry',
  eventTtlMs: 60 * 60 * 1000,
  serviceClusterIpRange: '10.0.0.0/24',
  serviceNodePortRange: '30000-32767',
  requestTimeoutMs: 60 * 1000,
  // Shorter than upstream's 15s/10s/2s so that a dead leader is replaced within 15 s.
  leaderElectLeaseDurationMs: 10_000,
  leaderElectRenewDeadlineMs: 8_000,
  leaderElectRetryPeriodMs: 2_000,
  watchMaxBufferedEvents: 10_000,
  watchCacheWindowBytes: 32 * 1024 * 1024,
  maxStoredObjectBytes: defaultMaxValueBytes,
  apiAudiences: [],
  serviceAccountMaxTokenExpirationMs: 0,
  serviceAccountExtendTokenExpiration: true,
  controllers: ['*'],
  logLevel: 'info',
  loggingFormat: 'text',
  enableAdmissionPlugins: [],
  disableAdmissionPlugins: [],
  defaultNotReadyTolerationSeconds: 300,
  defaultUnreachableTolerationSeconds: 300,
  runtimeConfig: [],
  featureGates: [],
  authorizationMode: ['RBAC'],
  authorizationWebhookVersion: 'v1beta1',
  authorizationWebhookCacheAuthorizedTtlMs: 5 * 60 * 1000,
  authorizationWebhookCacheUnauthorizedTtlMs: 30 * 1000,
  // As upstream's webhook authorizer built from these flags.
  authorizationWebhookTimeoutMs: 30 * 1000,
  clusterSigningDurationMs: 365 * 24 * 60 * 60 * 1000,
  ...defaultExternalIdentityOptions,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  auditLogFormat: 'json',
  // Upstream's default is blocking; the background writer costs a request far less (bench/README.md).
  auditLogMode: 'batch',
  auditLogMaxAge: 0,
  auditLogMaxBackup: 0,
  auditLogMaxSize: 0,
  auditWebhookBatchBufferSize: 10_000,
  auditWebhookBatchMaxSize: 400,
  auditWebhookBatchMaxWaitMs: 30_000,
  auditWebhookInitialBackoffMs: 10_000,
  auditWebhookBatchThrottleEnable: true,
  auditWebhookBatchThrottleQps: 10,
  auditWebhookBatchThrottleBurst: 15,
  auditWebhookMode: 'batch',
  livezGracePeriodMs: 0,
  shutdownDelayDurationMs: 0,
  shutdownSendRetryAfter: false,
  shutdownWatchTerminationGracePeriodMs: 0,
  verbosity: 0,
};
