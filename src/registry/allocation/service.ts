// What a Service holds of the cluster's ranges, handed out as upstream's
// service REST does: cluster IPs per IP family (ipFamilies and
// ipFamilyPolicy worked out from the request, the old object and the ranges
// configured), node ports for NodePort and LoadBalancer services, and a
// health-check node port for a LoadBalancer whose externalTrafficPolicy is
// Local. A write gets a transaction: `revert` gives back what it took when
// the write fails, `commit` gives back what the old object held and the new
// one does not once the write is stored. A dry run takes nothing.

import type { KubeObject } from '../../api/kind.js';
import { errors, fieldErrors, GoLiteral, isApiError, type FieldError } from '../../machinery/errors.js';
import { formatIP, parseIP, type IPFamily } from '../../machinery/ipnet.js';
import { ServiceIPRange } from './ranges.js';
import { AllocationError, type StoredRange } from './stored.js';

export interface ServiceTransaction {
  commit(): Promise<void>;
  revert(): Promise<void>;
}

/** Field errors of the address fields (clusterIPs, ipFamilies, ipFamilyPolicy), run before anything is handed out. */
export type AddressFieldsCheck = (service: KubeObject) => FieldError[];

// Service fields, as the API names them.
type ServiceSpec = Record<string, any>;
const headless = 'None';
const familyOf = (ip: string): IPFamily | undefined => parseIP(ip)?.family;
const other = (f: IPFamily): IPFamily => (f === 'IPv4' ? 'IPv6' : 'IPv4');
const sameList = (a: unknown[] = [], b: unknown[] = []) => a.length === b.length && a.every((x, i) => x === b[i]);
const needsHealthCheck = (s: ServiceSpec) => s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
const getsNodePorts = (s: ServiceSpec) => s.type === 'NodePort' || s.type === 'LoadBalancer';
const allocatesNodePorts = (s: ServiceSpec) => s.type === 'NodePort' || (s.type === 'LoadBalancer' && s.allocateLoadBalancerNodePorts !== false);
const nodePortsOf = (s: ServiceSpec): number[] => (s.ports ?? []).map((p: ServiceSpec) => Number(p.nodePort ?? 0)).filter((n: number) => n !== 0);

/** Values taken and values to give back, over the stored ranges, as one write's transaction. */
class Operation {
  private readonly taken: Array<() => Promise<void>> = [];
  private readonly deferred: Array<() => Promise<void>> = [];
  /** In a dry run, what this write would take (so one value is not offered twice). */
  private readonly reserved = new Set<string>();

  constructor(private readonly dryRun: boolean) {}

  /** Takes `value`; an AllocationError (or, dry, the same checks) when it cannot be had. */
  async take<V>(range: StoredRange<V>, value: V): Promise<void> {
    if (this.dryRun) {
      const offset = range.range.offsetOf(value);
      if (offset === undefined) throw new AllocationError('notInRange', range.range.notInRange(value));
      // As upstream, a dry run checks an address only against the range; ports also against what is taken.
      if (range.range instanceof ServiceIPRange) return;
      const key = `${range.key} ${offset}`;
      if (this.reserved.has(key) || (await range.read()).bitmap.has(offset)) throw new AllocationError('allocated', 'provided port is already allocated');
      this.reserved.add(key);
      return;
    }
    await range.allocate(value);
    this.taken.push(() => range.release(value));
  }

  /** Takes a free value and answers it (dry: one that is free now, or, for addresses, the network's as upstream). */
  async takeNext<V>(range: StoredRange<V>): Promise<V> {
    if (this.dryRun) {
      if (range.range instanceof ServiceIPRange) return formatIP({ family: range.range.family, value: range.range.cidr.network }) as V;
      const { bitmap } = await range.read();
      for (let offset = range.range.staticBand; offset < range.range.size + range.range.staticBand; offset++) {
        const at = offset % range.range.size;
        const key = `${range.key} ${at}`;
        if (!bitmap.has(at) && !this.reserved.has(key)) {
          this.reserved.add(key);
          return range.range.valueAt(at);
        }
      }
      throw new AllocationError('full', 'range is full');
    }
    const value = await range.allocateNext();
    this.taken.push(() => range.release(value));
    return value;
  }

  /** Gives `value` back once the write is stored. */
  releaseOnCommit<V>(range: StoredRange<V>, value: V): void {
    if (!this.dryRun) this.deferred.push(() => range.release(value));
  }

  transaction(): ServiceTransaction {
    return {
      commit: async () => { for (const release of this.deferred) await release().catch(() => undefined); },
      revert: async () => { for (const release of this.taken.reverse()) await release().catch(() => undefined); },
    };
  }

  /** Undoes what was taken so far and rethrows. */
  async fail(e: unknown): Promise<never> {
    await this.transaction().revert();
    throw e;
  }
}

export class ServiceAllocators {
  constructor(
    /** One range per configured family; the first configured is the default family. */
    readonly addresses: Map<IPFamily, StoredRange<string>>,
    readonly defaultFamily: IPFamily,
    readonly nodePorts: StoredRange<number>,
    private readonly checkAddressFields: AddressFieldsCheck = () => [],
  ) {}

  /** Fills in a new Service's address families and takes its addresses and node ports. */
  async allocateCreate(service: KubeObject, dryRun: boolean): Promise<ServiceTransaction> {
    this.initFamilies(service, undefined);
    const op = new Operation(dryRun);
    try {
      await this.allocateClusterIPs(service, op);
      const spec: ServiceSpec = service.spec ?? {};
      if (getsNodePorts(spec)) await this.allocateNodePorts(service, op);
      if (needsHealthCheck(spec)) await this.allocateHealthCheckPort(spec, op);
    } catch (e) {
      return op.fail(e);
    }
    return op.transaction();
  }

  /** Works out what an update takes and gives back (type changes, a second family added or dropped, ports). */
  async allocateUpdate(service: KubeObject, old: KubeObject, dryRun: boolean): Promise<ServiceTransaction> {
    this.initFamilies(service, old);
    const op = new Operation(dryRun);
    try {
      await this.updateClusterIPs(service, old, op);
      await this.updateNodePorts(service, old, op);
    } catch (e) {
      return op.fail(e);
    }
    return op.transaction();
  }

  /** Gives back everything a deleted Service held; failures are left to the repair at start. */
  async releaseAll(service: KubeObject): Promise<void> {
    const spec: ServiceSpec = service.spec ?? {};
    const ips: string[] = spec.type === 'ExternalName' || spec.clusterIPs?.[0] === headless ? [] : (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []));
    for (const ip of ips) {
      const family = familyOf(ip);
      if (family) await this.addresses.get(family)?.release(ip).catch(() => undefined);
    }
    const ports = nodePortsOf(spec);
    if (needsHealthCheck(spec) && spec.healthCheckNodePort) ports.push(Number(spec.healthCheckNodePort));
    for (const port of ports) await this.nodePorts.release(port).catch(() => undefined);
  }

  // ---- address families ------------------------------------------------------

  /** Upstream's initIPFamilyFields: ipFamilyPolicy and ipFamilies from the request, the old object and the cluster. */
  private initFamilies(service: KubeObject, old: KubeObject | undefined): void {
    const spec: ServiceSpec = (service.spec ??= {});
    const oldSpec: ServiceSpec | undefined = old?.spec;
    if (spec.type === 'ExternalName') return;
    if (this.unchangedPreferDualStack(spec, oldSpec)) return;
    const selectorless = !spec.selector || Object.keys(spec.selector).length === 0;
    if (spec.ipFamilyPolicy === undefined || spec.ipFamilyPolicy === null) {
      if (oldSpec?.ipFamilyPolicy) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
      else spec.ipFamilyPolicy = spec.clusterIP === headless && selectorless ? 'RequireDualStack' : 'SingleStack';
    }
    const invalid = (errs: FieldError[]) => {
      if (errs.length) throw errors.invalid('', 'Service', service.metadata?.name ?? '', errs);
    };
    invalid(this.checkAddressFields(service));
    const errs: FieldError[] = [];
    const policy = (): string => spec.ipFamilyPolicy;
    if (oldSpec) {
      if (policy() === 'SingleStack') {
        if (sameList(oldSpec.clusterIPs, spec.clusterIPs) && spec.clusterIPs?.length > 1) spec.clusterIPs = spec.clusterIPs.slice(0, 1);
        if (sameList(oldSpec.ipFamilies, spec.ipFamilies) && spec.ipFamilies?.length > 1) spec.ipFamilies = spec.ipFamilies.slice(0, 1);
      } else {
        if (spec.clusterIPs?.length && spec.clusterIPs.length < (oldSpec.clusterIPs?.length ?? 0)) {
          errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy(), "must be 'SingleStack' to release the secondary cluster IP"));
        }
        if (spec.ipFamilies?.length && spec.ipFamilies.length < (oldSpec.ipFamilies?.length ?? 0)) {
          errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy(), "must be 'SingleStack' to release the secondary IP family"));
        }
      }
    }
    if (policy() === 'SingleStack') {
      if (spec.clusterIPs?.length === 2) errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy(), "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
      if (spec.ipFamilies?.length === 2) errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy(), "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
    // Families follow the addresses asked for.
    const clusterIPs: string[] = spec.clusterIPs ?? [];
    for (let i = 0; i < clusterIPs.length; i++) {
      if (clusterIPs[i] === headless) break;
      if (i < (spec.ipFamilies?.length ?? 0)) continue;
      const family = familyOf(clusterIPs[i]!);
      if (!family || !this.addresses.has(family)) errs.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, GoLiteral.strings(clusterIPs), `${family ?? 'unknown'} is not configured on this cluster`));
      else (spec.ipFamilies ??= []).push(family);
    }
    invalid(errs);
    if (spec.clusterIP === headless && selectorless) {
      spec.ipFamilies = spec.ipFamilies?.length ? spec.ipFamilies : [this.defaultFamily];
      if (spec.ipFamilies.length < 2 && policy() !== 'SingleStack') spec.ipFamilies.push(other(spec.ipFamilies[0]));
      return;
    }
    if (policy() === 'RequireDualStack' && this.addresses.size < 2) {
      errs.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy(), 'this cluster is not configured for dual-stack services'));
    }
    (spec.ipFamilies ?? []).forEach((family: IPFamily, i: number) => {
      if (!this.addresses.has(family)) errs.push(fieldErrors.invalid(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
    });
    invalid(errs);
    if (!spec.ipFamilies?.length) spec.ipFamilies = [this.defaultFamily];
    if (policy() !== 'SingleStack' && spec.ipFamilies.length === 1 && this.addresses.size === 2) spec.ipFamilies.push(other(spec.ipFamilies[0]));
  }

  /** A PreferDualStack service whose type, addresses and families did not change keeps what it has. */
  private unchangedPreferDualStack(spec: ServiceSpec, old: ServiceSpec | undefined): boolean {
    if (!old || !spec.ipFamilyPolicy || old.type !== spec.type) return false;
    if (!['ClusterIP', 'NodePort', 'LoadBalancer'].includes(spec.type)) return false;
    if (spec.ipFamilyPolicy !== 'PreferDualStack' || (old.ipFamilyPolicy && old.ipFamilyPolicy !== 'PreferDualStack')) return false;
    return sameList(old.clusterIPs, spec.clusterIPs) && sameList(old.ipFamilies, spec.ipFamilies);
  }

  // ---- cluster IPs --------------------------------------------------------------

  /** One address per family (the one asked for, or any), clusterIP the first. */
  private async allocateClusterIPs(service: KubeObject, op: Operation, families?: IPFamily[]): Promise<void> {
    const spec: ServiceSpec = service.spec;
    if (spec.type === 'ExternalName' || spec.clusterIPs?.[0] === headless) return;
    // clusterIP alone (an old client) asks for that address.
    if (!spec.clusterIPs?.length && spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
    const ips: string[] = (spec.clusterIPs ??= []);
    const ipFamilies: IPFamily[] = spec.ipFamilies ?? [this.defaultFamily];
    for (let i = 0; i < ipFamilies.length; i++) {
      const family = ipFamilies[i]!;
      if (families && !families.includes(family)) continue;
      const range = this.addresses.get(family)!;
      const asked = ips[i] ?? '';
      if (asked === '') {
        try {
          ips[i] = await op.takeNext(range);
        } catch (e) {
          if (e instanceof AllocationError) throw errors.internal(`failed to allocate a serviceIP: ${e.message}`);
          throw e;
        }
      } else {
        try {
          await op.take(range, asked);
        } catch (e) {
          if (e instanceof AllocationError) {
            throw errors.invalid('', 'Service', service.metadata?.name ?? '', [fieldErrors.invalid('spec.clusterIPs', GoLiteral.strings(ips), `failed to allocate IP ${asked}: ${e.message}`)]);
          }
          throw e;
        }
      }
    }
    spec.clusterIP = ips[0];
  }

  private async updateClusterIPs(service: KubeObject, old: KubeObject, op: Operation): Promise<void> {
    const spec: ServiceSpec = service.spec;
    const oldSpec: ServiceSpec = old.spec ?? {};
    if (this.unchangedPreferDualStack(spec, oldSpec)) return;
    // ExternalName to a type with addresses: all new.
    if (oldSpec.type === 'ExternalName' && spec.type !== 'ExternalName') return this.allocateClusterIPs(service, op);
    if (oldSpec.clusterIPs?.[0] === headless) return;
    // To ExternalName: every address goes back.
    if (oldSpec.type !== 'ExternalName' && spec.type === 'ExternalName') {
      (oldSpec.ipFamilies ?? []).forEach((family: IPFamily, i: number) => {
        const range = this.addresses.get(family);
        if (range && oldSpec.clusterIPs?.[i]) op.releaseOnCommit(range, oldSpec.clusterIPs[i]);
      });
      return;
    }
    const before = oldSpec.ipFamilies?.length ?? 0;
    const after = spec.ipFamilies?.length ?? 0;
    if (before === 1 && after === 2) {
      // Upgraded to dual-stack: the second family's address.
      return this.allocateClusterIPs(service, op, [spec.ipFamilies[1]]);
    }
    if (before === 2 && after === 1) {
      const range = this.addresses.get(oldSpec.ipFamilies[1]);
      if (range) op.releaseOnCommit(range, oldSpec.clusterIPs[1]);
    }
  }

  // ---- node ports ---------------------------------------------------------------

  /** Upstream's initNodePorts: ports sharing a port number share a node port; asked-for ones are taken by number. */
  private async allocateNodePorts(service: KubeObject, op: Operation): Promise<void> {
    const spec: ServiceSpec = service.spec;
    const ports: ServiceSpec[] = spec.ports ?? [];
    const byPort = new Map<number, number>();
    for (let i = 0; i < ports.length; i++) {
      const port = ports[i]!;
      if (!port.nodePort && !allocatesNodePorts(spec)) continue;
      const shared = byPort.get(port.port);
      if (shared === undefined) {
        const asked = ports.find((p) => p.port === port.port && p.nodePort)?.nodePort;
        if (asked) {
          await this.takePort(service, op, asked, i);
          port.nodePort = asked;
        } else {
          port.nodePort = await this.takeNextPort(op);
        }
        byPort.set(port.port, port.nodePort);
      } else if (port.nodePort !== shared) {
        if (!port.nodePort) port.nodePort = shared;
        else await this.takePort(service, op, port.nodePort, i);
      }
    }
  }

  private async updateNodePorts(service: KubeObject, old: KubeObject, op: Operation): Promise<void> {
    const spec: ServiceSpec = service.spec;
    const oldSpec: ServiceSpec = old.spec ?? {};
    const oldPorts = nodePortsOf(oldSpec);
    if (getsNodePorts(oldSpec) && (spec.type === 'ExternalName' || spec.type === 'ClusterIP')) {
      for (const port of oldPorts) op.releaseOnCommit(this.nodePorts, port);
    }
    if (getsNodePorts(spec)) {
      const taken = new Set<number>();
      const seen = new Set<string>();
      const ports: ServiceSpec[] = spec.ports ?? [];
      for (let i = 0; i < ports.length; i++) {
        const port = ports[i]!;
        if (!port.nodePort && !allocatesNodePorts(spec)) continue;
        if (port.nodePort) {
          if (!oldPorts.includes(port.nodePort) && !taken.has(port.nodePort)) {
            await this.takePort(service, op, port.nodePort, i);
            taken.add(port.nodePort);
          }
        } else {
          port.nodePort = await this.takeNextPort(op);
        }
        const key = `${port.protocol ?? 'TCP'}/${port.nodePort}`;
        if (seen.has(key)) throw errors.internal(`duplicate nodePort: {${port.protocol ?? 'TCP'} ${port.nodePort}}`);
        seen.add(key);
      }
      const now = nodePortsOf(spec);
      for (const port of oldPorts) if (!now.includes(port)) op.releaseOnCommit(this.nodePorts, port);
    }
    // The health-check port follows whether the service needs one.
    const needed = needsHealthCheck(oldSpec);
    const needs = needsHealthCheck(spec);
    if (!needed && needs) await this.allocateHealthCheckPort(spec, op);
    else if (needed && !needs && oldSpec.healthCheckNodePort) op.releaseOnCommit(this.nodePorts, Number(oldSpec.healthCheckNodePort));
  }

  private async takePort(service: KubeObject, op: Operation, port: number, index: number): Promise<void> {
    try {
      await op.take(this.nodePorts, port);
    } catch (e) {
      if (e instanceof AllocationError) {
        throw errors.invalid('', 'Service', service.metadata?.name ?? '', [fieldErrors.invalid(`spec.ports[${index}].nodePort`, port, e.message)]);
      }
      throw e;
    }
  }

  private async takeNextPort(op: Operation): Promise<number> {
    try {
      return await op.takeNext(this.nodePorts);
    } catch (e) {
      if (e instanceof AllocationError) throw errors.internal(`failed to allocate a nodePort: ${e.message}`);
      throw e;
    }
  }

  private async allocateHealthCheckPort(spec: ServiceSpec, op: Operation): Promise<void> {
    const asked = Number(spec.healthCheckNodePort ?? 0);
    try {
      if (asked) await op.take(this.nodePorts, asked);
      else spec.healthCheckNodePort = await op.takeNext(this.nodePorts);
    } catch (e) {
      if (!(e instanceof AllocationError) || isApiError(e)) throw e;
      throw errors.internal(asked
        ? `failed to allocate requested HealthCheck NodePort ${asked}: ${e.message}`
        : `failed to allocate a HealthCheck NodePort 0: ${e.message}`);
    }
  }
}
