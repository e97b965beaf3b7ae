// The controllers a server runs once it serves, each through the in-process
// client. As upstream's controller manager, they are not part of readiness:
// the API is ready without them. Servers that may share their store elect one
// of them to run the controller manager; the product's Service (this server's
// address in its Endpoints) and the APIService controllers run on every
// server, as upstream's API servers run them.

import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import { product } from '../machinery/vocabulary.js';
import type { FeatureGates } from '../machinery/featuregates.js';
import type { TokenSigners } from './identity.js';
import type { RequestSigner } from '../pki/index.js';
import { isSharedStore, type Backend } from '../storage/index.js';
import { StoredServerLeases } from '../registry/masterleases.js';
import { parseServiceIPRanges } from '../registry/allocation/index.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import type { InformerFactory } from '../client/informer.js';
import { startControllerManager, type ControllerManager } from '../controllers/index.js';
import { PlatServiceController } from '../controllers/platservice.js';
import { ApiServiceAvailability, ApiServiceRegistration } from '../controllers/apiservices.js';
import { probeApiService, type Aggregator } from '../server/aggregator/index.js';
import type { ServerOptions } from '../server/options.js';
import type { InProcessClient } from './inprocess.js';
import { PromWorkQueueMetrics } from './workqueuemetrics.js';
import type { Closers } from './closers.js';
import type { Registry as MetricRegistry } from 'prom-client';

export interface ControllerInputs {
  options: ServerOptions;
  log: Logger;
  closers: Closers;
  client: InProcessClient;
  informers: InformerFactory;
  metrics: MetricRegistry;
  features: FeatureGates;
  /** The store as the server uses it, where the servers' leases live. */
  store: Backend;
  aggregator: Aggregator;
  authorizer: Authorizer;
  signers: TokenSigners;
  clusterSigner: RequestSigner;
  /** The CA bundle that verifies the serving certificate, as pods are given it. */
  trustedPem: string;
  /** host:port and port the server listens on. */
  address: string;
  port: number;
}

export async function startControllers(p: ControllerInputs): Promise<ControllerManager> {
  const { options, log, closers, informers } = p;
  const warn = (msg: string, extra?: object) => log.warn(extra ?? {}, msg);
  const kit = { informers, metrics: new PromWorkQueueMetrics(p.metrics) };
  const shared = options.leaderElect ?? isSharedStore(options.storageBackend);
  const controllerManager = startControllerManager(p.client.as(`${product.name}-controller-manager`), warn, {
    identityControllers: {
      signer: p.signers.legacy, rootCaPem: p.trustedPem,
      certificates: { signing: { issuer: p.clusterSigner, durationMs: options.clusterSigningDurationMs }, authorize: (attributes) => p.authorizer.authorize(attributes) },
    },
    selection: options.controllers,
    kit,
    ...(shared ? {
      leaderElection: {
        leaseDurationMs: options.leaderElectLeaseDurationMs,
        renewDeadlineMs: options.leaderElectRenewDeadlineMs,
        retryPeriodMs: options.leaderElectRetryPeriodMs,
      },
      ...(p.features.enabled('APIServerIdentity') ? { identity: { instance: p.address } } : {}),
    } : {}),
  });
  closers.add(() => controllerManager.stop());
  const advertised = options.advertiseAddress ?? defaultAdvertiseAddress();
  if (!advertised) log.warn(`no non-loopback address to advertise: the ${product.name} Service's Endpoints will not list this server (set --advertise-address)`);
  const platService = new PlatServiceController(p.client, {
    advertise: advertised ? { ip: advertised, port: p.port } : undefined,
    clusterIP: parseServiceIPRanges(options.serviceClusterIpRange)[0]!.valueAt(0),
    securePort: p.port,
    leases: new StoredServerLeases(p.store),
    log: warn,
  });
  platService.start();
  closers.add(() => platService.stop());
  const aggregatorClient = p.client.as(`${product.name}-aggregator`);
  const registration = new ApiServiceRegistration(aggregatorClient, warn, kit);
  const availability = new ApiServiceAvailability(aggregatorClient, warn, kit, (apiService) => probeApiService(p.aggregator, apiService));
  p.aggregator.recheck = (apiService) => availability.recheck(String(apiService.metadata?.name));
  closers.add(() => Promise.all([registration.stop(), availability.stop()]));
  await Promise.all([registration.start(), availability.start()]);
  return controllerManager;
}

/** As upstream picks an address to advertise: the host's first non-loopback IPv4 address, if any. */
function defaultAdvertiseAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}
