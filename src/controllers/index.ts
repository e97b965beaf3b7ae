// The controllers the server runs in-process, listed explicitly.
import type { ApiClient } from '../client/types.js';
import type { Controller } from './controller.js';
import { NamespaceController } from './namespace.js';
import { ServiceAccountController } from './serviceaccount.js';
import { GarbageCollector } from './garbagecollector/index.js';

export type { Controller } from './controller.js';

export function builtinControllers(client: ApiClient, log: (msg: string, extra?: object) => void): Controller[] {
  return [new NamespaceController(client, log), new ServiceAccountController(client, log), new GarbageCollector(client, log)];
}
