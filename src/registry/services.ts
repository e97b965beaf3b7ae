// Services: their cluster IPs and node ports come from the server's ranges
// through the Service store's write hooks (allocation/), as upstream's
// service REST takes and gives them back around the generic store's writes;
// the ranges are repaired from the stored Services at start and every few
// minutes. And services/{name}/proxy, which never dials.

import { errors } from '../machinery/errors.js';
import { goQuote } from '../machinery/goquote.js';
import { parseGoInt64, splitSchemeNamePort } from '../machinery/schemenameport.js';
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
 * services/{id}/proxy: `id` is `[scheme:]name[:port]` (request info and
 * authorization keep it whole, as upstream); a port number stands for the
 * name of the service's port with that number. Upstream picks an address
 * from the service's Endpoints that serves that port and dials it. This
 * server never dials: without endpoints it answers as upstream does, with
 * endpoints as upstream does when they cannot be reached.
 */
function serviceProxy(registry: Registry, store: ResourceStore, rest: RestObject): RestObject {
  return {
    describe: { ...rest.describe, subresource: 'proxy', deleteAnswersObject: false, stored: false, codec: undefined },
    connector: {
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
      admitted: serviceProxyOptions,
      connect: async (path) => {
        const id = path.name!;
        const target = splitSchemeNamePort(id);
        if (!target) throw errors.badRequest(`invalid service request ${goQuote(id)}`);
        const { name } = target;
        let portName = target.port;
        const number = parseGoInt64(portName);
        if (number !== undefined) {
          const service = await store.get(path.namespace, name);
          const port = ((service.spec?.ports ?? []) as Obj[]).find((p) => Number.isSafeInteger(p.port) && BigInt(p.port) === number);
          if (!port) throw errors.serviceUnavailable(`no service port ${number} found for service ${goQuote(name)}`);
          portName = port.name ?? '';
        }
        const endpoints = registry.store('', 'v1', 'endpoints');
        if (!endpoints) throw errors.serviceUnavailable(`no endpoints available for service ${goQuote(name)}`);
        const subsets = ((await endpoints.get(path.namespace, name)).subsets ?? []) as Obj[];
        if (!subsets.length) throw errors.serviceUnavailable(`no endpoints available for service ${goQuote(name)}`);
        const serving = subsets.some((sub) => (sub.addresses ?? []).length > 0 && ((sub.ports ?? []) as Obj[]).some((p) => (p.name ?? '') === portName));
        // Upstream names the whole segment when no subset serves the port.
        if (!serving) throw errors.serviceUnavailable(`no endpoints available for service ${goQuote(id)}`);
        throw errors.serviceUnavailable(`error trying to reach service: the endpoints of service ${goQuote(name)} cannot be reached from this server (it does not dial service addresses)`);
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
