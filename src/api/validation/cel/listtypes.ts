// Lists of `x-plat-list-type: set` and `map` as upstream's CEL values of them
// (unstructuredSetList, unstructuredMapList): `==` with such a list on the
// left ignores order (a set: the same size and every item of the right in
// the left; a map: the same size and every item of the right equal to the
// left's item with its keys), and `+` merges (a set keeps the left's order
// and appends the right's new items; a map replaces the left's item with
// the same keys in place and appends the rest). The result of `+` is again
// a list of the same kind. A list on the right or a plain list on the left
// behaves as any CEL list, as upstream.

import { celList, isCelList, isCelMap, isCelUint, type CelList, type CelValue } from '@bufbuild/cel';

export interface ListKind { kind: 'set' | 'map'; keys: readonly string[] }

// The kind rides on the list itself (a symbol-keyed property): cheaper per
// conversion than a WeakMap entry, and gone with the list.
const kindKey = Symbol('plat list kind');

/** The CEL list of `items` of a set or list-map (`kind` is made once per schema). */
export function typedList(items: readonly unknown[], kind: ListKind): CelList {
  return withListKind(celList(items as CelValue[]), kind);
}

/** `list`, marked as a set or list-map of `kind`. */
export function withListKind(list: CelList, kind: ListKind): CelList {
  (list as unknown as Record<symbol, ListKind>)[kindKey] = kind;
  return list;
}

/** The kind of a set or list-map list, undefined for any other value. */
export function listKindOf(v: unknown): ListKind | undefined {
  return isCelList(v) ? (v as unknown as Record<symbol, ListKind | undefined>)[kindKey] : undefined;
}

type Equal = (a: unknown, b: unknown) => boolean;

/** A scalar's hash key, numbers keyed alike across int, uint and double as CEL compares them; undefined for lists, maps and other values compared with `equal`. */
function scalarKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string': return `s${v}`;
    case 'boolean': return `b${v}`;
    case 'bigint': return `n${v}`;
    case 'number': return Number.isInteger(v) ? `n${v}` : `d${v}`;
    default: return isCelUint(v) ? `n${v.value}` : v === null ? 'null' : undefined;
  }
}

/** The key of a list-map item: its key fields' values; undefined when the item is no map. */
function itemKey(v: unknown, keys: readonly string[]): string | undefined {
  if (!isCelMap(v)) return undefined;
  return JSON.stringify(keys.map((k) => scalarKey(v.get(k)) ?? null));
}

/** The items of a set, hashed where they are scalars, to test and add to. */
class Members {
  private readonly hashed = new Set<string>();
  private readonly others: unknown[] = [];
  constructor(private readonly equal: Equal) {}
  has(item: unknown): boolean {
    const k = scalarKey(item);
    return k !== undefined ? this.hashed.has(k) : this.others.some((o) => this.equal(o, item));
  }
  add(item: unknown): void {
    const k = scalarKey(item);
    if (k === undefined) this.others.push(item); else this.hashed.add(k);
  }
}

/** `left == right` for a set or list-map `left`. */
export function typedListEquals(left: CelList, kind: ListKind, right: CelList, equal: Equal): boolean {
  if (left.size !== right.size) return false;
  const mine = [...left];
  if (kind.kind === 'set') {
    const members = new Members(equal);
    for (const x of mine) members.add(x);
    for (const x of right) if (!members.has(x)) return false;
    return true;
  }
  const byKey = new Map<string, unknown>();
  for (const x of mine) { const k = itemKey(x, kind.keys); if (k !== undefined) byKey.set(k, x); }
  for (const x of right) {
    const k = itemKey(x, kind.keys);
    if (k === undefined || !byKey.has(k) || !equal(byKey.get(k), x)) return false;
  }
  return true;
}

/** `left + right` for a set or list-map `left`. */
export function typedListAdd(left: CelList, kind: ListKind, right: CelList, equal: Equal): CelList {
  const out = [...left];
  if (kind.kind === 'set') {
    const members = new Members(equal);
    for (const x of out) members.add(x);
    for (const x of right) if (!members.has(x)) { members.add(x); out.push(x); }
    return typedList(out, kind);
  }
  const at = new Map<string, number>();
  out.forEach((x, i) => { const k = itemKey(x, kind.keys); if (k !== undefined) at.set(k, i); });
  for (const x of right) {
    const k = itemKey(x, kind.keys);
    const i = k === undefined ? undefined : at.get(k);
    if (i !== undefined) out[i] = x;
    else { if (k !== undefined) at.set(k, out.length); out.push(x); }
  }
  return typedList(out, kind);
}
