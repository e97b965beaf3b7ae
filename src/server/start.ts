// startServer: key material, store, registry, filters and the HTTPS listener,
// then the post-start work (reserved namespaces) and the admin kubeconfig.

import { createServer, Server } from 'node:https';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { builtinKinds } from '../api/catalog.js';
import { product, reservedNamespaces } from '../machinery/vocabulary.js';
import { systemGroups, type UserInfo } from '../machinery/user.js';
import { ensureKeyMaterial, joinPem, writeAdminKubeconfig } from '../pki/index.js';
import { openBackend, startCompactor } from '../storage/index.js';
import { CacheSet } from '../storage/cache/index.js';
import { Registry } from '../registry/registry.js';
import { buildAdmission } from '../admission/index.js';
import { ApiError } from '../machinery/errors.js';
import { UnionAuthenticator } from '../auth/authn/authenticator.js';
import { X509Authenticator } from '../auth/authn/x509.js';
import { AlwaysAllowAuthorizer, UnionAuthorizer } from '../auth/authz/authorizer.js';
import { createApp } from './app.js';
import { handleConnectionLevel, maxHeaderBytes } from './connection.js';
import { InProcessClient } from './inprocess.js';
import { builtinControllers } from '../controllers/index.js';
import { Health } from './health.js';
import { defaultServerOptions, ServerOptions } from './options.js';
import { OpenApiService } from './openapi/index.js';
import { versionInfo } from './discovery.js';

export interface RunningServer {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
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

/** The server's own identity for writes it makes itself (upstream's loopback user). */
const apiserverUser: UserInfo = { username: 'system:apiserver', groups: [systemGroups.masters, systemGroups.authenticated] };

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
  // Plugins read through the registry they guard, so they reach it late.
  let registry: Registry | undefined;
  const admission = await buildAdmission(
    { enable: options.enableAdmissionPlugins, disable: options.disableAdmissionPlugins, configFile: options.admissionControlConfigFile },
    {
      getNamespace: (name) => registry!.findNamespace(name),
      createNamespace: (name) => registry!.namespaces().create(undefined, { metadata: { name } }, { dryRun: false, fieldValidation: 'Strict', warnings: [], user: apiserverUser }),
      log: { warn: (msg, extra) => log.warn(extra ?? {}, msg), info: (msg, extra) => log.info(extra ?? {}, msg) },
    },
  );
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keys = await ensureKeyMaterial(options.dataDir, options);
  const backend = openBackend(options.storageBackend, options.dataDir);
  const compactor = startCompactor(backend, options.etcdCompactionIntervalMs);
  const caches = new CacheSet(backend, { historyWindowMs: options.etcdCompactionIntervalMs, maxBuffered: options.watchMaxBufferedEvents });
  registry = new Registry(builtinKinds, backend, admission.chain, caches);

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
  health.add({ name: 'shutdown', check: () => { if (shuttingDown) throw new Error('server is shutting down'); } }, ['readyz']);

  const authenticator = new UnionAuthenticator([new X509Authenticator()], { anonymous: options.anonymousAuth });
  const authorizer = new UnionAuthorizer([new AlwaysAllowAuthorizer()]);
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

  // Admission may refuse these writes (AlwaysDeny, a webhook that is not up
  // yet): the server then serves, not ready, and tries again until they exist.
  let reservedRetry: NodeJS.Timeout | undefined;
  const createReserved = async (): Promise<void> => {
    try {
      await ensureReservedNamespaces(registry!);
      reservedReady = true;
    } catch (err) {
      log.warn({ err }, 'could not create the reserved namespaces; trying again');
      if (!shuttingDown) reservedRetry = setTimeout(() => void createReserved(), 2_000);
    }
  };
  await createReserved();
  // Controllers act through an in-process client. As upstream's controller
  // manager, they are not part of readiness: the API is ready without them.
  const { controllers, informers } = builtinControllers(new InProcessClient(registry, `${product.name}-controller-manager`), (msg, extra) => log.warn(extra ?? {}, msg));
  Promise.all(controllers.map((c) => c.start())).catch((err) => log.error({ err }, 'controllers failed to start'));
  const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
  // A serving certificate from --tls-cert-file was not issued by our CA: trust its own chain as well.
  const trustedPem = options.tlsCertFile ? joinPem([keys.caCertPem, keys.servingCertPem]) : keys.caCertPem;
  await writeAdminKubeconfig(kubeconfigPath, { server: url, caPem: trustedPem, certPem: keys.adminCertPem, keyPem: keys.adminKeyPem });
  log.info({ url, kubeconfig: kubeconfigPath, storage: backend.name }, 'serving');

  return {
    url, port, kubeconfigPath, options, log, registry,
    async stop() {
      shuttingDown = true;
      clearTimeout(reservedRetry);
      for (const c of controllers) c.stop();
      informers.stopAll();
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
