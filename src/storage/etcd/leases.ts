// Keys that expire, as upstream's Events: a write under an expiring prefix
// attaches an etcd lease, and etcd deletes the key when the lease runs out
// (watchers see the delete). As upstream's lease manager, one lease serves
// every write of a short window (5% of the TTL, at most a minute), granted
// for the TTL plus that window, so no key expires early and etcd is not
// asked for a lease per write.

export interface ExpiringPrefix {
  /** Backend keys starting with this expire... */
  prefix: string;
  /** ...this long after their last write. */
  ttlSeconds: number;
}

interface Granted {
  id: string;
  grantedAt: number;
}

const maxReuseSeconds = 60;

export class LeaseManager {
  private readonly current = new Map<number, Promise<Granted>>();

  constructor(
    /** Asks etcd for a lease of `ttlSeconds`; answers its ID. */
    private readonly grant: (ttlSeconds: number) => Promise<string>,
    private readonly prefixes: readonly ExpiringPrefix[],
  ) {}

  /** The lease for a write to `key`, or undefined when the key does not expire. */
  async leaseFor(key: string): Promise<string | undefined> {
    const rule = this.prefixes.find((p) => key.startsWith(p.prefix));
    if (!rule) return undefined;
    const reuseSeconds = Math.min(maxReuseSeconds, Math.floor(rule.ttlSeconds * 0.05));
    const held = this.current.get(rule.ttlSeconds);
    if (held) {
      try {
        const lease = await held;
        if (Date.now() - lease.grantedAt < reuseSeconds * 1000) return lease.id;
      } catch {
        // The grant failed: ask again below.
      }
      if (this.current.get(rule.ttlSeconds) !== held) return this.leaseFor(key);
    }
    const granting = this.grant(rule.ttlSeconds + reuseSeconds).then((id): Granted => ({ id, grantedAt: Date.now() }));
    this.current.set(rule.ttlSeconds, granting);
    return (await granting).id;
  }
}
