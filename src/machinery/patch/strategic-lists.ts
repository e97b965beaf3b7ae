// List handling of strategic merge patch: merging lists with the `merge`
// strategy (maps by their merge key, scalars as sets), `$patch` list items,
// `$deleteFromPrimitiveList` and the order rules upstream applies (patch order
// first, then the live order; items new to the list come first).

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
    if (directiveMarker in v) return [undefined, false];
    for (const k of Object.keys(v)) {
      const [nv, keep] = removeDirectives(v[k]);
      if (keep) v[k] = nv;
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
  return isObject(item) ? item[mergeKey] : undefined;
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: string): number {
  const k = keyOf(item, mergeKey, kind);
  return list.findIndex((v) => keyOf(v, mergeKey, kind) === k);
}

/** Finds the first map item whose merge key equals `value`. */
function findByKey(list: unknown[], mergeKey: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) throw badPatch(`value for key ${i} is not a map.`);
    if (Object.prototype.hasOwnProperty.call(item, mergeKey) && item[mergeKey] === value) return i;
  }
  return -1;
}

/** Splits `items` into those present in `by` and the server-only rest. */
export function partition(items: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [], serverOnly: unknown[] = [];
  for (const item of items) {
    let found: boolean;
    if (mergeKey) {
      if (!isObject(item)) throw badArgType('map[string]interface {}', item);
      if (!(mergeKey in item)) throw noMergeKey(item, mergeKey);
      found = findByKey(by, mergeKey, item[mergeKey]) >= 0;
    } else {
      found = by.some((v) => v === item);
    }
    (found ? inPatch : serverOnly).push(item);
  }
  return [inPatch, serverOnly];
}

function isDeleteItem(v: unknown): boolean {
  return isObject(v) && v[directiveMarker] === 'delete';
}

/** Sorts `toSort` by the positions of its items in `order` (stable; items not in `order` keep their place). */
function sortByOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: string): unknown[] {
  let rest = toSort, deletions: unknown[] = [];
  if (kind === 'map') {
    for (const v of [...toSort, ...order]) {
      if (!isObject(v)) throw badArgType('map[string]interface {}', v);
      if (!(mergeKey in v)) throw noMergeKey(v, mergeKey);
    }
    rest = toSort.filter((v) => !isDeleteItem(v));
    deletions = toSort.filter(isDeleteItem);
  }
  const ranked = rest.map((v, i) => ({ v, i, at: indexIn(order, v, mergeKey, kind) }));
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
  const out: unknown[] = [];
  let i = 0, j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
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
    if (isDeleteList) return original.filter((v) => !patch.some((d) => d === v));
    merged = [];
    for (const v of [...original, ...patch]) if (!merged.some((m) => m === v)) merged.push(v);
  } else {
    if (!mergeKey) throw badPatch('cannot merge lists without merge key for type struct');
    [serverOrder, patchItems] = applyListItemDirectives(original, patch, mergeKey);
    merged = serverOrder.slice();
    for (const v of patchItems as JsonObject[]) {
      if (!(mergeKey in v)) throw noMergeKey(v, mergeKey);
      const at = findByKey(merged, mergeKey, v[mergeKey]);
      if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, v, itemType);
      else merged.push(removeDirectives(discardNulls(v))[0]);
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
  let remaining = original.slice();
  const plain: unknown[] = [];
  let replace = false;
  for (const v of patch as JsonObject[]) {
    if (!(directiveMarker in v)) {
      plain.push(v);
      continue;
    }
    const directive = v[directiveMarker];
    if (directive === 'delete') {
      if (!(mergeKey in v)) throw noMergeKey(v, mergeKey);
      const key = v[mergeKey];
      for (let at = findByKey(remaining, mergeKey, key); at >= 0; at = findByKey(remaining, mergeKey, key)) {
        remaining.splice(at, 1);
      }
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw badPatch('merging lists cannot yet be specified in the patch');
    } else {
      throw badPatch(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(v)}`);
    }
  }
  if (replace) return [plain.map((v) => removeDirectives(v)[0]), []];
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
    if (isObject(item) && directiveMarker in item) {
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
  if (!(mergeKey in a)) throw noMergeKey(a, mergeKey);
  if (!(mergeKey in b)) throw noMergeKey(b, mergeKey);
  return a[mergeKey] === b[mergeKey];
}
