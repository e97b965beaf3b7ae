// The leases of the API servers alive, where upstream keeps its master
// leases: store keys under /registry/masterleases/, never API objects. Each
// server renews its own with a time to live; an expired lease counts as
// gone and is removed by whoever reads it next (the store has no TTL of its
// own on SQLite). Keyed by address and port, since servers sharing a host
// (as tests do) share an address. The controller that reads them
// (controllers/platservice.ts) declares what it needs, which this shape meets.

import type { Backend } from '../storage/backend.js';
import { lostRace } from './storage-errors.js';

const prefix = '/registry/masterleases/';

/** Where a server answers; what the plat Service's controller lists in its Endpoints. */
export interface ServerAddress {
  ip: string;
  port: number;
}

interface LeaseValue extends ServerAddress {
  /** Milliseconds since the epoch. */
  expires: number;
}

export class StoredServerLeases {
  constructor(private readonly backend: Backend, private readonly now: () => number = Date.now) {}

  private key(s: ServerAddress): string {
    return `${prefix}${s.ip.includes(':') ? `[${s.ip}]` : s.ip}:${s.port}`;
  }

  async renew(server: ServerAddress, ttlMs: number): Promise<void> {
    const key = this.key(server);
    const value = Buffer.from(JSON.stringify({ ip: server.ip, port: server.port, expires: this.now() + ttlMs } satisfies LeaseValue));
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.backend.get(key);
      try {
        if (current) await this.backend.update(key, value, current.modRevision);
        else await this.backend.create(key, value);
        return;
      } catch (e) {
        if (!lostRace(e)) throw e;
      }
    }
  }

  async alive(): Promise<ServerAddress[]> {
    const { items } = await this.backend.range(prefix);
    const now = this.now();
    const alive: ServerAddress[] = [];
    for (const kv of items) {
      let lease: Partial<LeaseValue> = {};
      try { lease = JSON.parse(kv.value.toString('utf8')) as Partial<LeaseValue>; } catch { /* unreadable: treated as expired */ }
      if (typeof lease.ip === 'string' && typeof lease.port === 'number' && typeof lease.expires === 'number' && lease.expires > now) {
        alive.push({ ip: lease.ip, port: lease.port });
      } else {
        // Expired (or unreadable): gone, unless renewed meanwhile.
        await this.backend.delete(kv.key, kv.modRevision).catch(() => undefined);
      }
    }
    return alive;
  }

  async remove(server: ServerAddress): Promise<void> {
    await this.backend.delete(this.key(server)).catch(() => undefined);
  }
}
