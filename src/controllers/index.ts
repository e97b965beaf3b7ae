// The controllers the server runs in-process, listed explicitly, and the
// manager that runs them: at once, or only while this server holds the
// leader lease when several servers share one store.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ApiClient } from '../client/types.js';
import type { Controller, ControllerKit } from './controller.js';
import type { WorkQueue } from '../client/workqueue.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import { NamespaceController } from './namespace.js';
import { ServiceAccountController } from './serviceaccount.js';
import { GarbageCollector } from './garbagecollector/index.js';
import { TokensController, type TokenControllerOptions } from './tokens.js';
import { RootCaPublisher } from './rootca.js';
import { ClusterRoleAggregationController } from './clusterroleaggregation.js';
import { LeaderElector, type LeaderElectionTiming } from './leaderelection.js';
import { IdentityLease } from './identitylease.js';
import { CsrSigningController, type CsrSigningOptions } from './csrsigning.js';
import { CsrApprovingController, type Authorize } from './csrapproving.js';
import { CsrCleanerController } from './csrcleaner.js';
import { TokenCleaner } from './tokencleaner.js';
import { BootstrapSigner } from './bootstrapsigner.js';
import { DisruptionController } from './disruption.js';
import { controllerEnabled, controllerNames, type ControllerName } from './names.js';
import { PodGarbageCollector } from './podgc.js';
import { EndpointsController } from './endpoints.js';
import { EndpointSliceController } from './endpointslice.js';
import { TtlAfterFinishedController } from './ttlafterfinished.js';
import { ResourceQuotaController } from './resourcequota.js';
import { PvcProtectionController, PvProtectionController } from './storageprotection.js';
import { PolicyStatusController } from './policystatus.js';

export type { Controller, ControllerKit } from './controller.js';
export type { LeaderElectionTiming } from './leaderelection.js';
export { badControllerEntry, controllerEnabled, controllerNames, disabledByDefault } from './names.js';

type Log = (msg: string, extra?: object) => void;

/** What the certificate controllers need: the cluster signing CA and duration, and the authorizer (auto-approval asks it). */
export interface CertificateControllerOptions {
  signing: CsrSigningOptions;
  authorize: Authorize;
}

/** What the identity controllers need (the signer of legacy tokens, the CA bundle clients trust), and the certificate controllers. */
export type IdentityControllerOptions = TokenControllerOptions & { certificates: CertificateControllerOptions };

/** How each controller is made, by name (names.ts keeps the names and their order). */
const makers: Record<ControllerName, (client: ApiClient, log: Log, kit: ControllerKit, identity: IdentityControllerOptions) => Controller> = {
  namespace: (c, l, i) => new NamespaceController(c, l, i),
  serviceaccount: (c, l, i) => new ServiceAccountController(c, l, i),
  garbagecollector: (c, l, i) => new GarbageCollector(c, l, i),
  'serviceaccount-token': (c, l, i, id) => new TokensController(c, l, i, id),
  'root-ca-cert-publisher': (c, l, i, id) => new RootCaPublisher(c, l, i, id.rootCaPem),
  'clusterrole-aggregation': (c, l, i) => new ClusterRoleAggregationController(c, l, i),
  csrsigning: (c, l, i, id) => new CsrSigningController(c, l, i, id.certificates.signing),
  csrapproving: (c, l, i, id) => new CsrApprovingController(c, l, i, id.certificates.authorize),
  csrcleaner: (c, l, i) => new CsrCleanerController(c, l, i),
  disruption: (c, l, i) => new DisruptionController(c, l, i),
  'pod-garbage-collector': (c, l, i) => new PodGarbageCollector(c, l, i),
  endpoint: (c, l, i) => new EndpointsController(c, l, i),
  endpointslice: (c, l, i) => new EndpointSliceController(c, l, i),
  'ttl-after-finished': (c, l, i) => new TtlAfterFinishedController(c, l, i),
  resourcequota: (c, l, i) => new ResourceQuotaController(c, l, i),
  'pvc-protection': (c, l, i) => new PvcProtectionController(c, l, i),
  'pv-protection': (c, l, i) => new PvProtectionController(c, l, i),
  'validatingadmissionpolicy-status': (c, l, i) => new PolicyStatusController(c, l, i),
  // Bootstrap tokens: off unless named, as upstream (`--controllers=*,tokencleaner,bootstrapsigner`).
  tokencleaner: (c, l, i) => new TokenCleaner(c, l, i),
  bootstrapsigner: (c, l, i) => new BootstrapSigner(c, l, i),
};

/** The selected controllers, on the process's shared informers. */
export function builtinControllers(
  client: ApiClient,
  log: Log,
  identity: IdentityControllerOptions,
  kit: ControllerKit,
  selection: readonly string[] = ['*'],
): Controller[] {
  return controllerNames.filter((name) => controllerEnabled(name, selection)).map((name) => makers[name]!(client, log, kit, identity));
}

/** The lease the controller managers of all servers on one store compete for. */
export const controllerManagerLease = { namespace: vocabulary.systemNamespace, name: `${product.name}-controller-manager` };

export interface ControllerManagerOptions {
  /** The process's shared informers (which outlive the controllers), the queues' metrics and the clock. */
  kit: ControllerKit;
  /** What the identity controllers need (token signer, CA bundle). */
  identityControllers: IdentityControllerOptions;
  /** `--controllers`: which controllers run (upstream's syntax); all by default. */
  selection?: readonly string[];
  /** Compete for the leader lease, running the controllers only while holding it; absent: run them at once. */
  leaderElection?: LeaderElectionTiming;
  /** Publish this server's identity lease; `instance` tells it apart from other servers on the host. */
  identity?: { instance: string };
}

export interface ControllerManager {
  /** The identity this manager competes with (also the lease's holderIdentity while it leads). */
  readonly identity: string;
  isLeading(): boolean;
  /** The work queues of the controllers running now. */
  queues(): readonly WorkQueue[];
  stop(): Promise<void>;
}

export function startControllerManager(client: ApiClient, log: Log, options: ControllerManagerOptions): ControllerManager {
  const identity = `${hostname()}_${randomUUID()}`;
  let running: Controller[] | undefined;
  const run = (): void => {
    running = builtinControllers(client, log, options.identityControllers, options.kit, options.selection);
    Promise.all(running.map((c) => c.start())).catch((err) => log('controllers failed to start', { err: String(err) }));
  };
  // Each controller lets go of its informers (the last reader of one stops it) and finishes the syncs it runs.
  let halting: Promise<void> = Promise.resolve();
  const halt = (): Promise<void> => {
    if (running) {
      const stopping = running;
      running = undefined;
      halting = Promise.all(stopping.map((c) => c.stop())).then(() => undefined);
    }
    return halting;
  };
  const identityLease = options.identity ? new IdentityLease(client, { instance: options.identity.instance, log, clock: options.kit.clock }) : undefined;
  void identityLease?.start();
  let elector: LeaderElector | undefined;
  if (options.leaderElection) {
    elector = new LeaderElector(client, {
      ...controllerManagerLease, ...options.leaderElection, identity, log, clock: options.kit.clock,
      onStartedLeading: run, onStoppedLeading: () => void halt(),
    });
    elector.start();
  } else {
    run();
  }
  return {
    identity,
    isLeading: () => running !== undefined,
    queues: () => (running ?? []).flatMap((c) => c.queues?.() ?? []),
    async stop() {
      identityLease?.stop();
      if (elector) await elector.stop();
      await halt();
    },
  };
}
