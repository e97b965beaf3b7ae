// The controllers the server runs in-process, listed explicitly.
import type { ApiClient } from '../client/types.js';
import type { Controller } from './controller.js';
import { InformerFactory } from '../client/informer.js';
import { NamespaceController } from './namespace.js';
import { ServiceAccountController } from './serviceaccount.js';
import { GarbageCollector } from './garbagecollector/index.js';
import { TokensController, type TokenControllerOptions } from './tokens.js';
import { RootCaPublisher } from './rootca.js';

export type { Controller } from './controller.js';

type Log = (msg: string, extra?: object) => void;

/** What the identity controllers need: the signer of legacy tokens and the CA bundle clients trust. */
export type IdentityControllerOptions = TokenControllerOptions;

/** Every controller by name (upstream's names), in start order; all are on by default. */
const makers: Record<string, (client: ApiClient, log: Log, informers: InformerFactory, identity: IdentityControllerOptions) => Controller> = {
  namespace: (c, l, i) => new NamespaceController(c, l, i),
  serviceaccount: (c, l, i) => new ServiceAccountController(c, l, i),
  garbagecollector: (c, l, i) => new GarbageCollector(c, l, i),
  'serviceaccount-token': (c, l, i, id) => new TokensController(c, l, i, id),
  'root-ca-cert-publisher': (c, l, i, id) => new RootCaPublisher(c, l, i, id.rootCaPem),
};

export const controllerNames: readonly string[] = Object.keys(makers);

/**
 * Whether `--controllers` turns `name` on, as upstream's controller manager
 * reads it: the first entry naming it (`name` or `-name`) decides, else `*`
 * turns on every controller.
 */
export function controllerEnabled(name: string, selection: readonly string[]): boolean {
  for (const entry of selection) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
  }
  return selection.includes('*');
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
