// The two kinds of range the server hands values out of, as upstream sizes
// and names them: service cluster IPs from a CIDR (the network address and,
// for IPv4, the broadcast address never handed out; IPv6 ranges capped at
// 65,536 addresses, the bitmap's size) and node ports from a port range
// (`30000-32767`). Each maps its values to bitmap offsets and back, and
// carries the offset of the band kept for values asked for by number.

import { cidrContains, cidrSize, formatCIDR, formatIP, parseCIDR, parseIP, type CIDR, type IPFamily } from '../../machinery/ipnet.js';

/** A value range a bitmap allocates from. */
export interface ValueRange<V> {
  /** How the range is written (`10.0.0.0/24`, `30000-32767`), as stored in its RangeAllocation. */
  readonly text: string;
  readonly size: number;
  /** Values below this offset are handed out only when the rest are taken. */
  readonly staticBand: number;
  /** The bitmap offset of a value, or undefined when the range does not hold it. */
  offsetOf(value: V): number | undefined;
  valueAt(offset: number): V;
  /** The error text for a value outside the range, in upstream's words. */
  notInRange(value: V): string;
}

/** Upstream's band: min(max(16, size / step), cap), none for ranges of at most 16. */
function staticBand(size: bigint, step: bigint, cap: bigint): number {
  if (size <= 16n) return 0;
  const band = size / step;
  return Number(band < 16n ? 16n : band > cap ? cap : band);
}

export class ServiceIPRange implements ValueRange<string> {
  readonly text: string;
  readonly size: number;
  readonly staticBand: number;
  readonly family: IPFamily;
  private readonly first: bigint;

  constructor(readonly cidr: CIDR) {
    this.text = formatCIDR(cidr);
    this.family = cidr.family;
    const total = cidrSize(cidr);
    // IPv6 ranges are capped at the bitmap's size; IPv4 loses its broadcast address.
    let usable = cidr.family === 'IPv6' ? (total > 65536n ? 65536n : total) : total - 1n;
    usable -= 1n; // the network address is never handed out
    this.size = Number(usable < 0n ? 0n : usable);
    this.first = cidr.network + 1n;
    this.staticBand = staticBand(total, 16n, 256n);
  }

  static parse(text: string): ServiceIPRange | undefined {
    const cidr = parseCIDR(text);
    return cidr && new ServiceIPRange(cidr);
  }

  offsetOf(value: string): number | undefined {
    const ip = parseIP(value);
    if (!ip || !cidrContains(this.cidr, ip)) return undefined;
    const offset = ip.value - this.first;
    return offset < 0n || offset >= BigInt(this.size) ? undefined : Number(offset);
  }

  valueAt(offset: number): string {
    return formatIP({ family: this.family, value: this.first + BigInt(offset) });
  }

  notInRange(value: string): string {
    return `the provided IP (${value}) is not in the valid range. The range of valid IPs is ${this.text}`;
  }
}

export class NodePortRange implements ValueRange<number> {
  readonly text: string;
  readonly staticBand: number;

  constructor(readonly base: number, readonly size: number) {
    this.text = size === 0 ? '' : `${base}-${base + size - 1}`;
    this.staticBand = staticBand(BigInt(size), 32n, 128n);
  }

  /** `low-high`, `low+count` or one port, as upstream's flag takes it; an Error says what is wrong. */
  static parse(value: string): NodePortRange {
    const text = value.trim();
    if (text === '') return new NodePortRange(0, 0);
    const m = /^(\d+)(?:([-+])(\d+))?$/.exec(text);
    if (!m) throw new Error(`unable to parse port range: ${text}`);
    const low = Number(m[1]);
    const high = m[2] === '-' ? Number(m[3]) : m[2] === '+' ? low + Number(m[3]) : low;
    if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${text}`);
    if (high < low) throw new Error(`end port cannot be less than start port: ${text}`);
    return new NodePortRange(low, high - low + 1);
  }

  offsetOf(port: number): number | undefined {
    return Number.isInteger(port) && port >= this.base && port < this.base + this.size ? port - this.base : undefined;
  }

  valueAt(offset: number): number {
    return this.base + offset;
  }

  notInRange(): string {
    return `provided port is not in the valid range. The range of valid ports is ${this.text}`;
  }
}
