// Leader election on a coordination Lease, as upstream's client-go does it:
// a candidate takes the lease when it is free, or when its holder has not
// renewed it for a whole lease duration as seen by this candidate's own
// clock (no clocks are compared across servers); the leader renews it every
// retry period and gives up leading when it could not renew within the
// renew deadline. Every write is guarded by the lease's resourceVersion, so
// two candidates can never both win one round.

import { ApiClient, ApiObject, isConflict, ResourceType } from '../client/types.js';
import { resources, resourceType } from '../client/resources.js';
import { realClock, type Clock, type TimerHandle } from '../client/clock.js';
import { rfc3339MicroNow } from '../machinery/time.js';

export interface LeaderElectionTiming {
  /** How long others wait after the last renewal before taking over. */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it stops leading. */
  renewDeadlineMs: number;
  /** Time between attempts, leading or not. */
  retryPeriodMs: number;
}

export interface LeaderElectionOptions extends LeaderElectionTiming {
  namespace: string;
  name: string;
  identity: string;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  log?(msg: string, extra?: object): void;
  /** Timers and time of the elector; the real clock unless a test moves time on. */
  clock?: Clock;
}

export function leasesType(client: ApiClient): ResourceType {
  return resourceType(client, resources.leases);
}

export class LeaderElector {
  private readonly leases: ResourceType;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private leading = false;
  /** The lease as last read, and when (by our clock) its holder or renew time last changed. */
  private observed: { record: string; at: number } | undefined;
  /** When the leader last renewed successfully. */
  private renewedAt = 0;
  private attempt: Promise<void> = Promise.resolve();

  constructor(private readonly client: ApiClient, private readonly options: LeaderElectionOptions) {
    this.leases = leasesType(client);
    this.clock = options.clock ?? realClock;
    if (!(options.leaseDurationMs > options.renewDeadlineMs && options.renewDeadlineMs > options.retryPeriodMs && options.retryPeriodMs > 0)) {
      throw new Error('leader election needs lease duration > renew deadline > retry period > 0');
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops competing; a leader stops leading and frees the lease so another takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    // A store that does not answer must not hold up the server's stop.
    const bounded = (work: Promise<unknown>) => Promise.race([work, new Promise((resolve) => this.clock.setTimeout(() => resolve(undefined), this.options.retryPeriodMs))]);
    await bounded(this.attempt);
    if (!this.leading) return;
    this.setLeading(false);
    await bounded(this.release());
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.client.get(this.leases, this.options.namespace, this.options.name);
      if (lease?.spec?.holderIdentity === this.options.identity) {
        const now = rfc3339MicroNow(new Date(this.clock.now()));
        const { holderIdentity: _released, ...spec } = lease.spec;
        await this.client.update(this.leases, this.options.namespace, {
          ...lease, spec: { ...spec, leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
        });
      }
    } catch (e) {
      this.options.log?.('could not release the leader lease', { err: String(e) });
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.attempt = this.tryAcquireOrRenew().finally(() => this.schedule(this.options.retryPeriodMs));
    }, delayMs);
  }

  private async tryAcquireOrRenew(): Promise<void> {
    let held: boolean;
    try {
      held = await this.acquireOrRenew();
    } catch (e) {
      this.options.log?.('leader election attempt failed', { lease: this.options.name, err: String(e) });
      held = false;
    }
    if (this.stopped) return;
    if (held) {
      this.renewedAt = this.clock.now();
      if (!this.leading) this.setLeading(true);
    } else if (this.leading && this.clock.now() - this.renewedAt >= this.options.renewDeadlineMs) {
      this.setLeading(false);
    }
  }

  /** One round: true when this candidate holds the lease afterwards. */
  private async acquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    const now = this.clock.now();
    const nowText = rfc3339MicroNow(new Date(now));
    const durationSeconds = Math.max(1, Math.round(this.options.leaseDurationMs / 1000));
    const lease = await this.client.get(this.leases, namespace, name);
    if (!lease) {
      return this.write(() => this.client.create(this.leases, namespace, {
        apiVersion: `${this.leases.group}/${this.leases.version}`, kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: nowText, renewTime: nowText, leaseTransitions: 0 },
      }));
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseDurationSeconds ?? ''}`;
    if (this.observed?.record !== record) this.observed = { record, at: now };
    const holder: string | undefined = spec.holderIdentity || undefined;
    const heldByMe = holder === identity;
    // The holder's own duration counts, measured from when we saw its last renewal.
    const holderDurationMs = (Number(spec.leaseDurationSeconds) || durationSeconds) * 1000;
    if (holder && !heldByMe && this.observed.at + holderDurationMs > now) return false;
    const next: ApiObject = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: nowText,
        acquireTime: heldByMe ? spec.acquireTime : nowText,
        // As upstream: every change of holder counts, also taking a released lease.
        leaseTransitions: (spec.leaseTransitions ?? 0) + (heldByMe ? 0 : 1),
      },
    };
    return this.write(() => this.client.update(this.leases, namespace, next));
  }

  /** A guarded write: true when it went through; losing the race (409: changed or created meanwhile) is no error. */
  private async write(run: () => Promise<ApiObject>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.log?.(leading ? 'became the leader' : 'stopped leading', { lease: this.options.name, identity: this.options.identity });
    try {
      if (leading) this.options.onStartedLeading();
      else this.options.onStoppedLeading();
    } catch (e) {
      this.options.log?.('leader election callback failed', { err: String(e) });
    }
  }
}
