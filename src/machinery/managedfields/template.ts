// The shape a create's FieldsV1 was written from, kept per kind: objects of
// one kind mostly come in one shape (the same fields, the same list items),
// and their creates own the same fields. A shape records, along the type,
// what the FieldsV1 walk reads of a value: the keys of each granular map, in
// order, and the identity of each item of a granular list (its key fields'
// values, or its value in a set). Leaves and atomic lists read nothing. An
// object whose walk along the shape finds the same is owned by the same
// FieldsV1, so the create's entry reuses it (frozen, shared by the stored
// objects) instead of writing it again; any other object gets its own, and
// its shape is kept next.

import { deepFreeze } from '../freeze.js';
import { hasOwn } from '../ownkeys.js';
import { isObject, type JsonObject } from '../patch/json.js';
import { childOf, itemsOf, type ListSemantics, type TypeInfo } from '../patch/typeinfo.js';
import { shapeOf } from './typed.js';

type Shape =
  | { kind: 'leaf'; t: TypeInfo }
  | { kind: 'map'; t: TypeInfo; keys: string[]; children: Shape[] }
  | { kind: 'list'; t: TypeInfo; sem: ListSemantics; ids: unknown[]; children: Shape[] };

/** A key field an item does not set (its default names it). */
const absent = Symbol('absent');

/** The identity of a list item as scalars, or undefined when it is not one the walk can compare. */
function identity(item: unknown, sem: ListSemantics): unknown {
  if (sem.relationship === 'map' && sem.keys.length > 0) {
    if (!isObject(item)) return undefined;
    const values: unknown[] = [];
    for (const k of sem.keys) {
      const v = hasOwn(item, k) ? item[k] : absent;
      if (typeof v === 'object' && v !== null) return undefined;
      values.push(v);
    }
    return values;
  }
  return typeof item === 'object' || item === undefined ? undefined : item;
}

function sameIdentity(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a)) return a === b;
  if (!Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The shape of `v` along `t`; undefined when a list item has no scalar identity. */
function shapeBuilt(v: unknown, t: TypeInfo): Shape | undefined {
  const s = shapeOf(v, t);
  if (s.kind === 'map') {
    const o = v as JsonObject;
    const keys = Object.keys(o);
    const children: Shape[] = [];
    for (const k of keys) {
      const c = shapeBuilt(o[k], childOf(t, k));
      if (!c) return undefined;
      children.push(c);
    }
    return { kind: 'map', t, keys, children };
  }
  if (s.kind === 'list') {
    const itemType = itemsOf(t);
    const ids: unknown[] = [];
    const children: Shape[] = [];
    for (const item of v as unknown[]) {
      const id = identity(item, s.sem);
      const c = id === undefined ? undefined : shapeBuilt(item, itemType);
      if (!c) return undefined;
      ids.push(id);
      children.push(c);
    }
    return { kind: 'list', t, sem: s.sem, ids, children };
  }
  return { kind: 'leaf', t };
}

function fits(v: unknown, shape: Shape): boolean {
  const s = shapeOf(v, shape.t);
  if (s.kind !== shape.kind) return false;
  if (shape.kind === 'map') {
    const o = v as JsonObject;
    const keys = Object.keys(o);
    if (keys.length !== shape.keys.length) return false;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== shape.keys[i] || !fits(o[keys[i]!], shape.children[i]!)) return false;
    }
    return true;
  }
  if (shape.kind === 'list') {
    const items = v as unknown[];
    if (items.length !== shape.ids.length) return false;
    for (let i = 0; i < items.length; i++) {
      if (!sameIdentity(identity(items[i], shape.sem), shape.ids[i]) || !fits(items[i], shape.children[i]!)) return false;
    }
    return true;
  }
  return true;
}

interface Kept { strip: unknown; drop: unknown; shape: Shape; fieldsV1: JsonObject | null }

const kept = new WeakMap<TypeInfo, Kept>();

/**
 * The FieldsV1 `write` makes of `obj`, reused from the last object of the
 * same type and options when `obj` has its shape. `write` answers undefined
 * when it cannot decide (nothing is kept then).
 */
export function fieldsV1OfShape(obj: JsonObject, t: TypeInfo, strip: unknown, drop: unknown,
  write: () => JsonObject | null | undefined): JsonObject | null | undefined {
  const last = kept.get(t);
  if (last && last.strip === strip && last.drop === drop && fits(obj, last.shape)) return last.fieldsV1;
  const fieldsV1 = write();
  if (fieldsV1 === undefined) return undefined;
  const shape = shapeBuilt(obj, t);
  if (shape) {
    if (fieldsV1) keptTexts.set(deepFreeze(fieldsV1), JSON.stringify(fieldsV1));
    kept.set(t, { strip, drop, shape, fieldsV1 });
  }
  return fieldsV1;
}

/** The JSON of each kept FieldsV1 (frozen: the text stays true), for the stored bytes (encode.ts). */
const keptTexts = new WeakMap<object, string>();

export function keptFieldsV1Text(fieldsV1: unknown): string | undefined {
  return typeof fieldsV1 === 'object' && fieldsV1 !== null ? keptTexts.get(fieldsV1) : undefined;
}
