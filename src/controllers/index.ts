// The controllers the server runs in-process, listed explicitly, and the
// manager that runs them: at once, or only while this server holds the
// leader lease when several servers share one store.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ApiClient } from '../client/types.js';
import type { Controller } from './controller.js';
import { InformerFactory } from '../client/informer.js';
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

export type { Controller } from './controller.js';
export type { LeaderElectionTiming } from './leaderelection.js';

type Log = (msg: string, extra?: object) => void;

/** What the certificate controllers need: the cluster signing CA and duration, and the authorizer (auto-approval asks it). */
export interface CertificateControllerOptions {
  signing: CsrSigningOptions;
  authorize: Authorize;
}

/** What the identity controllers need (the signer of legacy tokens, the CA bundle clients trust), and the certificate controllers. */
export type IdentityControllerOptions = TokenControllerOptions & { certificates: CertificateControllerOptions };

/** Every controller by name (upstream's names), in start order; all but those of `disabledByDefault` are on by default. */
const makers: Record<string, (client: ApiClient, log: Log, informers: InformerFactory, identity: IdentityControllerOptions) => Controller> = {
  namespace: (c, l, i) => new NamespaceController(c, l, i),
  serviceaccount: (c, l, i) => new ServiceAccountController(c, l, i),
  garbagecollector: (c, l, i) => new GarbageCollector(c, l, i),
  'serviceaccount-token': (c, l, i, id) => new TokensController(c, l, i, id),
  'root-ca-cert-publisher': (c, l, i, id) => new RootCaPublisher(c, l, i, id.rootCaPem),
  'clusterrole-aggregation': (c, l, i) => new ClusterRoleAggregationController(c, l, i),
  csrsigning: (c, l, i, id) => new CsrSigningController(c, l, i, id.certificates.signing),
  csrapproving: (c, l, i, id) => new CsrApprovingController(c, l, i, id.certificates.authorize),
  csrcleaner: (c, l, i) => new CsrCleanerController(c, l, i),
  // Bootstrap tokens: off unless named, as upstream (`--controllers=*,tokencleaner,bootstrapsigner`).
  tokencleaner: (c, l) => new TokenCleaner(c, l),
  bootstrapsigner: (c, l) => new BootstrapSigner(c, l),
};

/** Controllers `*` does not turn on, as upstream's controller manager. */
export const disabledByDefault: ReadonlySet<string> = new Set(['tokencleaner', 'bootstrapsigner']);

export const controllerNames: readonly string[] = Object.keys(makers);

/**
 * Whether `--controllers` turns `name` on, as upstream's controller manager
 * reads it: the first entry naming it (`name` or `-name`) decides, else `*`
 * turns on every controller not disabled by default.
 */
export function controllerEnabled(name: string, selection: readonly string[]): boolean {
  for (const entry of selection) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
  }
  return selection.includes('*') && !disabledByDefault.has(name);
}

/** The reason an entry of `--controllers` is not one; undefined for a good one. */
export function badControllerEntry(entry: string): string | undefined {
  if (entry === '*' || controllerNames.includes(entry.replace(/^-/, ''))) return undefined;
  return `"${entry}" is not in the list of known controllers (${controllerNames.join(', ')})`;
}

/** The selected controllers, sharing one informer per resource type (stop `informers` after the controllers). */
export function builtinControllers(
  client: ApiClient,
  log: Log,
  identity: IdentityControllerOptions,
  selection: readonly string[] = ['*'],
): { controllers: Controller[]; informers: InformerFactory } {
  const informers = new InformerFactory(client);
  const controllers = controllerNames.filter((name) => controllerEnabled(name, selection)).map((name) => makers[name]!(client, log, informers, identity));
  return { controllers, informers };
}

/** The lease the controller managers of all servers on one store compete for. */
export const controllerManagerLease = { namespace: vocabulary.systemNamespace, name: `${product.name}-controller-manager` };

export interface ControllerManagerOptions {
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
  stop(): Promise<void>;
}

export function startControllerManager(client: ApiClient, log: Log, options: ControllerManagerOptions): ControllerManager {
  const identity = `${hostname()}_${randomUUID()}`;
  let running: ReturnType<typeof builtinControllers> | undefined;
  const run = (): void => {
    running = builtinControllers(client, log, options.identityControllers, options.selection);
    Promise.all(running.controllers.map((c) => c.start())).catch((err) => log('controllers failed to start', { err: String(err) }));
  };
  const halt = (): void => {
    if (!running) return;
    for (const c of running.controllers) c.stop();
    running.informers.stopAll();
    running = undefined;
  };
  const identityLease = options.identity ? new IdentityLease(client, { instance: options.identity.instance, log }) : undefined;
  void identityLease?.start();
  let elector: LeaderElector | undefined;
  if (options.leaderElection) {
    elector = new LeaderElector(client, {
      ...controllerManagerLease, ...options.leaderElection, identity, log,
      onStartedLeading: run, onStoppedLeading: halt,
    });
    elector.start();
  } else {
    run();
  }
  return {
    identity,
    isLeading: () => running !== undefined,
    async stop() {
      identityLease?.stop();
      if (elector) await elector.stop();
      halt();
    },
  };
}
