// startServer: key material, store, registry, filters and the HTTPS listener,
// then the post-start work (reserved namespaces) and the admin kubeconfig.

import { createServer, Server } from 'node:https';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { builtinKinds } from '../api/catalog.js';
import { product, reservedNamespaces } from '../machinery/vocabulary.js';
import { ensureKeyMaterial, joinPem, writeAdminKubeconfig } from '../pki/index.js';
import { isSharedStore, openBackend, startCompactor } from '../storage/index.js';
import { CacheSet } from '../storage/cache/index.js';
import { Registry } from '../registry/registry.js';
import { ObjectLookup } from '../registry/lookup.js';
import { AdmissionChain } from '../admission/chain.js';
import { NamespaceLifecycle } from '../admission/plugins/namespacelifecycle.js';
import { ApiError } from '../machinery/errors.js';
import { buildAuthorization, readAuthorizationFiles } from './authorization.js';
import { reconcileDefaultPolicy } from './rbacbootstrap.js';
import { buildAuthentication, readIdentityFiles, serveAuthentication, tokenSigners } from './identity.js';
import { createApp } from './app.js';
import { handleConnectionLevel, maxHeaderBytes } from './connection.js';
import { InProcessClient } from './inprocess.js';
import { startControllerManager, ControllerManager } from '../controllers/index.js';
import { Health } from './health.js';
import { defaultServerOptions, ServerOptions } from './options.js';
import { OpenApiService } from './openapi/index.js';
import { versionInfo } from './discovery.js';

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
  stop(): Promise<void>;
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

/** Creates the reserved namespaces that do not exist yet. */
async function ensureReservedNamespaces(registry: Registry): Promise<void> {
  const namespaces = registry.namespaces();
  for (const name of reservedNamespaces) {
    if (await namespaces.find(undefined, name)) continue;
    try {
      await namespaces.create(undefined, { metadata: { name } }, { dryRun: false, fieldValidation: 'Strict', warnings: [] });
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}

export async function startServer(overrides: Partial<ServerOptions> = {}): Promise<RunningServer> {
  const options: ServerOptions = { ...defaultServerOptions, ...overrides };
  const log = pino({ level: options.logLevel, base: undefined });
  const identityFiles = await readIdentityFiles(options, log);
  const authorizationFiles = await readAuthorizationFiles(options);
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keys = await ensureKeyMaterial(options.dataDir, options);
  const signers = await tokenSigners(options, keys.serviceAccountSigningKeyPem);
  const backend = openBackend({
    kind: options.storageBackend, dataDir: options.dataDir,
    servers: options.etcdServers, prefix: options.etcdPrefix,
    caFile: options.etcdCaFile, certFile: options.etcdCertFile, keyFile: options.etcdKeyFile,
    requestTimeoutMs: options.requestTimeoutMs,
    eventTtlSeconds: Math.max(1, Math.round(options.eventTtlMs / 1000)),
  });
  const compactor = startCompactor(backend, options.etcdCompactionIntervalMs);
  // Plugins read through the registry they guard, so the chain gets it late.
  let registry: Registry | undefined;
  const authorization = buildAuthorization(authorizationFiles);
  const authorizer = authorization.authorizer;
  const admission = new AdmissionChain([new NamespaceLifecycle((name) => registry!.findNamespace(name)), authorization.escalation]);
  const caches = new CacheSet(backend, { historyWindowMs: options.etcdCompactionIntervalMs, maxBuffered: options.watchMaxBufferedEvents });
  registry = new Registry(builtinKinds, backend, admission, caches);

  let reservedReady = false;
  let shuttingDown = false;
  const health = new Health();
  health.add({ name: 'ping', check: () => undefined });
  health.add({ name: 'log', check: () => undefined });
  health.add({ name: backend.name, check: () => backend.check() });
  health.add({
    name: 'poststarthook/reserved-namespaces',
    check: () => { if (!reservedReady) throw new Error('reserved namespaces not created yet'); },
  });
  let policyReady = false;
  health.add({
    name: 'poststarthook/rbac/bootstrap-roles',
    check: () => { if (!policyReady) throw new Error('default RBAC policy not reconciled yet'); },
  });
  health.add({ name: 'shutdown', check: () => { if (shuttingDown) throw new Error('server is shutting down'); } }, ['readyz']);

  await authorization.start(registry);
  const lookup = new ObjectLookup(registry, caches);
  const identity = buildAuthentication(options, identityFiles, {
    authorizationModes: options.authorizationMode,
    serviceAccountPublicKeyPems: keys.serviceAccountPublicKeyPems,
    objects: { get: (resource, namespace, name) => lookup.get('', 'v1', resource, namespace, name) },
  });
  const authenticator = identity.authenticator;
  serveAuthentication(registry, options, identity, signers);
  const version = await packageVersion();
  const openapi = new OpenApiService(registry, { version: versionInfo(version).gitVersion });
  let address = '';
  const app = createApp({
    registry, health, authenticator, authorizer, log,
    packageVersion: version,
    openapi: (req, res, path, query) => openapi.handle(req, res, path, query),
    serverAddress: () => address,
  });

  const server: Server = createServer({
    key: keys.servingKeyPem,
    cert: keys.servingCertPem,
    ca: keys.clientCaPem,
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
  const port = (server.address() as AddressInfo).port;
  const host = options.bindAddress === '0.0.0.0' || options.bindAddress === '::' ? '127.0.0.1' : options.bindAddress;
  address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const url = `https://${address}`;

  await ensureReservedNamespaces(registry);
  reservedReady = true;
  await reconcileDefaultPolicy(new InProcessClient(registry, `${product.name}-apiserver`), (msg) => log.debug(msg));
  policyReady = true;
  // Controllers act through an in-process client. As upstream's controller
  // manager, they are not part of readiness: the API is ready without them.
  const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
  // A serving certificate from --tls-cert-file was not issued by our CA: trust its own chain as well.
  const trustedPem = options.tlsCertFile ? joinPem([keys.caCertPem, keys.servingCertPem]) : keys.caCertPem;
  // Servers that may share their store elect one of them to run the controllers.
  const shared = options.leaderElect ?? isSharedStore(options.storageBackend);
  const controllerManager = startControllerManager(
    new InProcessClient(registry, `${product.name}-controller-manager`),
    (msg, extra) => log.warn(extra ?? {}, msg),
    {
      identityControllers: { signer: signers.legacy, rootCaPem: trustedPem },
      selection: options.controllers,
      ...(shared ? {
        leaderElection: {
          leaseDurationMs: options.leaderElectLeaseDurationMs,
          renewDeadlineMs: options.leaderElectRenewDeadlineMs,
          retryPeriodMs: options.leaderElectRetryPeriodMs,
        },
        identity: { instance: address },
      } : {}),
    },
  );
  await writeAdminKubeconfig(kubeconfigPath, { server: url, caPem: trustedPem, certPem: keys.adminCertPem, keyPem: keys.adminKeyPem });
  log.info({ url, kubeconfig: kubeconfigPath, storage: backend.name }, 'serving');

  return {
    url, port, kubeconfigPath, options, log, registry, controllerManager,
    async stop() {
      shuttingDown = true;
      await controllerManager.stop();
      authorization.stop();
      compactor.stop();
      await caches.stopAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await backend.close();
    },
  };
}
