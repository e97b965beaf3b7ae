// IP addresses and CIDRs as numbers: parsing (IPv4 dotted quads, IPv6 with
// `::` and an IPv4 tail), the canonical text Go's net package prints (RFC
// 5952 for IPv6: lower case, no leading zeros, the longest run of zero groups
// as `::`), and membership. Used by the ranges the server allocates service
// addresses from and by the validation of addresses in objects.

import { isIP } from 'node:net';

export type IPFamily = 'IPv4' | 'IPv6';

export interface IP {
  family: IPFamily;
  value: bigint;
}

export interface CIDR {
  family: IPFamily;
  /** The network address (host bits zero). */
  network: bigint;
  prefix: number;
  /** 32 or 128. */
  bits: number;
}

const bitsOf = (family: IPFamily) => (family === 'IPv4' ? 32 : 128);

/** An IPv4 or IPv6 address, or undefined when `text` is not one (no zone, no brackets). */
export function parseIP(text: string): IP | undefined {
  // Node takes a zone (`fe80::1%eth0`); Go's ParseIP does not.
  if (text.includes('%')) return undefined;
  const kind = isIP(text);
  if (kind === 4) return { family: 'IPv4', value: v4Value(text) };
  if (kind === 6) return { family: 'IPv6', value: v6Value(text) };
  return undefined;
}

function v4Value(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6Value(text: string): bigint {
  let groups: number[] = [];
  const toGroups = (s: string): number[] => {
    if (s === '') return [];
    const parts = s.split(':');
    const out: number[] = [];
    for (const p of parts) {
      if (p.includes('.')) {
        const v = Number(v4Value(p));
        out.push(v >>> 16, v & 0xffff);
      } else {
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const split = text.indexOf('::');
  if (split < 0) groups = toGroups(text);
  else {
    const head = toGroups(text.slice(0, split));
    const tail = toGroups(text.slice(split + 2));
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** The address as Go prints it. */
export function formatIP(ip: IP): string {
  if (ip.family === 'IPv4') {
    const v = Number(ip.value);
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  }
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(16 * (7 - i))) & 0xffffn));
  // The longest run of two or more zero groups (the first of equal ones) becomes `::`.
  let best = -1, bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) { best = i; bestLength = j - i; }
    if (j > i) i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLength))}`;
}

/**
 * A CIDR (`10.0.0.0/24`, `fd00::/108`), its network taken with the host bits
 * cleared as Go's ParseCIDR does; undefined when it is not one.
 */
export function parseCIDR(text: string): CIDR | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIP(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const bits = bitsOf(ip.family);
  const prefix = Number(prefixText);
  if (prefix > bits) return undefined;
  const hostBits = BigInt(bits - prefix);
  return { family: ip.family, network: (ip.value >> hostBits) << hostBits, prefix, bits };
}

/** `network/prefix` as Go prints it. */
export function formatCIDR(cidr: CIDR): string {
  return `${formatIP({ family: cidr.family, value: cidr.network })}/${cidr.prefix}`;
}

/** How many addresses the CIDR spans. */
export function cidrSize(cidr: CIDR): bigint {
  return 1n << BigInt(cidr.bits - cidr.prefix);
}

export function cidrContains(cidr: CIDR, ip: IP): boolean {
  return ip.family === cidr.family && ip.value >= cidr.network && ip.value < cidr.network + cidrSize(cidr);
}
