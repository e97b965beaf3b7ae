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
import { LeaderElector, LeaderElectionTiming } from './leaderelection.js';
import { IdentityLease } from './identitylease.js';

export type { Controller } from './controller.js';
export type { LeaderElectionTiming } from './leaderelection.js';

type Log = (msg: string, extra?: object) => void;

/** The controllers, sharing one informer per resource type (stop `informers` after the controllers). */
export function builtinControllers(client: ApiClient, log: Log): { controllers: Controller[]; informers: InformerFactory } {
  const informers = new InformerFactory(client);
  return {
    controllers: [new NamespaceController(client, log, informers), new ServiceAccountController(client, log, informers), new GarbageCollector(client, log, informers)],
    informers,
  };
}

/** The lease the controller managers of all servers on one store compete for. */
export const controllerManagerLease = { namespace: vocabulary.systemNamespace, name: `${product.name}-controller-manager` };

export interface ControllerManagerOptions {
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

export function startControllerManager(client: ApiClient, log: Log, options: ControllerManagerOptions = {}): ControllerManager {
  const identity = `${hostname()}_${randomUUID()}`;
  let running: ReturnType<typeof builtinControllers> | undefined;
  const run = (): void => {
    running = builtinControllers(client, log);
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
