// The API server's own allocations, as upstream: Service cluster IPs from
// --service-cluster-ip-range and node ports from --service-node-port-range.
// Each range is a bitmap stored as a RangeAllocation object under
// /registry/ranges/, changed only by compare-and-swap, so two servers on one
// store never hand out one value twice. Dynamic picks start in the upper band
// of a range; the lower band is left for values clients ask for, as upstream.

import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';

import { rfc3339Now } from '../machinery/time.js';
import type { Backend } from '../storage/backend.js';
import { lostRace, storageFailure } from './storage-errors.js';

/** Why a value could not be had, in upstream's words. */
export class AllocationError extends Error {
  constructor(message: string, readonly full = false) {
    super(message);
  }
}

/** A range of values mapped to bitmap offsets 0..size-1. */
export interface ValueRange<T> {
  /** The range as upstream writes it in the RangeAllocation (`10.0.0.0/24`, `30000-32767`). */
  text: string;
  size: number;
  offsetOf(value: T): number | undefined;
  valueAt(offset: number): T;
  /** How many of the first offsets only clients' explicit asks take. */
  staticBand: number;
}

const maxBitmapSize = 65536;

/** IPv4 or IPv6 addresses of a CIDR, without its network address (and an IPv4 broadcast); capped at 2^16 values. */
export function cidrRange(cidr: string): ValueRange<string> & { family: 'IPv4' | 'IPv6' } {
  const [ip, bitsText] = cidr.split('/');
  const family = isIP(ip ?? '');
  const bits = Number(bitsText);
  const width = family === 4 ? 32 : 128;
  if (!family || !Number.isInteger(bits) || bits < 0 || bits > width) throw new Error(`invalid CIDR ${cidr}`);
  const base = toBig(ip!, family) >> BigInt(width - bits) << BigInt(width - bits);
  let total = 1n << BigInt(width - bits);
  total -= family === 4 ? 2n : 1n; // the network address, and an IPv4 broadcast address
  if (total < 1n) throw new Error(`CIDR ${cidr} holds no usable address`);
  const size = Number(total > BigInt(maxBitmapSize) ? BigInt(maxBitmapSize) : total);
  const first = base + 1n;
  return {
    family: family === 4 ? 'IPv4' : 'IPv6',
    text: `${fromBig(base, family)}/${bits}`,
    size,
    staticBand: size < 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 16)), 256),
    offsetOf(value) {
      if (isIP(value) !== family) return undefined;
      const n = toBig(value, family) - first;
      return n >= 0n && n < BigInt(size) ? Number(n) : undefined;
    },
    valueAt: (offset) => fromBig(first + BigInt(offset), family),
  };
}

/** Ports `min-max` (inclusive). */
export function portRange(text: string): ValueRange<number> {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (!m || min < 1 || max > 65535 || min > max) throw new Error(`invalid port range ${text}`);
  const size = max - min + 1;
  return {
    text: `${min}-${max}`,
    size,
    staticBand: size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128),
    offsetOf: (port) => (Number.isInteger(port) && port >= min && port <= max ? port - min : undefined),
    valueAt: (offset) => min + offset,
  };
}

function toBig(ip: string, family: number): bigint {
  if (family === 4) return ip.split('.').reduce((n, part) => (n << 8n) + BigInt(Number(part)), 0n);
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

function fromBig(n: bigint, family: number): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The longest run of zero groups becomes '::', as the canonical form writes it.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** One range's bitmap in the store; every change is a compare-and-swap that starts again on a lost race. */
export class StoredRange<T> {
  constructor(private readonly backend: Backend, readonly key: string, readonly range: ValueRange<T>, private readonly what: string) {}

  private async change(mutate: (bits: Buffer) => number | undefined): Promise<number | undefined> {
    for (;;) {
      const kv = await this.backend.get(this.key).catch(storageFailure);
      const stored = kv ? JSON.parse(kv.value.toString('utf8')) : undefined;
      const bits = Buffer.alloc(Math.ceil(this.range.size / 8));
      if (stored?.range === this.range.text && typeof stored.data === 'string') Buffer.from(stored.data, 'base64').copy(bits);
      const before = Buffer.from(bits);
      const result = mutate(bits);
      if (kv && bits.equals(before)) return result;
      const value = Buffer.from(JSON.stringify({
        apiVersion: 'v1', kind: 'RangeAllocation', metadata: { creationTimestamp: stored?.metadata?.creationTimestamp ?? rfc3339Now() },
        range: this.range.text, data: bits.toString('base64'),
      }));
      try {
        if (kv) await this.backend.update(this.key, value, kv.modRevision);
        else await this.backend.create(this.key, value);
        return result;
      } catch (e) {
        if (!lostRace(e)) storageFailure(e);
      }
    }
  }

  /** Takes `value`; an AllocationError when it is outside the range or taken. */
  async allocate(value: T): Promise<void> {
    const offset = this.range.offsetOf(value);
    if (offset === undefined) throw new AllocationError(`provided ${this.what} is not in the valid range. The range of valid ${this.what}s is ${this.range.text}`);
    let taken = false;
    await this.change((bits) => {
      taken = isSet(bits, offset);
      if (!taken) set(bits, offset, true);
      return offset;
    });
    if (taken) throw new AllocationError(`provided ${this.what} is already allocated`);
  }

  /** Takes a free value: at random in the upper band first, then the lower one. */
  async allocateNext(): Promise<T> {
    const { size, staticBand } = this.range;
    const offset = await this.change((bits) => {
      const pick = (from: number, to: number): number | undefined => {
        const span = to - from;
        if (span <= 0) return undefined;
        const start = randomInt(span);
        for (let i = 0; i < span; i++) {
          const o = from + ((start + i) % span);
          if (!isSet(bits, o)) return o;
        }
        return undefined;
      };
      const o = pick(staticBand, size) ?? pick(0, staticBand);
      if (o !== undefined) set(bits, o, true);
      return o;
    });
    if (offset === undefined) throw new AllocationError('range is full', true);
    return this.range.valueAt(offset);
  }

  async release(value: T): Promise<void> {
    const offset = this.range.offsetOf(value);
    if (offset === undefined) return;
    await this.change((bits) => { set(bits, offset, false); return offset; });
  }

  /** Marks values found in use (repair on start); never frees any, so a value another server just took stays taken. */
  async markInUse(values: T[]): Promise<void> {
    const offsets = values.map((v) => this.range.offsetOf(v)).filter((o): o is number => o !== undefined);
    if (!offsets.length) return;
    await this.change((bits) => { for (const o of offsets) set(bits, o, true); return undefined; });
  }
}

const isSet = (bits: Buffer, o: number) => (bits[o >> 3]! & (1 << (o & 7))) !== 0;
function set(bits: Buffer, o: number, on: boolean): void {
  if (on) bits[o >> 3]! |= 1 << (o & 7);
  else bits[o >> 3]! &= ~(1 << (o & 7));
}


