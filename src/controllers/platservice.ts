// The product's own Service in `default` (upstream's `kubernetes` Service,
// named for the product): a ClusterIP service at the first address of the
// service range, port 443 to the servers' secure port, and its Endpoints
// listing every API server alive. Each server runs this, as upstream's
// lease endpoint reconciler: it renews a short-lived lease of its advertised
// address in the store (never an API object, as upstream's master leases),
// and rewrites the Endpoints from the leases alive, so a server that stops
// drops out within the lease's time to live. Nobody dials these addresses.
// The EndpointSlice beside the Endpoints follows them (platslice.ts).

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import { ensureSliceFromEndpoints } from './platslice.js';
import { realClock, type Clock, type TimerHandle } from '../client/clock.js';

/** One API server as its Endpoints entry names it. */
export interface ServerAddress {
  ip: string;
  port: number;
}

/** The store-level leases of the servers alive (registry/masterleases.ts). */
export interface ServerLeases {
  renew(server: ServerAddress, ttlMs: number): Promise<void>;
  alive(): Promise<ServerAddress[]>;
  remove(server: ServerAddress): Promise<void>;
}

export interface PlatServiceOptions {
  /** This server's advertised address; without one it keeps the Service but lists no address of its own. */
  advertise?: ServerAddress;
  /** The Service's cluster IP: the first address of the primary range. */
  clusterIP: string;
  /** The port the Service's 443 leads to. */
  securePort: number;
  leases: ServerLeases;
  /** Upstream's reconcile interval and lease time to live. */
  intervalMs?: number;
  ttlMs?: number;
  log?(msg: string, extra?: object): void;
  clock?: Clock;
}

export const platServiceName = product.name;
const namespace = 'default';
const services: ResourceType = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, verbs: [] };
const endpoints: ResourceType = { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true, verbs: [] };
/** As upstream, the Endpoints say no mirroring controller should make slices of them: the server writes the slice itself. */
const skipMirror = { [vocabulary.endpointSliceSkipMirrorLabel]: 'true' };

export class PlatServiceController {
  readonly name = `${product.name}-service`;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly client: ApiClient, private readonly options: PlatServiceOptions) {
    this.clock = options.clock ?? realClock;
  }

  start(): void {
    const tick = (): void => {
      this.reconcile()
        .catch((e) => this.options.log?.(`${this.name}: reconcile failed`, { err: String(e) }))
        .finally(() => {
          if (!this.stopped) this.timer = this.clock.setTimeout(tick, this.options.intervalMs ?? 10_000);
        });
    };
    tick();
  }

  /** Stops renewing; this server's address leaves the Endpoints at once (the lease would let it go later anyway). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    if (!this.options.advertise) return;
    await this.options.leases.remove(this.options.advertise).catch(() => undefined);
    await this.writeEndpoints().catch(() => undefined);
  }

  async reconcile(): Promise<void> {
    await this.ensureService();
    if (this.options.advertise) await this.options.leases.renew(this.options.advertise, this.options.ttlMs ?? 15_000);
    await this.writeEndpoints();
  }

  /** Creates the Service when missing; one that exists is left as it is (another server may have written it). */
  private async ensureService(): Promise<void> {
    if (await this.client.get(services, namespace, platServiceName)) return;
    try {
      await this.client.create(services, namespace, {
        apiVersion: 'v1', kind: 'Service',
        metadata: { name: platServiceName, namespace, labels: { component: 'apiserver', provider: product.name } },
        spec: {
          type: 'ClusterIP', clusterIP: this.options.clusterIP, clusterIPs: [this.options.clusterIP], sessionAffinity: 'None',
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: this.options.securePort }],
        },
      });
    } catch (e) {
      // Another server made it meanwhile (409 AlreadyExists).
      if (!isConflict(e)) throw e;
    }
  }

  /** The Endpoints from the leases alive, then the EndpointSlice beside them (platslice.ts). */
  private async writeEndpoints(): Promise<void> {
    const alive = await this.options.leases.alive();
    const byPort = new Map<number, string[]>();
    for (const s of alive) byPort.set(s.port, [...(byPort.get(s.port) ?? []), s.ip]);
    const subsets = [...byPort].sort(([a], [b]) => a - b).map(([port, ips]) => ({
      addresses: [...new Set(ips)].sort().map((ip) => ({ ip })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    }));
    await this.writeEndpointsObject(subsets);
    await ensureSliceFromEndpoints(this.client, { metadata: { name: platServiceName, namespace }, subsets });
  }

  private async writeEndpointsObject(subsets: object[]): Promise<void> {
    const current = await this.client.get(endpoints, namespace, platServiceName);
    if (!current) {
      try {
        await this.client.create(endpoints, namespace, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: platServiceName, namespace, labels: skipMirror }, subsets });
      } catch (e) {
        if (!isConflict(e)) throw e; // another server made them: the next round updates them
      }
      return;
    }
    const labelled = current.metadata?.labels?.[vocabulary.endpointSliceSkipMirrorLabel] === 'true';
    if (labelled && JSON.stringify(current.subsets ?? []) === JSON.stringify(subsets)) return;
    try {
      const metadata = { ...current.metadata, labels: { ...(current.metadata?.labels ?? {}), ...skipMirror } };
      await this.client.update(endpoints, namespace, { ...current, metadata, subsets } as ApiObject);
    } catch (e) {
      // Another server wrote them since: its next round, or ours, writes them again.
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  }
}
