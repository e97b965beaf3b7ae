// Services: their cluster IPs and node ports come from the server's ranges
// through the Service store's write hooks (allocation/), as upstream's
// service REST takes and gives them back around the generic store's writes;
// the ranges are repaired from the stored Services at start and every few
// minutes. And services/{name}/proxy, which never dials.

import { errors } from '../machinery/errors.js';
import type { KubeObject } from '../api/kind.js';
import type { Logger } from 'pino';
import type { Registry } from './registry.js';
import type { RestObject } from './rest.js';
import type { ResourceStore } from './store.js';
import type { ServiceAllocation } from './allocation/index.js';
import { serviceProxyOptions } from '../api/core/v1/connectoptions.js';

type Obj = Record<string, any>;

/** How often the ranges are repaired from the stored Services (upstream's repair interval). */
export const rangeRepairIntervalMs = 3 * 60_000;

/**
 * services/{name}/proxy: upstream picks an address from the service's
 * Endpoints and dials it. This server never dials: without endpoints it
 * answers as upstream does, with endpoints as upstream does when they
 * cannot be reached.
 */
function serviceProxy(registry: Registry, store: ResourceStore, rest: RestObject): RestObject {
  return {
    describe: { ...rest.describe, subresource: 'proxy', deleteAnswersObject: false, stored: false, codec: undefined },
    connector: {
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
      admitted: serviceProxyOptions,
      connect: async (path) => {
        const name = path.name!.split(':')[path.name!.split(':').length > 2 ? 1 : 0]!;
        await store.get(path.namespace, name);
        const endpoints = await registry.store('', 'v1', 'endpoints')?.find(path.namespace, name);
        const addresses = ((endpoints?.subsets ?? []) as Obj[]).flatMap((sub) => (sub.addresses ?? []) as Obj[]);
        if (!addresses.length) throw errors.serviceUnavailable(`no endpoints available for service "${name}"`);
        throw errors.serviceUnavailable(`error trying to reach service: the endpoints of service "${name}" cannot be reached from this server (it does not dial service addresses)`);
      },
    },
  };
}

/**
 * Makes the Service store take and give back addresses and ports, repairs
 * the ranges from the stored Services now (before the server answers) and
 * then every few minutes; answers the function that stops the repairs.
 */
export async function serveServices(registry: Registry, allocation: ServiceAllocation, log: Logger): Promise<() => void> {
  const store = registry.store('', 'v1', 'services');
  const rest = registry.rest('', 'v1', 'services');
  if (!store || !rest) return () => {};
  store.useHooks(allocation.hooks);
  registry.addRest(serviceProxy(registry, store, rest));
  const repair = async () => {
    const reports = await allocation.repair(async () => ((await store.list(undefined, {})).items ?? []) as KubeObject[]);
    for (const r of reports) {
      for (const [what, values] of Object.entries(r)) if (values.length) log.warn({ values }, `service range repair: ${what}`);
    }
  };
  await repair();
  const timer = setInterval(() => repair().catch((err) => log.error({ err }, 'service range repair failed')), rangeRepairIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
