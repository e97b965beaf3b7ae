// Each API server publishes a Lease naming itself in the system namespace,
// renewed every 10 s for an hour's duration, as upstream's apiserver
// identity leases; so clients and other servers can tell which servers are
// alive. Leases of servers that stopped renewing are deleted once expired.

import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ApiClient, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import { rfc3339MicroNow } from '../machinery/time.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import type { Controller } from './controller.js';
import { realClock, type Clock, type TimerHandle } from '../client/clock.js';
import { leasesType } from './leaderelection.js';

export interface IdentityLeaseOptions {
  /** What makes this server distinct on its host (its serving address); the lease name derives from it. */
  instance: string;
  renewIntervalMs?: number;
  leaseDurationSeconds?: number;
  /** Time between sweeps for expired identity leases. */
  gcIntervalMs?: number;
  log?(msg: string, extra?: object): void;
  /** Timers and time of the upkeep; the real clock unless a test moves time on. */
  clock?: Clock;
}

const identityValue = `${product.name}-apiserver`;

/** The lease name of a server: stable across its restarts, distinct from other servers on the host. */
export function identityLeaseName(instance: string): string {
  return `apiserver-${createHash('sha256').update(`${hostname()}|${instance}`).digest('hex').slice(0, 26)}`;
}

export class IdentityLease implements Controller {
  readonly name = 'apiserver-identity';
  readonly leaseName: string;
  /** The holder: the lease name and this run's own id. */
  readonly identity: string;
  private readonly leases: ResourceType;
  private readonly renewIntervalMs: number;
  private readonly durationSeconds: number;
  private readonly gcIntervalMs: number;
  private readonly timers = new Set<TimerHandle>();
  private readonly clock: Clock;
  private stopped = false;

  constructor(private readonly client: ApiClient, private readonly options: IdentityLeaseOptions) {
    this.leases = leasesType(client);
    this.clock = options.clock ?? realClock;
    this.leaseName = identityLeaseName(options.instance);
    this.identity = `${this.leaseName}_${randomUUID()}`;
    this.renewIntervalMs = options.renewIntervalMs ?? 10_000;
    this.durationSeconds = options.leaseDurationSeconds ?? 3600;
    this.gcIntervalMs = options.gcIntervalMs ?? 3_600_000;
  }

  async start(): Promise<void> {
    this.every(this.renewIntervalMs, () => this.renew());
    this.every(this.gcIntervalMs, () => this.collectExpired());
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) this.clock.clearTimeout(timer);
  }

  private every(ms: number, run: () => Promise<void>): void {
    const tick = (): void => {
      if (this.stopped) return;
      run().catch((e) => this.options.log?.('identity lease upkeep failed', { err: String(e) }))
        .finally(() => {
          if (this.stopped) return;
          const timer = this.clock.setTimeout(() => {
            this.timers.delete(timer);
            tick();
          }, ms);
          this.timers.add(timer);
        });
    };
    tick();
  }

  private async renew(): Promise<void> {
    const namespace = vocabulary.systemNamespace;
    const now = rfc3339MicroNow(new Date(this.clock.now()));
    const current = await this.client.get(this.leases, namespace, this.leaseName);
    const labels = { [vocabulary.apiserverIdentityLabel]: identityValue, [vocabulary.hostnameLabel]: hostname() };
    if (!current) {
      await this.client.create(this.leases, namespace, {
        apiVersion: `${this.leases.group}/${this.leases.version}`, kind: 'Lease',
        metadata: { name: this.leaseName, namespace, labels },
        spec: { holderIdentity: this.identity, leaseDurationSeconds: this.durationSeconds, acquireTime: now, renewTime: now },
      });
      return;
    }
    await this.client.update(this.leases, namespace, {
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata?.labels, ...labels } },
      spec: { ...current.spec, holderIdentity: this.identity, leaseDurationSeconds: this.durationSeconds, renewTime: now },
    });
  }

  /** Deletes identity leases (of any server) not renewed for their whole duration. */
  private async collectExpired(): Promise<void> {
    const list = await this.client.list(this.leases, vocabulary.systemNamespace, { labelSelector: `${vocabulary.apiserverIdentityLabel}=${identityValue}` });
    const now = this.clock.now();
    for (const lease of list.items) {
      const renewed = Date.parse(lease.spec?.renewTime ?? '');
      const durationMs = (Number(lease.spec?.leaseDurationSeconds) || this.durationSeconds) * 1000;
      if (lease.metadata?.name === this.leaseName || Number.isNaN(renewed) || renewed + durationMs > now) continue;
      try {
        await this.client.delete(this.leases, vocabulary.systemNamespace, lease.metadata!.name, { preconditions: { resourceVersion: lease.metadata!.resourceVersion } });
      } catch (e) {
        // Gone already, or renewed since the list: leave it.
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }
}
