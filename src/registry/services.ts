// Services get their cluster IPs and node ports from the server's ranges
// (ranges.ts) around the stored resource's own writes, as upstream's service
// REST does: a create takes what it names or the next free values before the
// object is validated and stored, and gives them back when the create fails
// or is a dry run; they go back once the object is gone from the store,
// whichever road removed it; an update or patch gives back what the service
// no longer uses and takes what it newly needs. On start, the values stored
// services use are marked taken.

import { ApiError, errors, fieldErrors, type FieldError } from '../machinery/errors.js';
import type { KubeObject } from '../api/kind.js';
import { usesNodePorts } from '../api/core/v1/service.js';
import type { Backend } from '../storage/backend.js';
import type { Registry } from './registry.js';
import type { RestObject, RestPath, Written } from './rest.js';
import type { ResourceStore, WriteOptions } from './store.js';
import { AllocationError, cidrRange, portRange, StoredRange } from './ranges.js';

type Obj = Record<string, any>;

export interface ServiceRanges {
  ips: StoredRange<string>;
  family: 'IPv4' | 'IPv6';
  ports: StoredRange<number>;
}

export function serviceRanges(backend: Backend, clusterIPRange: string, nodePortRange: string): ServiceRanges {
  const cidr = cidrRange(clusterIPRange);
  return {
    ips: new StoredRange(backend, '/registry/ranges/serviceips', cidr, 'IP'),
    family: cidr.family,
    ports: new StoredRange(backend, '/registry/ranges/servicenodeports', portRange(nodePortRange), 'port'),
  };
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const clusterIPOf = (spec: Obj | undefined): string | undefined => spec?.clusterIPs?.[0] || spec?.clusterIP || undefined;
const nodePortsOf = (spec: Obj | undefined): number[] => ((spec?.ports ?? []) as Obj[]).map((p) => p.nodePort).filter((n): n is number => Number.isInteger(n) && n > 0);

/** What one request took, to give back if it does not go through. */
class Taken {
  readonly ips: string[] = [];
  readonly ports: number[] = [];
  constructor(private readonly ranges: ServiceRanges) {}
  async giveBack(): Promise<void> {
    for (const ip of this.ips.splice(0)) await this.ranges.ips.release(ip);
    for (const port of this.ports.splice(0)) await this.ranges.ports.release(port);
  }
}

function invalid(name: string, causes: FieldError[]): ApiError {
  return errors.invalid('', 'Service', name, causes);
}

/** Fills a service's cluster IP, IP families and node ports in `spec` (a request body's), taking them from the ranges. */
async function allocate(ranges: ServiceRanges, name: string, spec: Obj, old: Obj | undefined, taken: Taken): Promise<void> {
  const type = spec.type ?? 'ClusterIP';
  if (type !== 'ExternalName') {
    const families: unknown[] = Array.isArray(spec.ipFamilies) ? spec.ipFamilies : [];
    const foreign = families.findIndex((f) => f !== ranges.family);
    if (foreign >= 0) throw invalid(name, [fieldErrors.invalid(`spec.ipFamilies[${foreign}]`, families[foreign], 'not configured on this cluster')]);
    if (spec.ipFamilyPolicy === 'RequireDualStack') {
      throw invalid(name, [fieldErrors.invalid('spec.ipFamilyPolicy', 'RequireDualStack', 'this cluster is not configured for dual-stack services')]);
    }
    const asked = clusterIPOf(spec);
    if (asked === undefined) {
      const ip = await ranges.ips.allocateNext().catch((e) => { throw full(e, 'serviceIP'); });
      taken.ips.push(ip);
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    } else if (asked !== 'None' && asked !== clusterIPOf(old)) {
      try {
        await ranges.ips.allocate(asked);
        taken.ips.push(asked);
      } catch (e) {
        if (!(e instanceof AllocationError)) throw e;
        throw invalid(name, [fieldErrors.invalid('spec.clusterIPs', [asked], `failed to allocate IP ${asked}: ${e.message}`)]);
      }
    }
    if (asked !== undefined) {
      spec.clusterIP = asked;
      spec.clusterIPs ??= [asked];
    }
    spec.ipFamilies = families.length ? families : [ranges.family];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }
  if (!usesNodePorts({ ...spec, type })) return;
  const had = new Set(nodePortsOf(old));
  const ports: Obj[] = Array.isArray(spec.ports) ? spec.ports.filter(isObj) : [];
  for (const [i, port] of ports.entries()) {
    if (port.nodePort === undefined || port.nodePort === 0) {
      const n = await ranges.ports.allocateNext().catch((e) => { throw full(e, 'nodePort'); });
      taken.ports.push(n);
      port.nodePort = n;
    } else if (!had.has(port.nodePort) && !taken.ports.includes(port.nodePort)) {
      try {
        await ranges.ports.allocate(port.nodePort);
        taken.ports.push(port.nodePort);
      } catch (e) {
        if (!(e instanceof AllocationError)) throw e;
        throw invalid(name, [fieldErrors.invalid(`spec.ports[${i}].nodePort`, port.nodePort, e.message)]);
      }
    }
  }
}

function full(e: unknown, what: string): unknown {
  return e instanceof AllocationError && e.full ? errors.internal(`failed to allocate a ${what}: ${e.message}`) : e;
}

/** Gives back what `old` used and `now` does not. */
async function releaseDropped(ranges: ServiceRanges, old: Obj | undefined, now: Obj | undefined): Promise<void> {
  const oldIP = clusterIPOf(old);
  if (oldIP && oldIP !== 'None' && oldIP !== clusterIPOf(now)) await ranges.ips.release(oldIP);
  const kept = new Set(now && usesNodePorts(now) ? nodePortsOf(now) : []);
  for (const port of nodePortsOf(old)) if (!kept.has(port)) await ranges.ports.release(port);
}

/** The services resource with allocations around the stored resource's writes. */
function allocating(rest: RestObject, store: ResourceStore, ranges: ServiceRanges): RestObject {
  const { create, update, patch } = rest;
  /** After an update or patch: give back what is dropped, take what is newly needed (a second write when something was missing). */
  const settle = async (path: RestPath, before: KubeObject | undefined, written: Written, opts: WriteOptions): Promise<Written> => {
    if (opts.dryRun || written.created) return written;
    const now = written.object.spec ?? {};
    await releaseDropped(ranges, before?.spec, now);
    const needs = (now.type !== 'ExternalName' && !clusterIPOf(now)) || (usesNodePorts(now) && ((now.ports ?? []) as Obj[]).some((p) => !p.nodePort));
    const named = nodePortsOf(now).filter((n) => !nodePortsOf(before?.spec).includes(n));
    if (!needs && named.length === 0) return written;
    const taken = new Taken(ranges);
    try {
      const object = await store.updateWith(path.namespace, path.name!, async (live) => {
        await allocate(ranges, path.name!, live.spec, before?.spec, taken);
        return live;
      }, { ...opts, warnings: [] });
      return { object, created: false };
    } catch (e) {
      await taken.giveBack();
      // What the write asked for cannot be had: the service goes back to what it was.
      if (before) await store.updateWith(path.namespace, path.name!, (live) => ({ ...live, spec: before.spec }), { ...opts, warnings: [] }).catch(() => undefined);
      throw e;
    }
  };
  return {
    ...rest,
    create: create && (async (path, body, opts) => {
      const taken = new Taken(ranges);
      try {
        const spec = isObj(body) && isObj((body as Obj).spec) ? (body as Obj).spec : isObj(body) ? ((body as Obj).spec = {}) : undefined;
        if (spec) await allocate(ranges, String((body as Obj).metadata?.name ?? ''), spec, undefined, taken);
        const created = await create(path, body, opts);
        if (opts.dryRun) await taken.giveBack();
        return created;
      } catch (e) {
        await taken.giveBack();
        throw e;
      }
    }),
    update: update && (async (path, body, opts) => {
      const before = await store.find(path.namespace, path.name!);
      if (!before) {
        const taken = new Taken(ranges);
        try {
          if (isObj(body) && isObj((body as Obj).spec)) await allocate(ranges, path.name!, (body as Obj).spec, undefined, taken);
          const written = await update(path, body, opts);
          if (opts.dryRun) await taken.giveBack();
          return written;
        } catch (e) {
          await taken.giveBack();
          throw e;
        }
      }
      return settle(path, before, await update(path, body, opts), opts);
    }),
    patch: patch && (async (path, type, body, opts, patchOpts) => {
      const before = await store.find(path.namespace, path.name!);
      return settle(path, before, await patch(path, type, body, opts, patchOpts), opts);
    }),
  };
}

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

/** Serves services with allocation, and marks what stored services use as taken (repair on start). */
export async function serveServiceAllocation(registry: Registry, ranges: ServiceRanges): Promise<void> {
  const store = registry.store('', 'v1', 'services');
  const rest = registry.rest('', 'v1', 'services');
  if (!store || !rest) return;
  registry.removeRest(rest);
  registry.addRest(allocating(rest, store, ranges));
  // Whatever road removes a service (a delete, a namespace's deletion, the garbage collector), its values go back.
  store.onRemoved((svc) => releaseDropped(ranges, svc.spec, undefined));
  registry.addRest(serviceProxy(registry, store, rest));
  const all = await store.list(undefined, {});
  const ips: string[] = [];
  const ports: number[] = [];
  for (const svc of (all.items ?? []) as KubeObject[]) {
    const ip = clusterIPOf(svc.spec);
    if (ip && ip !== 'None') ips.push(ip);
    ports.push(...nodePortsOf(svc.spec));
  }
  await ranges.ips.markInUse(ips);
  await ranges.ports.markInUse(ports);
}
