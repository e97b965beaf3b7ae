// The two value operations of server-side apply: merging an applied
// configuration into the live object, and comparing two versions of an object
// to find the fields added, modified and removed.

import { deepEqual } from '../equal.js';
import { hasOwn, ownValue, setOwn } from '../ownkeys.js';
import { isObject, type JsonObject } from '../patch/json.js';
import { childOf, itemsOf, type TypeInfo } from '../patch/typeinfo.js';
import { FieldSet, SetWriter } from './fieldset.js';
import { fieldPE, type PathElement } from './pathelement.js';
import { duplicateIds, granularShape, indexItems, shapeOf, type IndexedItem, type Shape } from './typed.js';

function isEmptyContainer(v: unknown): boolean {
  return v === null || v === undefined || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

/**
 * The shape both sides are walked with: a granular container when either
 * side is one and the other is one too, empty or null (null reads as empty).
 */
function commonShape(lhs: unknown, rhs: unknown, t: TypeInfo): Shape {
  const sl = shapeOf(lhs, t), sr = shapeOf(rhs, t);
  if (sl.kind !== 'leaf' && sr.kind === sl.kind) return sl;
  const g = sl.kind !== 'leaf' ? sl : sr.kind !== 'leaf' ? sr : granularShape(t);
  if (g.kind === 'leaf') return g;
  const fits = (v: unknown, s: Shape) => v === null || v === undefined || shapeOf(v, t).kind === s.kind;
  return fits(lhs, g) && fits(rhs, g) ? g : { kind: 'leaf' };
}

/**
 * Merges an applied configuration into the live value: leaves take the
 * configuration's value, granular maps merge key by key, granular lists item
 * by item. Live list items keep their place; the configuration orders the
 * items it names and places its new items after the ones before them.
 */
export function mergeValues(lhs: unknown, rhs: unknown, t: TypeInfo): unknown {
  if (rhs === undefined) return lhs;
  if (lhs === undefined) return rhs;
  const shape = commonShape(lhs, rhs, t);
  if (shape.kind === 'leaf') return rhs;
  // Both empty (or null): keep the configuration's form of emptiness.
  if (isEmptyContainer(lhs) && isEmptyContainer(rhs)) return rhs;
  // A null configuration does not clear a granular container.
  if (rhs === null) return lhs;
  if (shape.kind === 'map') {
    const l = isObject(lhs) ? lhs : {}, r = rhs as JsonObject, out: JsonObject = {};
    for (const k of Object.keys(l)) setOwn(out, k, hasOwn(r, k) ? mergeValues(l[k], r[k], childOf(t, k)) : l[k]);
    for (const k of Object.keys(r)) if (!hasOwn(l, k)) setOwn(out, k, r[k]);
    return out;
  }
  const itemType = itemsOf(t);
  const l = indexItems(Array.isArray(lhs) ? lhs : [], shape.sem, itemType);
  const r = indexItems(rhs as unknown[], shape.sem, itemType);
  return mergeLists(l, r, Array.isArray(lhs) ? lhs : [], itemType);
}

/** Item-by-item list merge following upstream's interleaving of live and applied items. */
function mergeLists(l: IndexedItem[], r: IndexedItem[], lhsRaw: unknown[], itemType: TypeInfo): unknown[] {
  const lDups = duplicateIds(l);
  const lById = new Map(l.map((it) => [it.id, it]));
  const rById = new Map(r.map((it) => [it.id, it]));
  // Live counterpart of an applied item; duplicated live items are replaced, not merged.
  const liveOf = (id: string) => (lDups.has(id) ? undefined : lById.get(id)?.item);
  const shared = r.filter((it) => lById.has(it.id)).map((it) => it.id);
  let next = 0;
  const nextShared = () => (next < shared.length ? shared[next] : undefined);
  const merged = new Set<string>();
  const out: unknown[] = [];
  // Items the walk could not name are kept where they were.
  const named = new Set(l.map((it) => it.position));
  const unnamed = lhsRaw.map((_, i) => i).filter((i) => !named.has(i));
  let li = 0, ri = 0, ui = 0;
  const emitUnnamedBefore = (position: number) => {
    while (ui < unnamed.length && unnamed[ui] < position) out.push(lhsRaw[unnamed[ui++]]);
  };
  while (li < l.length || ri < r.length) {
    if (li < l.length) emitUnnamedBefore(l[li].position);
    if (li < l.length && ri < r.length) {
      if (l[li].id === r[ri].id) {
        merged.add(r[ri].id);
        out.push(mergeValues(liveOf(r[ri].id), r[ri].item, itemType));
        li++; ri++; next++;
        continue;
      }
      const shr = nextShared();
      if (rById.has(l[li].id) && shr !== undefined && shr !== l[li].id) {
        li++;
        continue;
      }
    }
    if (li < l.length) {
      const id = l[li].id;
      if (!rById.has(id)) {
        out.push(l[li].item);
        li++;
        continue;
      }
      if (merged.has(id)) {
        li++;
        continue;
      }
    }
    if (ri < r.length) {
      const id = r[ri].id;
      merged.add(id);
      out.push(mergeValues(liveOf(id), r[ri].item, itemType));
      ri++;
      if (nextShared() === id) next++;
    }
  }
  for (; ui < unnamed.length; ui++) out.push(lhsRaw[unnamed[ui]]);
  return out;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** The fields added, modified and removed from `lhs` to `rhs`. */
export function compareValues(lhs: unknown, rhs: unknown, t: TypeInfo): Comparison {
  const c: Writers = { added: new SetWriter(), modified: new SetWriter(), removed: new SetWriter() };
  walkCompare(lhs, rhs, t, [], c);
  return { added: c.added.set, modified: c.modified.set, removed: c.removed.set };
}

type Writers = { [K in keyof Comparison]: SetWriter };

function walkCompare(lhs: unknown, rhs: unknown, t: TypeInfo, path: PathElement[], c: Writers): void {
  if (lhs === undefined && rhs === undefined) return;
  if (lhs === undefined) return collect(rhs, t, path, c.added);
  if (rhs === undefined) return collect(lhs, t, path, c.removed);
  const shape = commonShape(lhs, rhs, t);
  if (shape.kind === 'leaf' || (isEmptyContainer(lhs) && isEmptyContainer(rhs))) {
    if (!deepEqual(lhs, rhs) && path.length > 0) c.modified.insert(path);
    return;
  }
  if (shape.kind === 'map') {
    const l = isObject(lhs) ? lhs : {}, r = isObject(rhs) ? rhs : {};
    for (const k of Object.keys(l)) walkChild(l[k], ownValue(r, k), childOf(t, k), path, fieldPE(k), c);
    for (const k of Object.keys(r)) if (!hasOwn(l, k)) walkChild(undefined, r[k], childOf(t, k), path, fieldPE(k), c);
    return;
  }
  const itemType = itemsOf(t);
  const l = indexItems(Array.isArray(lhs) ? lhs : [], shape.sem, itemType);
  const r = indexItems(Array.isArray(rhs) ? rhs : [], shape.sem, itemType);
  const group = (items: IndexedItem[]) => {
    const m = new Map<string, IndexedItem[]>();
    for (const it of items) {
      const g = m.get(it.id);
      if (g) g.push(it);
      else m.set(it.id, [it]);
    }
    return m;
  };
  const lg = group(l), rg = group(r);
  for (const id of rg.keys()) if (!lg.has(id)) lg.set(id, []);
  for (const [id, lItems] of lg) {
    const ls = lItems.length > 0 ? lItems : undefined, rs = rg.get(id);
    const pe = (ls ?? rs)![0].pe;
    if ((ls && ls.length > 1) || (rs && rs.length > 1)) {
      // Duplicated items are compared as wholes.
      const lv = ls?.map((x) => x.item), rv = rs?.map((x) => x.item);
      const itemPath = [...path, pe];
      if (!lv) c.added.insert(itemPath);
      else if (!rv) c.removed.insert(itemPath);
      else if (!deepEqual(lv, rv)) c.modified.insert(itemPath);
      continue;
    }
    walkChild(ls?.[0].item, rs?.[0].item, itemType, path, pe, c);
  }
}

// `path` is a stack shared by the walk: sets copy what they keep.
function walkChild(lhs: unknown, rhs: unknown, t: TypeInfo, path: PathElement[], pe: PathElement, c: Writers): void {
  path.push(pe);
  walkCompare(lhs, rhs, t, path, c);
  path.pop();
}

/** Every node of a value that appeared or disappeared, containers included. */
function collect(v: unknown, t: TypeInfo, path: PathElement[], set: SetWriter): void {
  if (path.length > 0) set.insert(path);
  const shape = shapeOf(v, t);
  if (shape.kind === 'map') {
    const obj = v as JsonObject;
    for (const k of Object.keys(obj)) {
      path.push(fieldPE(k));
      collect(obj[k], childOf(t, k), path, set);
      path.pop();
    }
  } else if (shape.kind === 'list') {
    const itemType = itemsOf(t);
    for (const it of indexItems(v as unknown[], shape.sem, itemType)) {
      path.push(it.pe);
      collect(it.item, itemType, path, set);
      path.pop();
    }
  }
}
