// The server's parts, each made once what it needs exists: the options'
// files, metrics and audit, admission, key material, the store and its
// caches, the registry with one in-process client and the shared informers,
// what it serves, health and the post-start hooks, the HTTPS listener, then
// the controllers and the admin kubeconfig. Each part adds its closer to
// `closers` as it is made, so stop() and a failed start run one list.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry as MetricRegistry } from 'prom-client';
import { builtinKinds } from '../api/catalog.js';
import { product } from '../machinery/vocabulary.js';
import { ensureKeyMaterial, joinPem, loadRequestSigner, writeAdminKubeconfig } from '../pki/index.js';
import { Registry } from '../registry/registry.js';
import { ObjectLookup } from '../registry/lookup.js';
import { AdmissionListers } from '../admission/index.js';
import { InformerFactory } from '../client/informer.js';
import type { ControllerManager } from '../controllers/index.js';
import { Metrics } from '../server/metrics.js';
import { Auditor } from '../server/audit/index.js';
import { InflightGate } from '../server/inflight.js';
import { RequestMetrics } from '../server/requestmetrics.js';
import { Lifecycle } from '../server/lifecycle.js';
import { Health } from '../server/health.js';
import { HttpsListener } from '../server/listener.js';
import type { ServerOptions } from '../server/options.js';
import type { Closers } from './closers.js';
import { readStartConfig } from './config.js';
import { serverAdmission, type AdmittedServer } from './admission.js';
import { openStorage, type Storage } from './storage.js';
import { InProcessClient } from './inprocess.js';
import { buildAuthorization } from './authorization.js';
import { tokenSigners } from './identity.js';
import { serveApis } from './serving.js';
import { PostStartHooks } from './hooks.js';
import { addBootstrapHooks } from './bootstrap.js';
import { serveHttp } from './http.js';
import { startControllers } from './controllers.js';
import { markStartStep, startSteps } from './phases.js';

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

export async function assemble(options: ServerOptions, log: Logger, closers: Closers): Promise<RunningServer> {
  const { features, enablement, identityFiles, authorizationFiles } = await readStartConfig(options, log);
  const warn = (msg: string, extra?: object) => log.warn(extra ?? {}, msg);
  const metrics = new Metrics({ features, showHiddenMetricsForVersion: options.showHiddenMetricsForVersion });
  const auditor = await Auditor.create(options, metrics.registry, log);
  closers.add(() => auditor?.close());
  const authorization = buildAuthorization(authorizationFiles, (message, extra) => log.warn(extra, message));
  // Made later than the parts that reach them when requests come (admission and the request metrics read the registry they guard).
  const late: { storage?: Storage; served?: AdmittedServer } = {};
  const listers = new AdmissionListers();
  const admission = await serverAdmission(options, {
    log, metrics: metrics.registry, listers, authorization, enablement,
    served: () => { if (!late.served) throw new Error('admission reached the registry before it was made'); return late.served; },
  });
  closers.add(() => admission.close());
  markStartStep('config');
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keys = await ensureKeyMaterial(options.dataDir, options);
  const signers = await tokenSigners(options, keys.serviceAccountSigningKeyPem);
  const clusterSigner = await loadRequestSigner(options.clusterSigningCertFile, options.clusterSigningKeyFile, { certPem: keys.caCertPem, keyPem: keys.caKeyPem });
  markStartStep('keys');
  const gate = new InflightGate({ readOnly: options.maxRequestsInflight, mutating: options.maxMutatingRequestsInflight });
  const requestMetrics = new RequestMetrics(metrics.registry, () => late.served?.registry, gate, () => late.storage?.backend);
  const lifecycle = new Lifecycle(options, requestMetrics);
  const storage = late.storage = openStorage(options, log, closers, requestMetrics.storageObserver, metrics.registry);
  markStartStep('storage');
  const registry = new Registry(builtinKinds, storage.timed, admission.chain, storage.caches, enablement);
  const lookup = new ObjectLookup(registry, storage.caches);
  late.served = { registry, lookup };
  // One client for the server's own reads and writes, and one informer per
  // resource and selector for the whole process: the RBAC index, the
  // webhook configurations and every controller read from it.
  const client = new InProcessClient(registry, `${product.name}-apiserver`);
  const informers = new InformerFactory(client);
  closers.add(() => informers.stopAll());
  const { aggregator, authenticator } = await serveApis({
    options, log, closers, registry, store: storage.timed, lookup, informers, client, admissionListers: listers, authorization, identityFiles, keys, signers,
  });
  markStartStep('apis');
  const health = new Health();
  for (const name of ['ping', 'log']) health.add({ name, check: () => undefined });
  health.add({ name: storage.backend.name, check: () => storage.backend.check() });
  const hooks = new PostStartHooks(health, { inLivezGrace: () => lifecycle.inLivezGrace(), log: warn });
  closers.add(() => hooks.shutDown());
  // A serving certificate from --tls-cert-file was not issued by our CA: trust its own chain as well.
  const trustedPem = options.tlsCertFile ? joinPem([keys.caCertPem, keys.servingCertPem]) : keys.caCertPem;
  // The authenticating proxy's CAs, when given, are trusted for its connections only (see identity.ts).
  const listener = new HttpsListener({
    keyPem: keys.servingKeyPem, certPem: keys.servingCertPem,
    clientCaPem: identityFiles.requestHeaderCaPem ? joinPem([keys.clientCaPem, identityFiles.requestHeaderCaPem]) : keys.clientCaPem,
  });
  addBootstrapHooks(hooks, { options, log, registry, client, keys, identityFiles, trustedPem, url: () => listener.url });
  await serveHttp({
    options, log, closers, listener, registry, health, authenticator, authorizer: authorization.authorizer, aggregator,
    metrics, gate, requestMetrics, auditor, lifecycle, features, keys,
  });
  markStartStep('listening');
  // The first try of each hook is made before the server says it serves.
  await hooks.start();
  markStartStep('hooks');
  const controllerManager = await startControllers({
    options, log, closers, client, informers, metrics: metrics.registry, features, store: storage.timed, aggregator,
    authorizer: authorization.authorizer, signers, clusterSigner, trustedPem, address: listener.address, port: listener.port,
  });
  const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
  await writeAdminKubeconfig(kubeconfigPath, { server: listener.url, caPem: trustedPem, certPem: keys.adminCertPem, keyPem: keys.adminKeyPem });
  markStartStep('controllers');
  log.info({ url: listener.url, kubeconfig: kubeconfigPath, storage: storage.backend.name, startup: startSteps() }, 'serving');
  const stop = async () => {
    const [failure] = await closers.closeAll();
    if (failure) throw failure;
  };
  return {
    url: listener.url, port: listener.port, kubeconfigPath, options, log, registry, controllerManager, stop, metricRegistry: metrics.registry,
    async shutdown() {
      await lifecycle.drain(listener.server);
      await stop();
    },
  };
}
