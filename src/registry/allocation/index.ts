// The service ranges of a server, from its flags, and the write hooks that
// make a Service's store take and give back cluster IPs and node ports as
// upstream's service REST does (see service.ts), with the repairs that keep
// the stored ranges true to the stored Services (see repair.ts).

import type { KubeObject } from '../../api/kind.js';
import type { Backend } from '../../storage/backend.js';
import { parseIP, type IPFamily } from '../../machinery/ipnet.js';
import type { WriteHooks } from '../hooks.js';
import { NodePortRange, ServiceIPRange } from './ranges.js';
import { RangeRepair, type RepairReport } from './repair.js';
import { ServiceAllocators, type AddressFieldsCheck } from './service.js';
import { StoredRange } from './stored.js';

/** Upstream's cap on a service range: at most 2^20 addresses (IPv4 masks of /12 and longer, IPv6 /108). */
const maxRangeBits = 20;

/** A --service-cluster-ip-range or --service-node-port-range the server refuses; the message is upstream's. */
export class ServiceRangeError extends Error {
  override name = 'ServiceRangeError';
}

/** --service-cluster-ip-range: one CIDR, or two of different families (dual-stack), each at most 2^20 addresses. */
export function parseServiceIPRanges(flag: string): ServiceIPRange[] {
  const entries = flag.split(',').map((e) => e.trim());
  if (entries.length > 2) throw new ServiceRangeError('--service-cluster-ip-range must not contain more than two entries');
  const ranges = entries.map((entry, i) => {
    const range = ServiceIPRange.parse(entry);
    if (!range) throw new ServiceRangeError(i === 0 ? 'service-cluster-ip-range[0] is not a valid cidr' : 'service-cluster-ip-range[1] is not an ip net');
    const hostBits = range.cidr.bits - range.cidr.prefix;
    if (hostBits > maxRangeBits) {
      const flagName = i === 0 ? '--service-cluster-ip-range' : '--service-cluster-ip-range[1]';
      throw new ServiceRangeError(`specified ${flagName} is too large; for ${range.cidr.bits}-bit addresses, the mask must be >= ${range.cidr.bits - maxRangeBits}`);
    }
    return range;
  });
  if (ranges.length === 2 && ranges[0]!.family === ranges[1]!.family) {
    throw new ServiceRangeError('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
  }
  return ranges;
}

/** --service-node-port-range. */
export function parseNodePortRange(flag: string): NodePortRange {
  try {
    const range = NodePortRange.parse(flag);
    if (range.size === 0) throw new Error('--service-node-port-range must not be empty');
    return range;
  } catch (e) {
    throw new ServiceRangeError(`invalid --service-node-port-range ${JSON.stringify(flag)}: ${(e as Error).message}`);
  }
}

/** Where upstream keeps each range in etcd (the primary family's addresses, the secondary's, the node ports). */
const rangeKeys = { primary: '/registry/ranges/serviceips', secondary: '/registry/ranges/secondaryserviceips', nodePorts: '/registry/ranges/servicenodeports' };

export interface ServiceAllocation {
  allocators: ServiceAllocators;
  /** The hooks a Service store takes (ResourceStore.useHooks). */
  hooks: WriteHooks;
  /** Rebuilds every range from the Services stored (`services` lists them, consistently). */
  repair(services: () => Promise<KubeObject[]>): Promise<RepairReport[]>;
}

export function serviceAllocation(backend: Backend, ipRanges: ServiceIPRange[], nodePorts: NodePortRange, checkAddressFields?: AddressFieldsCheck): ServiceAllocation {
  const addresses = new Map<IPFamily, StoredRange<string>>();
  ipRanges.forEach((range, i) => addresses.set(range.family, new StoredRange(backend, i === 0 ? rangeKeys.primary : rangeKeys.secondary, range, 'IP')));
  const ports = new StoredRange(backend, rangeKeys.nodePorts, nodePorts, 'port');
  const allocators = new ServiceAllocators(addresses, ipRanges[0]!.family, ports, checkAddressFields);
  const finisher = (txn: { commit(): Promise<void>; revert(): Promise<void> }) => (stored: boolean) => (stored ? txn.commit() : txn.revert());
  const hooks: WriteHooks = {
    beginCreate: async (obj, { dryRun }) => finisher(await allocators.allocateCreate(obj, dryRun)),
    beginUpdate: async (obj, old, { dryRun }) => finisher(await allocators.allocateUpdate(obj, old, dryRun)),
    afterDelete: (obj) => allocators.releaseAll(obj),
  };
  // One repair per range, each keeping its own count of values found unheld across runs; one listing per run for all of them.
  let listed: Promise<KubeObject[]> = Promise.resolve([]);
  const repairs = [
    ...[...addresses].map(([family, range]) => new RangeRepair(range, async () => (await listed).flatMap((s) => addressesOf(s).filter((ip) => parseIP(ip)?.family === family)))),
    new RangeRepair(ports, async () => (await listed).flatMap(portsOf)),
  ];
  return {
    allocators, hooks,
    async repair(services) {
      listed = services();
      const reports: RepairReport[] = [];
      for (const r of repairs) reports.push(await r.runOnce());
      return reports;
    },
  };
}

/** The cluster IPs a stored Service holds. */
function addressesOf(service: KubeObject): string[] {
  const spec = service.spec ?? {};
  if (spec.type === 'ExternalName') return [];
  const ips: string[] = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => ip && ip !== 'None');
}

/** The node ports a stored Service holds, its health-check port included. */
function portsOf(service: KubeObject): number[] {
  const spec = service.spec ?? {};
  const ports = ((spec.ports ?? []) as Array<{ nodePort?: number }>).map((p) => Number(p.nodePort ?? 0)).filter((n) => n > 0);
  if (spec.healthCheckNodePort) ports.push(Number(spec.healthCheckNodePort));
  return [...new Set(ports)];
}
