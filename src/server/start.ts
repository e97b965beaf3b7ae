// startServer: key material, store, registry, filters and the HTTPS listener,
// then the post-start work (reserved namespaces) and the admin kubeconfig.

import { registerCacheMetrics } from './cachemetrics.js';
import { createServer, Server } from 'node:https';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import { createLogger } from './logging.js';
import { builtinKinds } from '../api/catalog.js';
import { product, reservedNamespaces } from '../machinery/vocabulary.js';
import { systemGroups, type UserInfo } from '../machinery/user.js';
import { ensureKeyMaterial, joinPem, loadRequestSigner, writeAdminKubeconfig } from '../pki/index.js';
import { isSharedStore, openBackend, startCompactor, StorageError, timedBackend, type Backend } from '../storage/index.js';
import { CacheSet } from '../storage/cache/index.js';
import { Registry } from '../registry/registry.js';
import { ObjectLookup } from '../registry/lookup.js';
import { AdmissionListers, buildAdmission } from '../admission/index.js';
import { enabledPluginNames } from '../admission/plugin-names.js';
import { AdmissionMetrics } from '../admission/metrics.js';
import { InformerFactory } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import { ItemExponentialRateLimiter } from '../client/ratelimit.js';
import { Metrics } from './metrics.js';
import type { Registry as MetricRegistry } from 'prom-client';
import { PromWorkQueueMetrics } from './workqueuemetrics.js';
import { Auditor } from './audit/index.js';
import { InflightGate } from './inflight.js';
import { RequestMetrics } from './requestmetrics.js';
import { Lifecycle } from './lifecycle.js';
import { ApiError } from '../machinery/errors.js';
import { buildAuthorization, readAuthorizationFiles } from './authorization.js';
import { reconcileDefaultPolicy } from './rbacbootstrap.js';
import { buildAuthentication, readIdentityFiles, serveAuthentication, tokenSigners } from './identity.js';
import { podRests } from '../registry/pods.js';
import { nodeRests } from '../registry/nodes.js';
import { componentStatusRest } from '../registry/componentstatuses.js';
import { evictionRest } from '../registry/eviction.js';
import { serveServices } from '../registry/services.js';
import { StoredServerLeases } from '../registry/masterleases.js';
import { PlatServiceController } from '../controllers/platservice.js';
import { parseNodePortRange, parseServiceIPRanges, serviceAllocation } from '../registry/allocation/index.js';
import { validateClusterIPs } from '../api/core/v1/service.js';
import { createApp } from './app.js';
import { handleConnectionLevel, maxHeaderBytes } from './connection.js';
import { InProcessClient } from './inprocess.js';
import { CustomResourceServing } from './customresources.js';
import { ConversionWebhooks } from './conversionwebhook.js';
import { startControllerManager, ControllerManager } from '../controllers/index.js';
import { ensureClusterInfo } from './clusterinfo.js';
import { Aggregator, probeApiService } from './aggregator/index.js';
import { ensureExtensionAuthentication, proxyHeaderDefaults } from './aggregator/authconfigmap.js';
import { ApiServiceAvailability, ApiServiceRegistration } from '../controllers/apiservices.js';
import { frontProxyClientName } from '../pki/key-material.js';
import { ensureSystemPriorityClasses } from './priorityclasses.js';
import { Health } from './health.js';
import { servedApiVersions } from './apiversions.js';
import { DeprecatedApis } from './deprecation.js';
import { FeatureGates } from '../machinery/featuregates.js';
import { defaultServerOptions, ServerOptions } from './options.js';
import { OpenApiService } from './openapi/index.js';
import { versionInfo } from './discovery.js';
import { issuerDiscovery, issuerDiscoveryProblem, type IssuerDiscoveryHandler } from './issuerdiscovery.js';

export interface RunningServer {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Runs the in-process controllers (or competes for the right to). */
  controllerManager: ControllerManager;
  kubeconfigPath: string;
  options: ServerOptions;
  /** The server's logger, for the process around it. */
  log: Logger;
  /** What the server serves; kinds and REST objects may be added and removed while it runs. */
  registry: Registry;
  /** The metrics /metrics shows; metrics may be declared on it while the server runs (declareMetric). */
  metricRegistry: MetricRegistry;
  stop(): Promise<void>;
  /** SIGTERM's way out: /readyz fails, the delay passes, requests and watches drain, then everything stops. */
  shutdown(): Promise<void>;
}

/** This package's version (package.json), for /version and --version. */
export async function packageVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8'));
    return String(pkg.version);
  } catch {
    return '0.0.0';
  }
}

/** The server's own identity for writes it makes itself (upstream's loopback user). */
const apiserverUser: UserInfo = { username: 'system:apiserver', groups: [systemGroups.masters, systemGroups.authenticated] };

/** Creates the reserved namespaces that do not exist yet. */
async function ensureReservedNamespaces(registry: Registry): Promise<void> {
  const namespaces = registry.namespaces();
  for (const name of reservedNamespaces) {
    if (await namespaces.find(undefined, name)) continue;
    try {
      await namespaces.create(undefined, { value: { metadata: { name } } }, { dryRun: false, fieldValidation: 'Strict' }, { warnings: [] });
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}

export async function startServer(overrides: Partial<ServerOptions> = {}): Promise<RunningServer> {
  const options: ServerOptions = { ...defaultServerOptions, ...overrides };
  const log = createLogger({ level: options.logLevel, format: options.loggingFormat, destination: options.logDestination });
  // A failed start closes what it opened and leaves the data dir as it found it.
  const closers: Closer[] = [];
  const dataDirBefore = await dataDirState(options.dataDir);
  try {
    return await assemble(options, log, closers);
  } catch (e) {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch (err) {
        log.debug({ err }, 'closing after a failed start');
      }
    }
    // A store another process holds means the folder is not this start's to tidy.
    if (!(e instanceof StorageError && e.code === 'Unavailable')) await undoDataDir(options.dataDir, dataDirBefore);
    throw e;
  }
}

type Closer = () => unknown;

async function assemble(options: ServerOptions, log: Logger, closers: Closer[]): Promise<RunningServer> {
  // Before anything is opened: a refused --feature-gates or --runtime-config leaves nothing behind.
  const { gates: features, warnings: featureWarnings } = FeatureGates.fromFlags(options.featureGates);
  for (const warning of featureWarnings) log.warn(warning);
  const enablement = servedApiVersions(options.runtimeConfig, enabledPluginNames(options.enableAdmissionPlugins, options.disableAdmissionPlugins), (message) => log.warn(message));
  const identityFiles = await readIdentityFiles(options, log);
  const authorizationFiles = await readAuthorizationFiles(options);
  // Plugins read through the registry they guard, so they reach it late.
  let registry: Registry | undefined;
  const authorization = buildAuthorization(authorizationFiles, (message, extra) => log.warn(extra, message));
  const authorizer = authorization.authorizer;
  const metrics = new Metrics({ features, showHiddenMetricsForVersion: options.showHiddenMetricsForVersion });
  const auditor = await Auditor.create(options, metrics.registry, log);
  closers.push(() => auditor?.close());
  const gate = new InflightGate({ readOnly: options.maxRequestsInflight, mutating: options.maxMutatingRequestsInflight });
  let rawBackend: Backend | undefined;
  let objectLookup: ObjectLookup | undefined;
  const requestMetrics = new RequestMetrics(metrics.registry, () => registry, gate, () => rawBackend);
  const lifecycle = new Lifecycle(options, requestMetrics);
  const admissionListers = new AdmissionListers();
  const admission = await buildAdmission(
    {
      enable: options.enableAdmissionPlugins, disable: options.disableAdmissionPlugins, configFile: options.admissionControlConfigFile,
      // Not a configurable plugin: RBAC's escalation check guards every write of roles and bindings.
      serverPlugins: [authorization.escalation],
    },
    {
      // From the cache without waiting for it (the store on a miss), as upstream's lister; live after a deletion.
      getNamespace: (name, live) => (live ? registry!.findNamespace(name) : objectLookup!.get('', 'v1', 'namespaces', undefined, name)),
      getPod: async (namespace, name) => registry!.store('', 'v1', 'pods')?.find(namespace, name),
      createNamespace: (name) => registry!.namespaces().create(undefined, { value: { metadata: { name } } }, { dryRun: false, fieldValidation: 'Strict' }, { warnings: [], user: apiserverUser }),
      log: { warn: (msg, extra) => log.warn(extra ?? {}, msg), info: (msg, extra) => log.info(extra ?? {}, msg) },
      metrics: new AdmissionMetrics(metrics.registry),
      listers: admissionListers,
      getObject: (group, version, resource, namespace, name) => objectLookup!.get(group, version, resource, namespace, name),
      authorize: (attributes) => authorizer.authorize(attributes),
      kindResources: (group, version, kind) => registry!.restObjects().map((r) => r.describe).filter((d) => !d.subresource && d.group === group && d.version === version && d.kind.kind === kind),
      serves: (group, version, resource) => enablement.serves(group, version, resource),
      tolerationSeconds: { notReady: options.defaultNotReadyTolerationSeconds, unreachable: options.defaultUnreachableTolerationSeconds },
    },
  );
  closers.push(() => admission.close());
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keys = await ensureKeyMaterial(options.dataDir, options);
  const signers = await tokenSigners(options, keys.serviceAccountSigningKeyPem);
  const clusterSigner = await loadRequestSigner(options.clusterSigningCertFile, options.clusterSigningKeyFile, { certPem: keys.caCertPem, keyPem: keys.caKeyPem });
  const backend = rawBackend = openBackend({
    kind: options.storageBackend, dataDir: options.dataDir,
    servers: options.etcdServers, prefix: options.etcdPrefix,
    caFile: options.etcdCaFile, certFile: options.etcdCertFile, keyFile: options.etcdKeyFile,
    requestTimeoutMs: options.requestTimeoutMs,
    eventTtlSeconds: Math.max(1, Math.round(options.eventTtlMs / 1000)),
    maxValueBytes: options.maxStoredObjectBytes,
    // The store's own recent events for its watchers (the caches' feed) are bounded as the caches' windows are.
    watchHubBytes: options.watchCacheWindowBytes,
    notice: (line) => log.info(line),
  });
  closers.push(() => backend.close());
  const compactor = startCompactor(backend, options.etcdCompactionIntervalMs);
  closers.push(() => compactor.stop());
  // What the server itself asks of the store is timed; the metrics' own counting is not.
  const timed = timedBackend(backend, requestMetrics.storageObserver);
  const caches = new CacheSet(timed, {
    historyWindowMs: options.etcdCompactionIntervalMs, maxBuffered: options.watchMaxBufferedEvents, maxWindowBytes: options.watchCacheWindowBytes,
  });
  closers.push(() => caches.stopAll());
  registerCacheMetrics(metrics.registry, caches, backend);
  registry = new Registry(builtinKinds, timed, admission.chain, caches, enablement);
  // One informer per resource and selector for the whole process: the RBAC
  // index, the webhook configurations and every controller read from it.
  const informers = new InformerFactory(new InProcessClient(registry, `${product.name}-apiserver`));
  closers.push(() => informers.stopAll());
  const workQueueMetrics = new PromWorkQueueMetrics(metrics.registry);
  // What admission plugins read (webhook configurations among it) is known before the first request is served.
  closers.push(() => admissionListers.stop());
  await admissionListers.start(informers, new InProcessClient(registry, `${product.name}-apiserver`));
  // Custom resources are served (by every server on the store) before the first request.
  const conversionWebhooks = new ConversionWebhooks();
  closers.push(() => conversionWebhooks.close());
  const customResources = new CustomResourceServing(registry, new InProcessClient(registry, `${product.name}-apiextensions`), (msg, extra) => log.warn(extra ?? {}, msg),
    (crd) => conversionWebhooks.conversionFor(crd));
  closers.push(() => customResources.stop());
  await customResources.start(informers);
  // Group versions APIServices hand to other servers: known before the first request too.
  const servedHere = (group: string, version: string) => registry!.restObjectsOf(group, version).length > 0;
  const aggregator = new Aggregator({
    identity: { certPem: keys.proxyClientCertPem, keyPem: keys.proxyClientKeyPem },
    routeToEndpoints: options.enableAggregatorRouting,
    servedHere,
    log: (msg, extra) => log.warn(extra ?? {}, msg),
  });
  closers.push(() => aggregator.stop());
  await aggregator.start(informers, new InProcessClient(registry, `${product.name}-aggregator`));

  let reservedReady = false;
  let shuttingDown = false;
  const health = new Health();
  health.add({ name: 'ping', check: () => undefined });
  health.add({ name: 'log', check: () => undefined });
  health.add({ name: backend.name, check: () => backend.check() });
  let policyReady = false;
  let priorityClassesReady = false;
  const postStartHooks = [
    { name: 'poststarthook/reserved-namespaces', check: () => { if (!reservedReady) throw new Error('reserved namespaces not created yet'); } },
    { name: 'poststarthook/rbac/bootstrap-roles', check: () => { if (!policyReady) throw new Error('default RBAC policy not reconciled yet'); } },
    { name: 'poststarthook/scheduling/bootstrap-system-priority-classes', check: () => { if (!priorityClassesReady) throw new Error('system priority classes not created yet'); } },
  ];
  for (const hook of postStartHooks) {
    health.add(hook, ['healthz', 'readyz']);
    // As upstream: within --livez-grace-period, unfinished post-start work does not make the server not live.
    health.add({ name: hook.name, check: () => (lifecycle.inLivezGrace() ? undefined : hook.check()) }, ['livez']);
  }
  health.add({ name: 'shutdown', check: () => { if (shuttingDown || lifecycle.shuttingDown) throw new Error('server is shutting down'); } }, ['readyz']);

  closers.push(() => authorization.stop());
  await authorization.start(registry, informers);
  const lookup = objectLookup = new ObjectLookup(registry, caches);
  const identity = buildAuthentication(options, identityFiles, {
    authorizationModes: options.authorizationMode,
    serviceAccountPublicKeyPems: keys.serviceAccountPublicKeyPems,
    objects: { get: (resource, namespace, name) => lookup.find('', 'v1', resource, namespace, name) },
    clientCaPem: keys.clientCaPem,
  });
  const authenticator = identity.authenticator;
  serveAuthentication(registry, options, identity, signers);
  for (const rest of [...podRests(registry), ...nodeRests(registry), componentStatusRest(timed)]) registry.addRest(rest);
  const eviction = evictionRest(registry);
  if (eviction) registry.addRest(eviction);
  const stopServiceRepairs = await serveServices(registry,
    serviceAllocation(timed, parseServiceIPRanges(options.serviceClusterIpRange), parseNodePortRange(options.serviceNodePortRange), validateClusterIPs), log);
  closers.push(stopServiceRepairs);
  const version = await packageVersion();
  const openapi = new OpenApiService(registry, { version: versionInfo(version).gitVersion, remote: { get generation() { return aggregator.generation; }, documents: () => aggregator.openapiV3(), v2: () => aggregator.openapiV2() } });
  let address = '';
  // As upstream: a bad issuer for discovery is a warning, not a failed start.
  const discoveryProblem = issuerDiscoveryProblem(options.serviceAccountIssuer[0]!, options.serviceAccountJwksUri);
  if (discoveryProblem) log.warn(`service account issuer discovery is not served: ${discoveryProblem}`);
  let discoveryHandler: IssuerDiscoveryHandler | undefined;
  const app = createApp({
    aggregator,
    registry, health, authenticator, authorizer, log,
    packageVersion: version,
    openapi: (req, res, path, query) => openapi.handle(req, res, path, query),
    serverAddress: () => address,
    metrics: (req, res) => metrics.serve(req, res),
    issuerDiscovery: (req, res, path) => discoveryHandler?.(req, res, path) ?? false,
    inflight: gate,
    requestTimeoutMs: options.requestTimeoutMs,
    requestMetrics,
    auditor,
    lifecycle,
    logRequests: options.verbosity >= 3,
    deprecatedApis: new DeprecatedApis(metrics.registry),
    features,
  });

  const server: Server = createServer({
    key: keys.servingKeyPem,
    cert: keys.servingCertPem,
    // The authenticating proxy's CAs, when given, are trusted for its connections only (see identity.ts).
    ca: identityFiles.requestHeaderCaPem ? joinPem([keys.clientCaPem, identityFiles.requestHeaderCaPem]) : keys.clientCaPem,
    requestCert: true,
    rejectUnauthorized: false, // verified per request by the x509 authenticator
    maxHeaderSize: maxHeaderBytes,
  }, app);
  server.keepAliveTimeout = 65_000;
  handleConnectionLevel(server, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.securePort, options.bindAddress, () => { server.off('error', reject); resolve(); });
  });
  closers.push(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
  const port = (server.address() as AddressInfo).port;
  const host = options.bindAddress === '0.0.0.0' || options.bindAddress === '::' ? '127.0.0.1' : options.bindAddress;
  address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const url = `https://${address}`;
  if (!discoveryProblem) {
    discoveryHandler = issuerDiscovery({ issuer: options.serviceAccountIssuer[0]!, jwksUri: options.serviceAccountJwksUri, address, publicKeyPems: keys.serviceAccountPublicKeyPems });
  }

  // Admission may refuse these writes (AlwaysDeny, a webhook that is not up
  // yet): the server then serves, not ready, and tries again every 2 s until
  // they are done. The first try is made here, before the server says it serves.
  // A serving certificate from --tls-cert-file was not issued by our CA: trust its own chain as well.
  const trustedPem = options.tlsCertFile ? joinPem([keys.caCertPem, keys.servingCertPem]) : keys.caCertPem;
  const postStartWork: Record<string, { failure: string; run(): Promise<void> }> = {
    'reserved-namespaces': {
      failure: 'could not create the reserved namespaces; trying again',
      run: async () => { await ensureReservedNamespaces(registry!); reservedReady = true; },
    },
    // The default policy is written through admission too: refused, the server stays not ready and tries again.
    'rbac-bootstrap-roles': {
      failure: 'could not reconcile the default RBAC policy; trying again',
      run: async () => { await reconcileDefaultPolicy(new InProcessClient(registry!, `${product.name}-apiserver`), (msg) => log.debug(msg)); policyReady = true; },
    },
    'scheduling/bootstrap-system-priority-classes': {
      failure: 'could not create the system priority classes; trying again',
      run: async () => { await ensureSystemPriorityClasses(new InProcessClient(registry!, `${product.name}-apiserver`)); priorityClassesReady = true; },
    },
    // Not a readiness condition: bootstrap clients find it once it is there.
    // How aggregated servers trust this one's proxy (and its clients), as upstream publishes it.
    'extension-apiserver-authentication': {
      failure: 'could not write the extension-apiserver-authentication ConfigMap; trying again',
      run: () => ensureExtensionAuthentication(new InProcessClient(registry!, `${product.name}-apiserver`), {
        clientCaPem: keys.clientCaPem,
        requestHeaderCaPem: joinPem([keys.frontProxyCaCertPem, ...(identityFiles.requestHeaderCaPem ? [identityFiles.requestHeaderCaPem] : [])]),
        allowedNames: options.requestheaderAllowedNames?.length ? options.requestheaderAllowedNames : (options.proxyClientCertFile ? [] : [frontProxyClientName]),
        usernameHeaders: options.requestheaderUsernameHeaders?.length ? options.requestheaderUsernameHeaders : proxyHeaderDefaults.usernameHeaders,
        groupHeaders: options.requestheaderGroupHeaders?.length ? options.requestheaderGroupHeaders : proxyHeaderDefaults.groupHeaders,
        extraHeaderPrefixes: options.requestheaderExtraHeadersPrefix?.length ? options.requestheaderExtraHeadersPrefix : proxyHeaderDefaults.extraHeaderPrefixes,
      }),
    },
    'cluster-info': {
      failure: 'could not create the cluster-info ConfigMap; trying again',
      run: () => ensureClusterInfo(new InProcessClient(registry!, `${product.name}-apiserver`), url, trustedPem),
    },
  };
  const postStart = new WorkQueue((key) => postStartWork[key]!.run(), {
    name: 'poststarthooks', workers: 1, maxRetries: Infinity, failure: 'post-start work failed; trying again', rateLimiter: new ItemExponentialRateLimiter(2_000, 2_000),
    log: (msg, extra) => log.warn(extra ?? {}, msg), describe: (key, err) => ({ err, hook: key }),
  });
  closers.push(() => postStart.shutDown());
  for (const [key, work] of Object.entries(postStartWork)) {
    try {
      await work.run();
    } catch (err) {
      log.warn({ err }, work.failure);
      postStart.addRateLimited(key);
    }
  }
  // Controllers act through an in-process client. As upstream's controller
  // manager, they are not part of readiness: the API is ready without them.
  const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
  // Servers that may share their store elect one of them to run the controllers.
  const shared = options.leaderElect ?? isSharedStore(options.storageBackend);
  const controllerManager = startControllerManager(
    new InProcessClient(registry, `${product.name}-controller-manager`),
    (msg, extra) => log.warn(extra ?? {}, msg),
    {
      identityControllers: {
        signer: signers.legacy, rootCaPem: trustedPem,
        certificates: { signing: { issuer: clusterSigner, durationMs: options.clusterSigningDurationMs }, authorize: (attributes) => authorizer.authorize(attributes) },
      },
      selection: options.controllers,
      kit: { informers, metrics: workQueueMetrics },
      ...(shared ? {
        leaderElection: {
          leaseDurationMs: options.leaderElectLeaseDurationMs,
          renewDeadlineMs: options.leaderElectRenewDeadlineMs,
          retryPeriodMs: options.leaderElectRetryPeriodMs,
        },
        ...(features.enabled('APIServerIdentity') ? { identity: { instance: address } } : {}),
      } : {}),
    },
  );
  closers.push(() => controllerManager.stop());
  // The product's Service in default and this server's address in its Endpoints.
  const advertised = options.advertiseAddress ?? defaultAdvertiseAddress();
  if (!advertised) log.warn(`no non-loopback address to advertise: the ${product.name} Service's Endpoints will not list this server (set --advertise-address)`);
  const platService = new PlatServiceController(new InProcessClient(registry, `${product.name}-apiserver`), {
    advertise: advertised ? { ip: advertised, port } : undefined,
    clusterIP: parseServiceIPRanges(options.serviceClusterIpRange)[0]!.valueAt(0),
    securePort: port,
    leases: new StoredServerLeases(timed),
    log: (msg, extra) => log.warn(extra ?? {}, msg),
  });
  platService.start();
  closers.push(() => platService.stop());
  // The APIService controllers run on every server, as upstream's aggregator runs them in each API server.
  const apiServiceControllers = [
    new ApiServiceRegistration(new InProcessClient(registry, `${product.name}-aggregator`), (msg, extra) => log.warn(extra ?? {}, msg), { informers, metrics: workQueueMetrics }),
    new ApiServiceAvailability(new InProcessClient(registry, `${product.name}-aggregator`), (msg, extra) => log.warn(extra ?? {}, msg), { informers, metrics: workQueueMetrics },
      (apiService) => probeApiService(aggregator, apiService)),
  ];
  aggregator.recheck = (apiService) => (apiServiceControllers[1] as ApiServiceAvailability).recheck(String(apiService.metadata?.name));
  closers.push(() => Promise.all(apiServiceControllers.map((c) => c.stop())));
  await Promise.all(apiServiceControllers.map((c) => c.start()));
  await writeAdminKubeconfig(kubeconfigPath, { server: url, caPem: trustedPem, certPem: keys.adminCertPem, keyPem: keys.adminKeyPem });
  log.info({ url, kubeconfig: kubeconfigPath, storage: backend.name }, 'serving');

  const stop = async () => {
    shuttingDown = true;
    await platService.stop();
    await Promise.all(apiServiceControllers.map((c) => c.stop()));
    aggregator.stop();
    await controllerManager.stop();
    await postStart.shutDown();
    admissionListers.stop();
    await customResources.stop();
    conversionWebhooks.close();
    admission.close();
    authorization.stop();
    informers.stopAll();
    compactor.stop();
    stopServiceRepairs();
    await caches.stopAll();
    // After a graceful drain the listener is closed already, and a second close would never call back.
    if (server.listening) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    } else server.closeAllConnections();
    await auditor?.close();
    await backend.close();
  };
  return {
    url, port, kubeconfigPath, options, log, registry, controllerManager, stop, metricRegistry: metrics.registry,
    async shutdown() {
      await lifecycle.drain(server);
      await stop();
    },
  };
}

/** As upstream picks an address to advertise: the host's first non-loopback IPv4 address, if any. */
function defaultAdvertiseAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** What the data dir held before this start: absent (with the first folder of its path this start makes), empty, or in use. */
type DataDirState = { kind: 'absent'; topmost: string } | { kind: 'empty' } | { kind: 'used' };

async function dataDirState(dataDir: string): Promise<DataDirState> {
  let topmost = resolve(dataDir);
  try {
    return (await readdir(topmost)).length === 0 ? { kind: 'empty' } : { kind: 'used' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return { kind: 'used' };
  }
  // mkdir -p makes every missing folder of the path: the outermost of them goes again.
  for (let parent = dirname(topmost); parent !== topmost && !existsSync(parent); parent = dirname(parent)) topmost = parent;
  return { kind: 'absent', topmost };
}

/** After a failed start: a data dir it made is removed, one that was empty is emptied; one in use keeps everything. */
async function undoDataDir(dataDir: string, before: DataDirState): Promise<void> {
  if (before.kind === 'used') return;
  if (before.kind === 'absent') {
    await rm(before.topmost, { recursive: true, force: true });
    return;
  }
  for (const entry of await readdir(dataDir).catch(() => [])) await rm(join(dataDir, entry), { recursive: true, force: true });
}
