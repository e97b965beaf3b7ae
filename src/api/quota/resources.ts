// Resource lists (`{ pods: '4', 'requests.cpu': '500m' }`) as quota counts
// them: a Map from resource name to an exact quantity, never a plain object
// keyed by names a user wrote. The arithmetic is upstream's quota helpers':
// a sum keeps the format of its first non-zero operand, a comparison
// reports which names went over, and messages list names in sorted order.

import { formatQuantity, parseQuantity, type Quantity } from '../../machinery/quantity.js';

export type ResourceList = Map<string, Quantity>;

const zero: Quantity = Object.freeze({ nanos: 0n, format: 'DecimalSI' });

/** A resource list from its JSON form; values that are not quantities are left out (validation keeps them from being stored). */
export function resourceList(json: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return out;
  for (const [name, value] of Object.entries(json)) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    try {
      out.set(name, parseQuantity(String(value)));
    } catch {
      // not a quantity: not counted
    }
  }
  return out;
}

/** The JSON form, names sorted (own properties only, whatever the names). */
export function toJson(list: ResourceList): Record<string, string> {
  return Object.fromEntries([...list.keys()].sort().map((name) => [name, formatQuantity(list.get(name)!)]));
}

/** a + b for every name in either, as upstream's quota.Add. */
export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [name, q] of b) {
    const base = out.get(name);
    out.set(name, base ? sum(base, q) : q);
  }
  return out;
}

function sum(a: Quantity, b: Quantity): Quantity {
  // As upstream's Quantity.Add: a zero takes the format of what is added to it.
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

/** a - b for the names of a, never below zero (upstream's SubtractWithNonNegativeResult). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [name, q] of a) {
    const other = b.get(name);
    const nanos = other ? q.nanos - other.nanos : q.nanos;
    out.set(name, nanos > 0n ? { nanos, format: q.format } : { ...zero, format: q.format });
  }
  return out;
}

/** a - b for the names of a (may go negative). */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [name, q] of a) {
    const other = b.get(name);
    out.set(name, other ? { nanos: q.nanos - other.nanos, format: q.format } : q);
  }
  return out;
}

/** The entries of `list` whose names are in `names`. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const name of names) {
    const q = list.get(name);
    if (q) out.set(name, q);
  }
  return out;
}

/** Whether every name of `a` that `b` caps stays within it; and the names that do not. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { allowed: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [name, q] of a) {
    const cap = b.get(name);
    if (cap && q.nanos > cap.nanos) exceeded.push(name);
  }
  return { allowed: exceeded.length === 0, exceeded };
}

export function removeZeros(list: ResourceList): ResourceList {
  return new Map([...list].filter(([, q]) => q.nanos !== 0n));
}

export function negativeNames(list: ResourceList): string[] {
  return [...list].filter(([, q]) => q.nanos < 0n).map(([name]) => name);
}

/** Same names, same values (formats aside), as upstream's quota.Equals. */
export function equals(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [name, q] of a) if (b.get(name)?.nanos !== q.nanos) return false;
  return true;
}

/** `name=value,...` in name order, as upstream's messages print a list. */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()].sort().map((name) => `${name}=${formatQuantity(list.get(name)!)}`).join(',');
}

/** Names sorted and joined by commas. */
export function prettyNames(names: Iterable<string>): string {
  return [...names].sort().join(',');
}

export function quantityOf(count: number | bigint): Quantity {
  return { nanos: BigInt(count) * 1_000_000_000n, format: 'DecimalSI' };
}

export function zeroQuantity(): Quantity {
  return zero;
}
