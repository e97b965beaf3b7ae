// Strategic merge patch (`application/strategic-merge-patch+json`), the server
// half: applying a patch to the live object, with merge keys and strategies
// read from the kind's TypeInfo and the directives upstream clients send —
// `$patch: replace|delete` on maps and list items, `$retainKeys`,
// `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
// Lists without the `merge` strategy are replaced; null deletes a key. The
// result holds only values of the live object and the patch, at their own
// paths: it is no larger than both together and nests no deeper than either.

import { errors } from '../errors.js';
import { tooDeep, valueExceedsDepth } from '../limits.js';
import { hasOwn, ownValue, setOwn } from '../ownkeys.js';
import { badPatch } from './errors.js';
import { clone, goFormat, isObject, type JsonObject } from './json.js';
import {
  badArgType, directiveMarker, discardNulls, goTypeName, mergeList, normalizeElementOrder, partition,
  removeDirectives, sliceElementKind, validateSetElementOrder,
} from './strategic-lists.js';
import { childOf, itemsOf, patchStrategies, type TypeInfo } from './typeinfo.js';

const retainKeysDirective = '$retainKeys';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';
const setElementOrderPrefix = '$setElementOrder';

/** Applies a strategic merge patch to a copy of `original` (the caller's values are untouched). */
export function applyStrategicMergePatch(original: unknown, patch: unknown, type: TypeInfo): JsonObject {
  if (valueExceedsDepth(patch)) throw tooDeep();
  if (!isObject(patch)) {
    const kind = Array.isArray(patch) ? 'array' : patch === null ? 'null' : typeof patch;
    throw badPatch(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`);
  }
  const base = isObject(original) ? clone(original) : {};
  return mergeMap(base, clone(patch), type);
}

/** Merges `patch` into `original` in place (both are the algorithm's own copies). */
function mergeMap(original: JsonObject, patch: JsonObject, t: TypeInfo): JsonObject {
  if (hasOwn(patch, directiveMarker)) return mapDirective(patch[directiveMarker], patch);
  applyRetainKeys(original, patch);
  applySetElementOrders(original, patch, t);
  for (const patchKey of Object.keys(patch)) {
    const patchV = patch[patchKey];
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(deleteFromPrimitiveListPrefix)) {
      key = extractKey(patchKey, deleteFromPrimitiveListPrefix, 'invalid patch format of primitive list');
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[key];
      continue;
    }
    const present = hasOwn(original, key);
    const current = ownValue(original, key);
    if (!present || goTypeName(current) !== goTypeName(patchV)) {
      if (!isDeleteList) store(original, key, discardNulls(patchV));
      continue;
    }
    const child = childOf(t, key);
    const strategy = mergeStrategy(child);
    if (isObject(current)) {
      setOwn(original, key, strategy === 'replace' ? patchV : mergeMap(current, patchV as JsonObject, child));
    } else if (Array.isArray(current)) {
      setOwn(original, key, mergeListField(current, patchV as unknown[], child, strategy, isDeleteList));
    } else {
      store(original, key, patchV);
    }
  }
  return original;
}

/** Sets a key to a patch value stripped of directives; a value that is itself a directive removes the key. */
function store(target: JsonObject, key: string, value: unknown): void {
  const [v, keep] = removeDirectives(value);
  if (keep) setOwn(target, key, v);
  else delete target[key];
}

/** `$patch` on a map: `replace` uses the patch as the whole map, `delete` empties it. */
function mapDirective(directive: unknown, patch: JsonObject): JsonObject {
  if (directive === 'replace') {
    delete patch[directiveMarker];
    return removeDirectives(discardNulls(patch))[0] as JsonObject;
  }
  if (directive === 'delete') return {};
  throw badPatch(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(patch)}`);
}

/** The list/map strategy of a field, without the `retainKeys` flag (which only guides clients). */
function mergeStrategy(t: TypeInfo): string {
  const s = patchStrategies(t);
  if (s.length === 0) return '';
  if (s.length === 1) return s[0] === 'retainKeys' ? '' : s[0];
  if (s.length === 2 && s[0] === 'retainKeys') return s[1];
  if (s.length === 2 && s[1] === 'retainKeys') return s[0];
  throw errors.internal(`unexpected patch strategy: [${s.join(' ')}]`);
}

function mergeListField(current: unknown[], patchV: unknown[], t: TypeInfo, strategy: string, isDeleteList: boolean): unknown[] {
  if (strategy !== 'merge') return patchV;
  return mergeList(current, patchV, itemsOf(t), t.patchMergeKey ?? '', isDeleteList, mergeMap);
}

/** `$deleteFromPrimitiveList/x` -> `x`; a malformed prefix is a 400. */
function extractKey(key: string, prefix: string, malformed: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw badPatch(malformed);
  return key.slice(slash + 1);
}

/**
 * `$retainKeys`: keys of the live map not listed are cleared before merging;
 * every non-null patch key must be listed (400 otherwise).
 */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!hasOwn(patch, retainKeysDirective)) return;
  const list = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(list)) throw badPatch('invalid patch format of retainKeys');
  const retained = new Set(list.filter((v): v is string => typeof v === 'string'));
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue;
    if (!retained.has(k)) throw badPatch('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

/**
 * `$setElementOrder/x`: merges list `x` with its patch list (if any) and
 * orders the result as the directive lists, live-only items interleaved
 * where they stood. The list is then done: it leaves the patch.
 */
function applySetElementOrders(original: JsonObject, patch: JsonObject, t: TypeInfo): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(setElementOrderPrefix)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
    const key = extractKey(directiveKey, setElementOrderPrefix, 'invalid patch format of setElementOrder list');
    const hasOriginal = hasOwn(original, key);
    const hasPatch = hasOwn(patch, key);
    const originalList = hasOriginal ? original[key] : [];
    const patchList = hasPatch ? patch[key] : [];
    if (!Array.isArray(originalList)) throw badArgType('[]interface {}', originalList);
    if (!Array.isArray(patchList)) throw badArgType('[]interface {}', patchList);
    const child = childOf(t, key);
    const strategy = mergeStrategy(child);
    const mergeKey = child.patchMergeKey ?? '';
    validateSetElementOrder(patchList, order, mergeKey);
    let merged: unknown[];
    if (hasOriginal && hasPatch) merged = mergeListField(originalList, patchList, child, strategy, false);
    else if (hasPatch) merged = removeDirectives(patchList)[0] as unknown[];
    else if (hasOriginal) merged = originalList;
    else continue;
    const [inOrder, serverOnly] = partition(merged, order, mergeKey);
    const kind = sliceElementKind(originalList, patchList);
    if (kind === undefined) throw badPatch('no elements in any of the given slices');
    setOwn(original, key, normalizeElementOrder(inOrder, serverOnly, order, originalList, mergeKey, kind));
    delete patch[key];
  }
}
