// The controllers the server runs in-process, listed explicitly.
import type { ApiClient } from '../client/types.js';
import type { Controller } from './controller.js';
import { InformerFactory } from '../client/informer.js';
import { NamespaceController } from './namespace.js';
import { ServiceAccountController } from './serviceaccount.js';
import { GarbageCollector } from './garbagecollector/index.js';

export type { Controller } from './controller.js';

/** The controllers, sharing one informer per resource type (stop `informers` after the controllers). */
export function builtinControllers(client: ApiClient, log: (msg: string, extra?: object) => void): { controllers: Controller[]; informers: InformerFactory } {
  const informers = new InformerFactory(client);
  return {
    controllers: [new NamespaceController(client, log, informers), new ServiceAccountController(client, log, informers), new GarbageCollector(client, log, informers)],
    informers,
  };
}
