// List handling of strategic merge patch: merging lists with the `merge`
// strategy (maps by their merge key, scalars as sets), `$patch` list items,
// `$deleteFromPrimitiveList` and the order rules upstream applies (patch order
// first, then the live order; items new to the list come first). Lookups go
// through indexes built once per list, so the work stays linear in the lists.

import { hasOwn, ownValue, setOwn } from '../ownkeys.js';
import { badPatch, patchRejected } from './errors.js';
import { goFormat, isObject, type JsonObject } from './json.js';
import type { TypeInfo } from './typeinfo.js';

export const directiveMarker = '$patch';

/** Go's name of a decoded JSON value's type, as upstream's type checks and messages see it. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return 'string';
}

export function badArgType(expected: string, actual: unknown) {
  return badPatch(`expected a ${expected}, but received a ${goTypeName(actual)}`);
}

export function noMergeKey(m: unknown, key: string) {
  return badPatch(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
}

/** Strips `$patch` maps from a value about to be stored; false when the value itself is one. */
export function removeDirectives(v: unknown): [unknown, boolean] {
  if (isObject(v)) {
    if (hasOwn(v, directiveMarker)) return [undefined, false];
    for (const k of Object.keys(v)) {
      const [nv, keep] = removeDirectives(v[k]);
      if (keep) setOwn(v, k, nv);
      else delete v[k];
    }
    return [v, true];
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      const [nv, keep] = removeDirectives(item);
      if (keep) out.push(nv);
    }
    return [out, true];
  }
  return [v, true];
}

/** Drops null members of maps at any depth (a patch's nulls mean nothing where nothing was). */
export function discardNulls<T>(v: T): T {
  if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
  } else if (Array.isArray(v)) {
    for (const item of v) discardNulls(item);
  }
  return v;
}

/** 'map' for lists of maps, else the scalar type name; lists of lists are refused (422) and mixed lists (400). */
export function sliceElementKind(...lists: unknown[][]): string | undefined {
  let kind: string | undefined;
  for (const list of lists) {
    for (const item of list) {
      const t = goTypeName(item);
      if (kind === undefined) {
        if (Array.isArray(item)) throw patchRejected('lists of lists are not supported');
        kind = t;
      } else if (kind !== t) {
        throw badPatch(`list element types are not identical: ${goFormat(lists)}`);
      }
    }
  }
  return kind === 'map[string]interface {}' ? 'map' : kind;
}

/** The merge key value of a map item (or the item itself for scalars), as upstream's index lookups compare. */
function keyOf(item: unknown, mergeKey: string, kind: string): unknown {
  if (kind !== 'map') return item;
  return isObject(item) ? ownValue(item, mergeKey) : undefined;
}

/**
 * First position of each key in a list (keys as `keyOf` reads them). A Map
 * compares its keys as `===` does for JSON values.
 */
function positions(list: unknown[], mergeKey: string, kind: string): Map<unknown, number> {
  const at = new Map<unknown, number>();
  list.forEach((v, i) => {
    const k = keyOf(v, mergeKey, kind);
    if (!at.has(k)) at.set(k, i);
  });
  return at;
}

/**
 * Finds map items by merge key value as a scan from the start would: the
 * first item whose own key equals the value, and a 400 when an item that is
 * not a map comes first.
 */
class KeyedItems {
  private readonly at = new Map<unknown, number>();
  private firstNonMap = -1;

  constructor(list: unknown[], private readonly mergeKey: string) {
    list.forEach((item, i) => this.note(item, i));
  }

  /** Records the item at position `i` (appended to the list after construction). */
  note(item: unknown, i: number): void {
    if (!isObject(item)) {
      if (this.firstNonMap < 0) this.firstNonMap = i;
    } else if (hasOwn(item, this.mergeKey)) {
      const k = item[this.mergeKey];
      if (!this.at.has(k)) this.at.set(k, i);
    }
  }

  find(value: unknown): number {
    const i = this.at.get(value) ?? -1;
    if (this.firstNonMap >= 0 && (i < 0 || this.firstNonMap < i)) throw badPatch(`value for key ${this.firstNonMap} is not a map.`);
    return i;
  }
}

/** Splits `items` into those present in `by` and the server-only rest. */
export function partition(items: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [], serverOnly: unknown[] = [];
  const keyed = mergeKey ? new KeyedItems(by, mergeKey) : undefined;
  const values = mergeKey ? undefined : new Set(by);
  for (const item of items) {
    let found: boolean;
    if (keyed) {
      if (!isObject(item)) throw badArgType('map[string]interface {}', item);
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      found = keyed.find(item[mergeKey]) >= 0;
    } else {
      found = values!.has(item);
    }
    (found ? inPatch : serverOnly).push(item);
  }
  return [inPatch, serverOnly];
}

function isDeleteItem(v: unknown): boolean {
  return isObject(v) && ownValue(v, directiveMarker) === 'delete';
}

/** Sorts `toSort` by the positions of its items in `order` (stable; items not in `order` keep their place). */
function sortByOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: string): unknown[] {
  let rest = toSort, deletions: unknown[] = [];
  if (kind === 'map') {
    for (const v of [...toSort, ...order]) {
      if (!isObject(v)) throw badArgType('map[string]interface {}', v);
      if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    }
    rest = toSort.filter((v) => !isDeleteItem(v));
    deletions = toSort.filter(isDeleteItem);
  }
  const inOrder = positions(order, mergeKey, kind);
  const ranked = rest.map((v, i) => ({ v, i, at: inOrder.get(keyOf(v, mergeKey, kind)) ?? -1 }));
  ranked.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0) || a.i - b.i);
  return [...ranked.map((r) => r.v), ...deletions];
}

/**
 * Orders patch items by `patchOrder` and server-only items by `serverOrder`,
 * then interleaves them: a server-only item goes first only when it stood
 * before the patch item in the live list, so items new to the list lead.
 */
export function normalizeElementOrder(patchItems: unknown[], serverOnly: unknown[], patchOrder: unknown[],
  serverOrder: unknown[], mergeKey: string, kind: string): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const inServer = positions(serverOrder, mergeKey, kind);
  const indexIn = (item: unknown) => inServer.get(keyOf(item, mergeKey, kind)) ?? -1;
  const out: unknown[] = [];
  let i = 0, j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(left[i]);
      const ri = indexIn(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** Type of the map merge used for list items; supplied by the map half to avoid a cycle of imports. */
export type MapMerger = (original: JsonObject, patch: JsonObject, t: TypeInfo) => JsonObject;

/** Merges two lists of a field with the `merge` strategy. */
export function mergeList(original: unknown[], patch: unknown[], itemType: TypeInfo, mergeKey: string,
  isDeleteList: boolean, mergeMap: MapMerger): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch) ?? 'nil';
  let merged: unknown[];
  let serverOrder = original, patchItems = patch;
  if (kind !== 'map') {
    if (isDeleteList) {
      const deleted = new Set(patch);
      return original.filter((v) => !deleted.has(v));
    }
    merged = [...new Set([...original, ...patch])];
  } else {
    if (!mergeKey) throw badPatch('cannot merge lists without merge key for type struct');
    [serverOrder, patchItems] = applyListItemDirectives(original, patch, mergeKey);
    merged = serverOrder.slice();
    const keyed = new KeyedItems(merged, mergeKey);
    for (const v of patchItems as JsonObject[]) {
      if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      // Merging keeps the item's key (the patch item carries the same one), so the index stays true.
      const at = keyed.find(v[mergeKey]);
      if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, v, itemType);
      else {
        merged.push(removeDirectives(discardNulls(v))[0]);
        keyed.note(merged[merged.length - 1], merged.length - 1);
      }
    }
  }
  const [inPatch, serverOnly] = partition(merged, patchItems, kind === 'map' ? mergeKey : '');
  return normalizeElementOrder(inPatch, serverOnly, patchItems, serverOrder, kind === 'map' ? mergeKey : '', kind);
}

/**
 * Handles `$patch` items of a list of maps: `delete` drops the items with that
 * key, `replace` makes the other patch items the whole list. Returns the
 * remaining original and the patch items without directives.
 */
function applyListItemDirectives(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const deleted = new Set<unknown>();
  const plain: unknown[] = [];
  let replace = false;
  for (const v of patch as JsonObject[]) {
    if (!hasOwn(v, directiveMarker)) {
      plain.push(v);
      continue;
    }
    const directive = v[directiveMarker];
    if (directive === 'delete') {
      if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      deleted.add(v[mergeKey]);
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw badPatch('merging lists cannot yet be specified in the patch');
    } else {
      throw badPatch(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(v)}`);
    }
  }
  if (replace) return [plain.map((v) => removeDirectives(v)[0]), []];
  // Every item is a map here (the list's kind says so).
  const remaining = original.filter((item) => !(hasOwn(item as JsonObject, mergeKey) && deleted.has((item as JsonObject)[mergeKey])));
  return [remaining, plain];
}

/** Checks that the non-deleted patch items appear in the `$setElementOrder` list, in its order. */
export function validateSetElementOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey) {
    for (const v of patchList) if (!isObject(v)) throw badArgType('map[string]interface {}', v);
    items = patchList.filter((v) => !isDeleteItem(v));
  }
  let pi = 0, si = 0;
  while (pi < items.length && si < order.length) {
    const item = items[pi];
    if (isObject(item) && hasOwn(item, directiveMarker)) {
      pi++;
      continue;
    }
    if (sameKey(item, order[si], mergeKey)) pi++;
    si++;
  }
  if (pi < items.length && si >= order.length) {
    throw badPatch(`The order in patch list:\n${goFormat(patchList)}\n doesn't match $setElementOrder list:\n${goFormat(order)}\n`);
  }
}

function sameKey(a: unknown, b: unknown, mergeKey: string): boolean {
  if (!mergeKey) return a === b;
  if (!isObject(a)) throw badArgType('map[string]interface {}', a);
  if (!isObject(b)) throw badArgType('map[string]interface {}', b);
  if (!hasOwn(a, mergeKey)) throw noMergeKey(a, mergeKey);
  if (!hasOwn(b, mergeKey)) throw noMergeKey(b, mergeKey);
  return a[mergeKey] === b[mergeKey];
}
