import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FlagError,
  commandName,
  formatDuration,
  helpText,
  parseDuration,
  parseFlags,
  serverFlags,
  type Flag,
} from '../../../src/cli/flags.js';
import { boolType } from '../../../src/cli/flagtypes.js';
import { product } from '../../../src/machinery/vocabulary.js';
import { defaultServerOptions, type ServerOptions } from '../../../src/server/options.js';

function options(argv: string[]): ServerOptions {
  const result = parseFlags(argv);
  assert.ok('options' in result, 'expected options, got help');
  return result.options;
}

function rejects(argv: string[], message: RegExp | string, flag?: string, value?: string): void {
  assert.throws(
    () => parseFlags(argv),
    (error: unknown) => {
      assert.ok(error instanceof FlagError, String(error));
      if (typeof message === 'string') assert.equal(error.message, message);
      else assert.match(error.message, message);
      assert.equal(error.flag, flag);
      assert.equal(error.value, value);
      return true;
    },
  );
}

/** Each flag with a sample value and the options it should produce. */
const samples: [flag: string, value: string, expected: Partial<ServerOptions>][] = [
  ['secure-port', '8443', { securePort: 8443 }],
  ['bind-address', '::', { bindAddress: '::' }],
  ['advertise-address', '192.0.2.10', { advertiseAddress: '192.0.2.10' }],
  ['tls-cert-file', '/etc/tls/tls.crt', { tlsCertFile: '/etc/tls/tls.crt' }],
  ['tls-private-key-file', '/etc/tls/tls.key', { tlsPrivateKeyFile: '/etc/tls/tls.key' }],
  ['client-ca-file', '/etc/ca.crt', { clientCaFile: '/etc/ca.crt' }],
  ['service-account-key-file', 'sa.pub', { serviceAccountKeyFiles: ['sa.pub'] }],
  ['service-account-signing-key-file', 'sa.key', { serviceAccountSigningKeyFile: 'sa.key' }],
  ['service-account-issuer', 'https://issuer.example', { serviceAccountIssuer: ['https://issuer.example'] }],
  ['service-account-jwks-uri', 'https://keys.example/jwks', { serviceAccountJwksUri: 'https://keys.example/jwks' }],
  ['storage-backend', 'memory', { storageBackend: 'memory' }],
  ['data-dir', '/var/lib/x', { dataDir: '/var/lib/x' }],
  ['etcd-compaction-interval', '1h30m', { etcdCompactionIntervalMs: 90 * 60 * 1000 }],
  ['watch-cache-window-bytes', '8388608', { watchCacheWindowBytes: 8 * 1024 * 1024 }],
  ['max-stored-object-bytes', '3145728', { maxStoredObjectBytes: 3 * 1024 * 1024 }],
  ['etcd-servers', 'http://127.0.0.1:2379', { etcdServers: ['http://127.0.0.1:2379'] }],
  ['etcd-prefix', '/c1/registry', { etcdPrefix: '/c1/registry' }],
  ['etcd-cafile', '/ca.pem', { etcdCaFile: '/ca.pem' }],
  ['etcd-certfile', '/c.pem', { etcdCertFile: '/c.pem' }],
  ['etcd-keyfile', '/k.pem', { etcdKeyFile: '/k.pem' }],
  ['event-ttl', '5m', { eventTtlMs: 300_000 }],
  ['service-cluster-ip-range', 'fd00:10:96::/112', { serviceClusterIpRange: 'fd00:10:96::/112' }],
  ['service-node-port-range', '30000-30100', { serviceNodePortRange: '30000-30100' }],
  ['request-timeout', '3s', { requestTimeoutMs: 3_000 }],
  ['leader-elect', 'true', { leaderElect: true }],
  ['leader-elect-lease-duration', '20s', { leaderElectLeaseDurationMs: 20_000 }],
  ['leader-elect-renew-deadline', '5s', { leaderElectRenewDeadlineMs: 5_000 }],
  ['leader-elect-retry-period', '1s', { leaderElectRetryPeriodMs: 1_000 }],
  ['log-level', 'debug', { logLevel: 'debug' }],
  ['logging-format', 'json', { loggingFormat: 'json' }],
  ['anonymous-auth', 'true', { anonymousAuth: true }],
  ['token-auth-file', '/etc/tokens.csv', { tokenAuthFile: '/etc/tokens.csv' }],
  ['api-audiences', 'api,other', { apiAudiences: ['api', 'other'] }],
  ['service-account-max-token-expiration', '48h', { serviceAccountMaxTokenExpirationMs: 48 * 3600_000 }],
  ['service-account-extend-token-expiration', 'true', { serviceAccountExtendTokenExpiration: true }],
  ['controllers', '*,-root-ca-cert-publisher', { controllers: ['*', '-root-ca-cert-publisher'] }],
  ['enable-admission-plugins', 'AlwaysDeny,NamespaceExists', { enableAdmissionPlugins: ['AlwaysDeny', 'NamespaceExists'] }],
  ['disable-admission-plugins', 'NamespaceLifecycle', { disableAdmissionPlugins: ['NamespaceLifecycle'] }],
  ['runtime-config', 'api/alpha,batch/v1=false, v1 = true', { runtimeConfig: [['api/alpha', ''], ['batch/v1', 'false'], ['v1', 'true']] }],
  ['feature-gates', 'A=true, B=f', { featureGates: [['A', true], ['B', false]] }],
  ['show-hidden-metrics-for-version', '1.31', { showHiddenMetricsForVersion: '1.31' }],
  ['admission-control-config-file', '/etc/admission.yaml', { admissionControlConfigFile: '/etc/admission.yaml' }],
  ['default-not-ready-toleration-seconds', '60', { defaultNotReadyTolerationSeconds: 60 }],
  ['default-unreachable-toleration-seconds', '120', { defaultUnreachableTolerationSeconds: 120 }],
  ['authorization-mode', 'RBAC,ABAC,Webhook', { authorizationMode: ['RBAC', 'ABAC', 'Webhook'] }],
  ['authorization-policy-file', '/etc/abac.jsonl', { authorizationPolicyFile: '/etc/abac.jsonl' }],
  ['authorization-webhook-config-file', '/etc/authz.kubeconfig', { authorizationWebhookConfigFile: '/etc/authz.kubeconfig' }],
  ['authorization-webhook-version', 'v1', { authorizationWebhookVersion: 'v1' }],
  ['authorization-webhook-cache-authorized-ttl', '1m', { authorizationWebhookCacheAuthorizedTtlMs: 60_000 }],
  ['authorization-webhook-cache-unauthorized-ttl', '10s', { authorizationWebhookCacheUnauthorizedTtlMs: 10_000 }],
  ['cluster-signing-cert-file', '/etc/signing/ca.crt', { clusterSigningCertFile: '/etc/signing/ca.crt' }],
  ['cluster-signing-key-file', '/etc/signing/ca.key', { clusterSigningKeyFile: '/etc/signing/ca.key' }],
  ['cluster-signing-duration', '720h', { clusterSigningDurationMs: 720 * 60 * 60 * 1000 }],
  ['requestheader-username-headers', 'X-Remote-User,X-User', { requestheaderUsernameHeaders: ['X-Remote-User', 'X-User'] }],
  ['requestheader-group-headers', 'X-Remote-Group', { requestheaderGroupHeaders: ['X-Remote-Group'] }],
  ['requestheader-extra-headers-prefix', 'X-Remote-Extra-', { requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'] }],
  ['requestheader-client-ca-file', '/etc/front-proxy-ca.crt', { requestheaderClientCaFile: '/etc/front-proxy-ca.crt' }],
  ['requestheader-allowed-names', 'front-proxy,aggregator', { requestheaderAllowedNames: ['front-proxy', 'aggregator'] }],
  ['enable-bootstrap-token-auth', 'true', { enableBootstrapTokenAuth: true }],
  ['proxy-client-cert-file', '/etc/front-proxy-client.crt', { proxyClientCertFile: '/etc/front-proxy-client.crt' }],
  ['proxy-client-key-file', '/etc/front-proxy-client.key', { proxyClientKeyFile: '/etc/front-proxy-client.key' }],
  ['enable-aggregator-routing', 'true', { enableAggregatorRouting: true }],
  ['oidc-issuer-url', 'https://issuer.example/realm', { oidcIssuerUrl: 'https://issuer.example/realm' }],
  ['oidc-client-id', 'plat', { oidcClientId: 'plat' }],
  ['oidc-username-claim', 'email', { oidcUsernameClaim: 'email' }],
  ['oidc-username-prefix', 'oidc:', { oidcUsernamePrefix: 'oidc:' }],
  ['oidc-groups-claim', 'groups', { oidcGroupsClaim: 'groups' }],
  ['oidc-groups-prefix', 'oidc:', { oidcGroupsPrefix: 'oidc:' }],
  ['oidc-required-claim', 'hd=example.com,team=a=b', { oidcRequiredClaims: [['hd', 'example.com'], ['team', 'a=b']] }],
  ['oidc-signing-algs', 'RS256,ES256', { oidcSigningAlgs: ['RS256', 'ES256'] }],
  ['oidc-ca-file', '/etc/oidc-ca.crt', { oidcCaFile: '/etc/oidc-ca.crt' }],
  ['authentication-token-webhook-config-file', '/etc/authn.kubeconfig', { authenticationTokenWebhookConfigFile: '/etc/authn.kubeconfig' }],
  ['authentication-token-webhook-cache-ttl', '30s', { authenticationTokenWebhookCacheTtlMs: 30_000 }],
  ['authentication-token-webhook-version', 'v1', { authenticationTokenWebhookVersion: 'v1' }],
  ['max-requests-inflight', '10', { maxRequestsInflight: 10 }],
  ['max-mutating-requests-inflight', '5', { maxMutatingRequestsInflight: 5 }],
  ['audit-policy-file', 'policy.yaml', { auditPolicyFile: 'policy.yaml' }],
  ['audit-log-path', '-', { auditLogPath: '-' }],
  ['audit-log-format', 'legacy', { auditLogFormat: 'legacy' }],
  ['audit-log-mode', 'blocking-strict', { auditLogMode: 'blocking-strict' }],
  ['audit-webhook-mode', 'blocking', { auditWebhookMode: 'blocking' }],
  ['audit-log-maxage', '7', { auditLogMaxAge: 7 }],
  ['audit-log-maxbackup', '3', { auditLogMaxBackup: 3 }],
  ['audit-log-maxsize', '100', { auditLogMaxSize: 100 }],
  ['audit-webhook-config-file', 'w.kubeconfig', { auditWebhookConfigFile: 'w.kubeconfig' }],
  ['audit-webhook-batch-buffer-size', '50', { auditWebhookBatchBufferSize: 50 }],
  ['audit-webhook-batch-max-size', '5', { auditWebhookBatchMaxSize: 5 }],
  ['audit-webhook-batch-max-wait', '2s', { auditWebhookBatchMaxWaitMs: 2000 }],
  ['audit-webhook-initial-backoff', '500ms', { auditWebhookInitialBackoffMs: 500 }],
  ['audit-webhook-batch-initial-backoff', '3s', { auditWebhookInitialBackoffMs: 3000 }],
  ['audit-webhook-batch-throttle-enable', 'true', { auditWebhookBatchThrottleEnable: true }],
  ['audit-webhook-batch-throttle-qps', '2.5', { auditWebhookBatchThrottleQps: 2.5 }],
  ['audit-webhook-batch-throttle-burst', '4', { auditWebhookBatchThrottleBurst: 4 }],
  ['livez-grace-period', '1m', { livezGracePeriodMs: 60_000 }],
  ['shutdown-delay-duration', '5s', { shutdownDelayDurationMs: 5000 }],
  ['shutdown-send-retry-after', 'true', { shutdownSendRetryAfter: true }],
  ['shutdown-watch-termination-grace-period', '10s', { shutdownWatchTerminationGracePeriodMs: 10_000 }],
  ['v', '3', { verbosity: 3 }],
];

describe('parseFlags', () => {
  it('returns the defaults for no arguments, as a copy', () => {
    const parsed = options([]);
    assert.deepEqual(parsed, defaultServerOptions);
    parsed.serviceAccountIssuer.push('mutated');
    parsed.serviceAccountKeyFiles.push('mutated');
    assert.deepEqual(options([]), defaultServerOptions);
  });

  it('has a sample for every flag in the table', () => {
    const named = new Set(samples.map(([flag]) => flag));
    for (const flag of serverFlags) if (flag.name !== 'help' && flag.name !== 'version') assert.ok(named.has(flag.name), flag.name);
  });

  /** A boolean flag's separate form is the bare flag, as with pflag: `--flag` means true. */
  const booleanFlags = new Set(serverFlags.filter((f) => f.type === boolType).map((f) => f.name));
  const separate = (flag: string, value: string) => (booleanFlags.has(flag) && value === 'true' ? [`--${flag}`] : [`--${flag}`, value]);

  for (const [flag, value, expected] of samples) {
    it(`sets --${flag} in both forms`, () => {
      const want = { ...defaultServerOptions, ...expected };
      assert.deepEqual(options(separate(flag, value)), want);
      assert.deepEqual(options([`--${flag}=${value}`]), want);
    });
  }

  it('takes every flag together', () => {
    const argv = samples.flatMap(([flag, value], index) => (index % 2 ? [`--${flag}=${value}`] : separate(flag, value)));
    assert.deepEqual(options(argv), Object.assign({}, defaultServerOptions, ...samples.map(([, , expected]) => expected)));
  });

  it('lets the last occurrence of a single-valued flag win', () => {
    assert.equal(options(['--secure-port=1', '--secure-port', '2']).securePort, 2);
  });

  it('collects repeatable flags in order, replacing their defaults', () => {
    const parsed = options([
      '--service-account-issuer',
      'https://a',
      '--service-account-key-file=one.pem',
      '--service-account-issuer=https://b',
      '--service-account-key-file',
      'two.pem',
    ]);
    assert.deepEqual(parsed.serviceAccountIssuer, ['https://a', 'https://b']);
    assert.deepEqual(parsed.serviceAccountKeyFiles, ['one.pem', 'two.pem']);
  });

  it('splits admission plugin lists on commas and adds up repeated flags', () => {
    const parsed = options(['--enable-admission-plugins=AlwaysDeny, NamespaceExists,', '--enable-admission-plugins', 'AlwaysAdmit', '--disable-admission-plugins=']);
    assert.deepEqual(parsed.enableAdmissionPlugins, ['AlwaysDeny', 'NamespaceExists', 'AlwaysAdmit']);
    assert.deepEqual(parsed.disableAdmissionPlugins, []);
    parsed.enableAdmissionPlugins.push('mutated');
    assert.deepEqual(options([]).enableAdmissionPlugins, []);
  });

  it('keeps the value after = whole, even with = or dashes in it', () => {
    assert.equal(options(['--data-dir=a=b']).dataDir, 'a=b');
    assert.equal(options(['--data-dir=--odd']).dataDir, '--odd');
    assert.equal(options(['--data-dir', '-odd']).dataDir, '-odd');
  });

  it('accepts port 0 and 65535, IPv4 and IPv6 bind addresses, every storage backend and log level', () => {
    assert.equal(options(['--secure-port=0']).securePort, 0);
    assert.equal(options(['--secure-port=65535']).securePort, 65535);
    assert.equal(options(['--bind-address=0.0.0.0']).bindAddress, '0.0.0.0');
    assert.equal(options(['--bind-address=::1']).bindAddress, '::1');
    assert.equal(options(['--storage-backend=sqlite']).storageBackend, 'sqlite');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(options([`--log-level=${level}`]).logLevel, level);
    }
  });

  it('reads --runtime-config as a configuration map (a later key replaces an earlier one) and --feature-gates as name=bool pairs', () => {
    assert.deepEqual(options(['--runtime-config=api/all=false,v1', '--runtime-config', 'api/all=true']).runtimeConfig, [['v1', ''], ['api/all', 'true']]);
    assert.deepEqual(options(['--feature-gates=A=true', '--feature-gates=B=false,A=false']).featureGates, [['B', false], ['A', false]]);
    rejects(['--feature-gates=A'], /missing bool value for A/, '--feature-gates', 'A');
    rejects(['--feature-gates=A=yes'], /invalid value of A=yes/, '--feature-gates', 'A=yes');
  });

  it('reads the identity flags: audiences as lists, token lifetimes within upstream\'s bounds, anonymous unset by default', () => {
    assert.equal(options([]).anonymousAuth, undefined);
    assert.equal(options(['--anonymous-auth=false']).anonymousAuth, false);
    assert.equal(options(['--service-account-extend-token-expiration=false']).serviceAccountExtendTokenExpiration, false);
    assert.deepEqual(options(['--api-audiences=a, b', '--api-audiences', 'c']).apiAudiences, ['a', 'b', 'c']);
    assert.equal(options(['--service-account-max-token-expiration=0']).serviceAccountMaxTokenExpirationMs, 0);
    assert.equal(options(['--service-account-max-token-expiration=1h']).serviceAccountMaxTokenExpirationMs, 3600_000);
    rejects(['--controllers=*,-nosuchcontroller'], /"-nosuchcontroller" is not in the list of known controllers/, '--controllers', '*,-nosuchcontroller');
    for (const bad of ['59m', '1193047h']) {
      rejects([`--service-account-max-token-expiration=${bad}`], /must be between 1 hour and 2\^32 seconds$/, '--service-account-max-token-expiration', bad);
    }
  });

  it('reads the external identity flags: https issuers only, known signing algorithms, key=value claims', () => {
    rejects(['--oidc-issuer-url=http://issuer.example'], /must be an https URL$/, '--oidc-issuer-url', 'http://issuer.example');
    rejects(['--oidc-signing-algs=HS256'], /must be one of RS256/, '--oidc-signing-algs', 'HS256');
    rejects(['--oidc-required-claim=novalue'], /"novalue" must be formatted as key=value$/, '--oidc-required-claim', 'novalue');
    assert.deepEqual(options(['--oidc-required-claim=a=1', '--oidc-required-claim=b=2,a=3']).oidcRequiredClaims, [['b', '2'], ['a', '3']]);
    rejects(['--authentication-token-webhook-version=v2'], /must be one of v1, v1beta1$/, '--authentication-token-webhook-version', 'v2');
  });

  it('accepts a zero compaction interval', () => {
    assert.equal(options(['--etcd-compaction-interval=0']).etcdCompactionIntervalMs, 0);
    assert.equal(options(['--etcd-compaction-interval', '0s']).etcdCompactionIntervalMs, 0);
  });
});

describe('parseFlags errors', () => {
  it('rejects a signing duration that is not positive', () => {
    rejects(['--cluster-signing-duration=0s'], '--cluster-signing-duration must be positive', '--cluster-signing-duration');
  });

  it('rejects unknown flags, long or short', () => {
    rejects(['--nope'], 'unknown flag: --nope', '--nope');
    rejects(['--nope=1'], 'unknown flag: --nope', '--nope');
    rejects(['-x'], 'unknown flag: -x', '-x');
    rejects(['-secure-port', '1'], 'unknown flag: -secure-port', '-secure-port');
    rejects(['--secure-port=1', '--Secure-Port=2'], 'unknown flag: --Secure-Port', '--Secure-Port');
  });

  it('rejects a flag without its value', () => {
    rejects(['--data-dir'], 'flag needs an argument: --data-dir', '--data-dir');
    rejects(['--data-dir', '--secure-port', '1'], 'flag needs an argument: --data-dir', '--data-dir');
    rejects(['--service-account-issuer'], 'flag needs an argument: --service-account-issuer', '--service-account-issuer');
  });

  it('rejects malformed numbers and ports', () => {
    for (const bad of ['abc', '-1', '65536', '1.5', '', ' 80', '0x50', '1e3']) {
      rejects(
        [`--secure-port=${bad}`],
        `invalid argument ${JSON.stringify(bad)} for "--secure-port" flag: not a port number (0 to 65535)`,
        '--secure-port',
        bad,
      );
    }
    rejects(['--secure-port', 'http'], /invalid argument "http" for "--secure-port" flag/, '--secure-port', 'http');
  });

  it('rejects bind addresses that are not IPs', () => {
    for (const bad of ['localhost', '1.2.3', '', '127.0.0.1:80']) {
      rejects([`--bind-address=${bad}`], /for "--bind-address" flag: not an IP address$/, '--bind-address', bad);
    }
  });

  it('rejects empty strings for paths', () => {
    for (const flag of ['data-dir', 'tls-cert-file', 'tls-private-key-file', 'client-ca-file', 'service-account-key-file', 'service-account-signing-key-file', 'service-account-issuer']) {
      rejects([`--${flag}=`], `invalid argument "" for "--${flag}" flag: must not be empty`, `--${flag}`, '');
    }
  });

  it('rejects values outside an enum, naming the choices', () => {
    rejects(['--storage-backend', 'etcd'], 'invalid argument "etcd" for "--storage-backend" flag: must be one of sqlite, memory, etcd3', '--storage-backend', 'etcd');
    rejects(['--log-level=verbose'], /for "--log-level" flag: must be one of fatal, error, warn, info, debug, trace, silent$/, '--log-level', 'verbose');
    rejects(['--storage-backend=SQLITE'], /must be one of/, '--storage-backend', 'SQLITE');
    rejects(['--logging-format', 'yaml'], 'invalid argument "yaml" for "--logging-format" flag: must be one of text, json', '--logging-format', 'yaml');
  });

  it('rejects malformed and negative durations', () => {
    for (const bad of ['5', '5x', '', 'm', '1h 30m', '.s', '1.2.3s', '5m-', '-5m', '-1s']) {
      rejects([`--etcd-compaction-interval=${bad}`], /for "--etcd-compaction-interval" flag: /, '--etcd-compaction-interval', bad);
    }
    rejects(['--etcd-compaction-interval=-5m'], /must not be negative$/, '--etcd-compaction-interval', '-5m');
    rejects(['--etcd-compaction-interval=5'], /not a duration \(examples: 300ms, 2s, 5m, 1h30m\)$/, '--etcd-compaction-interval', '5');
  });

  it('rejects a stored-size limit of no bytes', () => {
    rejects(['--max-stored-object-bytes=0'], /must be at least 1$/, '--max-stored-object-bytes', '0');
    rejects(['--max-stored-object-bytes=-1'], /must not be negative$/, '--max-stored-object-bytes', '-1');
  });

  it('rejects positional arguments, also after --', () => {
    rejects(['serve'], `${commandName} takes no arguments, got "serve"`);
    rejects(['--secure-port', '1', '--', 'x'], `${commandName} takes no arguments, got "x"`);
    rejects(['-'], `${commandName} takes no arguments, got "-"`);
    assert.deepEqual(options(['--']), defaultServerOptions);
  });

  it('reports the first error in argument order', () => {
    rejects(['--secure-port=x', '--nope'], /"--secure-port" flag/, '--secure-port', 'x');
    rejects(['--nope', '--secure-port=x'], 'unknown flag: --nope', '--nope');
  });
});

describe('help', () => {
  it('answers -h, --help and --help=true, even beside bad flags', () => {
    for (const argv of [['-h'], ['--help'], ['--help=true'], ['--help=1'], ['--nope', '--help'], ['--secure-port=x', '-h']]) {
      const result = parseFlags(argv);
      assert.ok('help' in result, argv.join(' '));
      assert.equal(result.help, helpText());
    }
  });

  it('treats -h after a flag that needs a value as that value, as pflag does', () => {
    assert.equal(options(['--data-dir', '-h']).dataDir, '-h');
  });

  it('ignores --help=false and rejects --help=maybe', () => {
    assert.deepEqual(options(['--help=false', '--secure-port=1']), { ...defaultServerOptions, securePort: 1 });
    rejects(['--help=maybe'], 'invalid argument "maybe" for "--help" flag: expected true or false', '--help', 'maybe');
    rejects(['-h=maybe'], 'invalid argument "maybe" for "-h" flag: expected true or false', '-h', 'maybe');
  });

  it('lists every flag with its type, description and default', () => {
    const help = helpText();
    assert.match(help, new RegExp(`^Usage:\\n  ${commandName} \\[flags\\]$`, 'm'));
    for (const flag of serverFlags) {
      const line = help.split('\n').find((text) => text.includes(`--${flag.name} `) || text.endsWith(`--${flag.name}`));
      assert.ok(line, `--${flag.name} listed`);
      assert.ok(line.includes(flag.help), `--${flag.name} described`);
      if (flag.name !== 'help' && flag.name !== 'version') assert.match(line, /\(default .+\)$/, `--${flag.name} default`);
    }
    const lineOf = (name: string) => help.split('\n').find((text) => text.includes(`--${name} `))!;
    assert.match(lineOf('secure-port'), /--secure-port int .*\(default 6443\)$/);
    assert.match(lineOf('bind-address'), /--bind-address ip .*\(default 127\.0\.0\.1\)$/);
    assert.match(lineOf('etcd-compaction-interval'), /--etcd-compaction-interval duration .*\(default 5m0s\)$/);
    assert.match(lineOf('storage-backend'), /\(default sqlite\)$/);
    assert.match(lineOf('log-level'), /\(default info\)$/);
    assert.match(lineOf('logging-format'), /\(default text\)$/);
    assert.match(lineOf('data-dir'), /\(default \.\/data\)$/);
    assert.match(lineOf('service-account-key-file'), /--service-account-key-file stringArray /);
    assert.match(lineOf('service-account-issuer'), new RegExp(`\\(default \\[https://${product.name}\\.default\\.svc\\.cluster\\.local\\]\\)$`));
    assert.match(help, /^ {2}-h, --help {2,}Print this help and exit\.$/m);
  });
});

describe('flag table as data', () => {
  /** A table with one boolean flag, as later issues will add. */
  function withBoolean(): { flags: Flag[]; seen: () => boolean | undefined } {
    let value: boolean | undefined;
    const flag: Flag = {
      name: 'enable-thing',
      type: boolType as Flag['type'],
      help: 'Enables the thing.',
      defaultText: () => 'false',
      apply: (_options, parsed) => {
        value = parsed as boolean;
      },
    };
    return { flags: [...serverFlags, flag], seen: () => value };
  }

  it('parses booleans as --flag and --flag=true|false (Go spellings)', () => {
    for (const [argv, want] of [
      [['--enable-thing'], true],
      [['--enable-thing=true'], true],
      [['--enable-thing=T'], true],
      [['--enable-thing=1'], true],
      [['--enable-thing=false'], false],
      [['--enable-thing=F'], false],
      [['--enable-thing=0'], false],
      [['--enable-thing', '--enable-thing=false'], false],
      [[], undefined],
    ] as const) {
      const table = withBoolean();
      assert.ok('options' in parseFlags(argv, table.flags));
      assert.equal(table.seen(), want, argv.join(' '));
    }
  });

  it('does not let a boolean swallow the next argument', () => {
    const table = withBoolean();
    assert.throws(() => parseFlags(['--enable-thing', 'false'], table.flags), /takes no arguments, got "false"/);
  });

  it('rejects other boolean spellings', () => {
    const table = withBoolean();
    assert.throws(
      () => parseFlags(['--enable-thing=yes'], table.flags),
      (error: unknown) => error instanceof FlagError && error.message === 'invalid argument "yes" for "--enable-thing" flag: expected true or false',
    );
  });

  it('shows the new flag in help', () => {
    assert.match(helpText(withBoolean().flags), /^ {6}--enable-thing {2,}Enables the thing\. \(default false\)$/m);
  });
});

describe('durations', () => {
  it('parses Go durations into milliseconds', () => {
    const cases: [string, number][] = [
      ['300ms', 300],
      ['2s', 2000],
      ['5m', 300_000],
      ['1h30m', 5_400_000],
      ['1h30m15s', 5_415_000],
      ['1.5s', 1500],
      ['.5s', 500],
      ['1.s', 1000],
      ['1500us', 1.5],
      ['1500µs', 1.5],
      ['1500μs', 1.5],
      ['2000000ns', 2],
      ['1m1m', 120_000],
      ['+5s', 5000],
      ['-5s', -5000],
      ['0', 0],
      ['-0', 0],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('formats milliseconds as Go prints durations', () => {
    const cases: [number, string][] = [
      [0, '0s'],
      [300, '300ms'],
      [1500, '1.5s'],
      [300_000, '5m0s'],
      [5_400_000, '1h30m0s'],
      [3_723_004, '1h2m3.004s'],
      [1.5, '1.5ms'],
      [0.0015, '1.5µs'],
      [0.000002, '2ns'],
      [-2000, '-2s'],
    ];
    for (const [ms, text] of cases) assert.equal(formatDuration(ms), text, String(ms));
  });

  it('round-trips through format and parse', () => {
    for (const ms of [1, 999, 1000, 61_000, 3_600_000, 86_400_000, 0.25]) assert.equal(parseDuration(formatDuration(ms)), ms);
  });
});

describe('cluster store flags', () => {
  const parse = (argv: string[]): ServerOptions => {
    const parsed = parseFlags(argv);
    assert.ok('options' in parsed);
    return parsed.options;
  };

  it('takes the members comma separated and repeated, with upstream defaults', () => {
    const options = parse(['--storage-backend', 'etcd3', '--etcd-servers', 'http://127.0.0.1:2379,https://10.0.0.2:2379', '--etcd-servers=http://h:1']);
    assert.deepEqual(options.etcdServers, ['http://127.0.0.1:2379', 'https://10.0.0.2:2379', 'http://h:1']);
    assert.equal(options.etcdPrefix, '/registry');
    assert.equal(options.eventTtlMs, 3_600_000);
    assert.equal(options.requestTimeoutMs, 60_000);
    assert.deepEqual(defaultServerOptions.etcdServers, [], 'the defaults are not changed by parsing');
    const tuned = parse(['--storage-backend=etcd3', '--etcd-servers=http://a:1', '--etcd-prefix=/c1/registry', '--event-ttl=5m', '--request-timeout=3s',
      '--etcd-cafile=/ca.pem', '--etcd-certfile=/c.pem', '--etcd-keyfile=/k.pem']);
    assert.deepEqual([tuned.etcdPrefix, tuned.eventTtlMs, tuned.requestTimeoutMs, tuned.etcdCaFile, tuned.etcdCertFile, tuned.etcdKeyFile],
      ['/c1/registry', 300_000, 3_000, '/ca.pem', '/c.pem', '/k.pem']);
  });

  it('refuses a store without members, bad URLs, and a zero timeout', () => {
    assert.throws(() => parseFlags(['--storage-backend', 'etcd3']), (e: FlagError) => e instanceof FlagError && /--etcd-servers must be specified/.test(e.message));
    assert.throws(() => parseFlags(['--etcd-servers', '127.0.0.1:2379']), /invalid argument "127.0.0.1:2379" for "--etcd-servers" flag/);
    assert.throws(() => parseFlags(['--etcd-servers', 'ftp://h:1']), /not an http or https URL/);
    assert.throws(() => parseFlags(['--request-timeout', '0s']), /--request-timeout must be positive/);
    assert.throws(() => parseFlags(['--storage-backend', 'etcd2']), /must be one of sqlite, memory, etcd3/);
    assert.throws(() => parseFlags(['--leader-elect-retry-period', '9s']), /must be greater than --leader-elect-renew-deadline/);
  });
});

describe('--version', () => {
  it('answers version (help still wins), and --version=false starts the server', () => {
    assert.deepEqual(parseFlags(['--version']), { version: true });
    assert.deepEqual(parseFlags(['--secure-port', '1', '--version']), { version: true });
    assert.ok('help' in parseFlags(['--version', '--help']));
    assert.ok('options' in parseFlags(['--version=false']));
  });
});
