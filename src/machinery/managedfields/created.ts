// The FieldsV1 of a create's manager, written straight from the object: on a
// create with no entries to honour, the manager owns every field it sent
// (what a comparison with nothing finds), less the fields nobody owns and
// those the write does not track. The general road builds that set as a
// trie, then copies it twice and encodes it; for an object of a hundred
// fields this walk is a third of the cost. It gives up (undefined) where the
// trie would merge two items of one list, which the general road handles.

import type { JsonObject } from '../patch/json.js';
import { childOf, itemsOf, type TypeInfo } from '../patch/typeinfo.js';
import type { FieldSet } from './fieldset.js';
import { compareStrings, comparePE, type PathElement } from './pathelement.js';
import { indexItems, shapeOf } from './typed.js';

class Merged extends Error {}

/**
 * FieldsV1 of every field of `obj` below its top, without the members of
 * `strip` and without the subtrees of `drop`: null when no field is left,
 * undefined when two items of a list share an identity (the general road's).
 */
export function createdFieldsV1(obj: JsonObject, t: TypeInfo, strip?: FieldSet, drop?: FieldSet): JsonObject | null | undefined {
  try {
    return levelOf(obj, t, strip, drop, false) ?? null;
  } catch (e) {
    if (e instanceof Merged) return undefined;
    throw e;
  }
}

/**
 * FieldsV1 keys of field names, kept: the same few hundred names recur in
 * every object of a kind, and a kept key is one string the engine already
 * knows as a property name, instead of a new one to hash and intern per
 * write. Emptied when full.
 */
const fieldIds = new Map<string, string>();
const fieldIdsLimit = 4096;

function fieldId(name: string): string {
  let id = fieldIds.get(name);
  if (id === undefined) {
    if (fieldIds.size >= fieldIdsLimit) fieldIds.clear();
    fieldIds.set(name, (id = `f:${name}`));
  }
  return id;
}

/**
 * Names sorted as upstream sorts them (by UTF-8 bytes): the engine's own sort
 * (by UTF-16 units) agrees unless a name holds a surrogate pair or a
 * character above U+DFFF, which one look along the result finds; only then
 * the slower comparison sorts again.
 */
function inUpstreamOrder(keys: string[]): string[] {
  const n = keys.length;
  if (n < 2) return keys;
  if (n > 24) keys.sort();
  else {
    // Most levels have a few names: an insertion sort with the engine's own comparison, no call per step.
    for (let i = 1; i < n; i++) {
      const k = keys[i]!;
      let j = i - 1;
      for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
      keys[j + 1] = k;
    }
  }
  for (let i = 1; i < keys.length; i++) if (compareStrings(keys[i - 1]!, keys[i]!) > 0) return keys.sort(compareStrings);
  return keys;
}

/**
 * The FieldsV1 value of a node: a leaf's `{}`, a container's children
 * (after `'.': {}` when the node is itself a `member`, as upstream writes
 * it). Undefined when nothing is left of a node that is no member. Fields
 * are keyed `f:<name>` in both the object and the sets, so the walk of a
 * map makes no path elements.
 */
function levelOf(v: unknown, t: TypeInfo, strip: FieldSet | undefined, drop: FieldSet | undefined, member: boolean): JsonObject | undefined {
  const shape = shapeOf(v, t);
  if (shape.kind === 'map') {
    const o = v as JsonObject;
    const keys = inUpstreamOrder(Object.keys(o));
    let out: JsonObject | undefined;
    for (const k of keys) {
      const id = fieldId(k);
      if (drop?.hasMemberId(id)) continue;
      const below = levelOf(o[k], childOf(t, k), strip?.childById(id), drop?.childById(id), !strip?.hasMemberId(id));
      if (below === undefined) continue;
      // Keys are path elements (`f:…`), never a bare `__proto__`.
      out ??= member ? { '.': {} } : {};
      out[id] = below;
    }
    return out ?? (member ? {} : undefined);
  }
  if (shape.kind === 'list') {
    const itemType = itemsOf(t);
    const seen = new Set<string>();
    const entries: { id: string; pe: PathElement; value: JsonObject }[] = [];
    for (const it of indexItems(v as unknown[], shape.sem, itemType)) {
      if (seen.has(it.id)) throw new Merged();
      seen.add(it.id);
      if (drop?.hasMemberId(it.id)) continue;
      const below = levelOf(it.item, itemType, strip?.childById(it.id), drop?.childById(it.id), !strip?.hasMemberId(it.id));
      if (below !== undefined) entries.push({ id: it.id, pe: it.pe, value: below });
    }
    if (!entries.length) return member ? {} : undefined;
    entries.sort((a, b) => comparePE(a.pe, b.pe));
    const out: JsonObject = member ? { '.': {} } : {};
    // Keys are path elements (`k:…`, `v:…`, `i:…`), never a bare `__proto__`.
    for (const e of entries) out[e.id] = e.value;
    return out;
  }
  return member ? {} : undefined;
}
