// Walks of a JSON value along its TypeInfo, as server-side apply sees values:
// which path element names each list item, which nodes are leaves (scalars,
// atomic lists and maps), and the set of fields a value holds.

import { hasOwn, setOwn } from '../ownkeys.js';
import { isObject, type JsonObject } from '../patch/json.js';
import {
  childOf, isAtomicMap, isNamedField, itemsOf, listSemantics, untyped, type ListSemantics, type TypeInfo,
} from '../patch/typeinfo.js';
import { FieldSet, SetWriter } from './fieldset.js';
import { fieldPE, keyPE, pathString, peString, serializePE, type Path, type PathElement } from './pathelement.js';

/** How a node is walked: a leaf, a granular map or struct, or a granular (set or map) list. */
export type Shape =
  | { kind: 'leaf' }
  | { kind: 'map' }
  | { kind: 'list'; sem: ListSemantics };

export function shapeOf(v: unknown, t: TypeInfo): Shape {
  if (isObject(v)) {
    if (t.kind === 'untyped') return mapShape;
    if ((t.kind === 'struct' || t.kind === 'map') && !isAtomicMap(t)) return mapShape;
    return leafShape;
  }
  if (Array.isArray(v) && t.kind === 'list') {
    const sem = listSemantics(t);
    return sem.relationship === 'atomic' ? leafShape : { kind: 'list', sem };
  }
  return leafShape;
}

// Shared (never changed): every field of every walk asks for a shape.
const leafShape: Shape = Object.freeze({ kind: 'leaf' });
const mapShape: Shape = Object.freeze({ kind: 'map' });

/** Whether the type is a granular container, whatever the value (null reads as an empty one). */
export function granularShape(t: TypeInfo): Shape {
  if (t.kind === 'untyped') return { kind: 'leaf' };
  if ((t.kind === 'struct' || t.kind === 'map') && !isAtomicMap(t)) return { kind: 'map' };
  if (t.kind === 'list') {
    const sem = listSemantics(t);
    if (sem.relationship !== 'atomic') return { kind: 'list', sem };
  }
  return { kind: 'leaf' };
}

/** Type below one path element. */
export function typeBelow(t: TypeInfo, pe: PathElement): TypeInfo {
  if ('field' in pe) return t.kind === 'list' ? untyped : childOf(t, pe.field);
  return t.kind === 'list' ? itemsOf(t) : untyped;
}

/** The element naming a list item, or an error text (upstream's wording). */
export function itemElement(item: unknown, sem: ListSemantics, itemType: TypeInfo, index: number): PathElement | string {
  if (sem.relationship === 'map' && sem.keys.length > 0) {
    if (item === null) return 'associative list with keys may not have a null element';
    if (!isObject(item)) return 'associative list with keys may not have non-map elements';
    const fields: Array<[string, unknown]> = [];
    for (const name of sem.keys) {
      if (hasOwn(item, name)) fields.push([name, item[name]]);
      else {
        const def = itemType.kind === 'untyped' ? undefined : itemType.field(name)?.default;
        if (def === undefined) return `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`;
        fields.push([name, def]);
      }
    }
    return keyPE(fields);
  }
  if (sem.relationship === 'set' || sem.relationship === 'map') {
    if (isObject(item)) return "associative list without keys has an element that's a map type";
    if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
    if (item === null) return "associative list without keys has an element that's an explicit null";
    return { value: item };
  }
  return { index };
}

export interface IndexedItem { pe: PathElement; id: string; item: unknown; position: number }

/** Items of a granular list with their elements; invalid items are reported and skipped. */
export function indexItems(list: unknown[], sem: ListSemantics, itemType: TypeInfo,
  onError?: (message: string) => void): IndexedItem[] {
  const out: IndexedItem[] = [];
  list.forEach((item, position) => {
    const pe = itemElement(item, sem, itemType, position);
    if (typeof pe === 'string') onError?.(`element ${position}: ${pe}`);
    else out.push({ pe, id: serializePE(pe), item, position });
  });
  return out;
}

/** Ids seen more than once. */
export function duplicateIds(items: IndexedItem[]): Set<string> {
  const seen = new Set<string>(), dups = new Set<string>();
  for (const { id } of items) (seen.has(id) ? dups : seen).add(id);
  return dups;
}

export interface ValidationError { path: Path; message: string }

/**
 * The fields a value sets: leaves, list items, map keys that are not
 * declared struct fields, and empty or null values. Duplicate list items
 * are owned as a whole. With `errors`, invalid items and duplicates are
 * reported (an applied configuration must have neither).
 */
export function toFieldSet(v: unknown, t: TypeInfo, errors?: ValidationError[]): FieldSet {
  const set = new SetWriter();
  walkFields(v, t, [], set, errors);
  return set.set;
}

// `path` is a stack shared by the whole walk: sets copy what they keep.
function walkFields(v: unknown, t: TypeInfo, path: PathElement[], set: SetWriter, errors?: ValidationError[]): void {
  const shape = shapeOf(v, t);
  if (shape.kind === 'leaf') {
    if (path.length > 0) set.insert(path);
    return;
  }
  if (shape.kind === 'map') {
    const obj = v as JsonObject;
    for (const k of Object.keys(obj)) {
      const cv = obj[k];
      path.push(fieldPE(k));
      if (cv === null || (isObject(cv) && Object.keys(cv).length === 0) || !isNamedField(t, k)) set.insert(path);
      walkFields(cv, childOf(t, k), path, set, errors);
      path.pop();
    }
    return;
  }
  const itemType = itemsOf(t);
  const items = indexItems(v as unknown[], shape.sem, itemType,
    (message) => errors?.push({ path: [...path], message }));
  const dups = duplicateIds(items);
  const reported = new Set<string>();
  for (const it of items) {
    path.push(it.pe);
    if (dups.has(it.id)) {
      if (errors && !reported.has(it.id)) errors.push({ path: path.slice(0, -1), message: `duplicate entries for key ${peString(it.pe)}` });
      reported.add(it.id);
    } else {
      walkFields(it.item, itemType, path, set, errors);
    }
    set.insert(path);
    path.pop();
  }
}

/** Upstream's rendering of validation errors of a typed value. */
export function formatValidationErrors(errs: ValidationError[]): string {
  const lines = errs.map((e) => `${pathString(e.path)}: ${e.message}`);
  return lines.length === 1 ? lines[0] : `errors:\n  ${lines.join('\n  ')}`;
}

/**
 * Adds the struct fields that lead to owned fields as members: owning
 * `spec.replicas` keeps `spec`, while a map key is only kept when owned.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: TypeInfo): FieldSet {
  const members = [...set.eachMember()];
  const children: Array<readonly [PathElement, FieldSet]> = [];
  for (const [pe, sub] of set.eachChild()) {
    if ('field' in pe && isNamedField(t, pe.field)) members.push(pe);
    children.push([pe, ensureNamedFieldsAreMembers(sub, typeBelow(t, pe))]);
  }
  return FieldSet.from(members, children);
}

/**
 * Brings a field set up to date with schema changes: paths below a list or
 * map that is now atomic become ownership of the list or map itself.
 * Returns the same set when nothing changes.
 */
export function reconcileWithSchema(set: FieldSet, t: TypeInfo): FieldSet {
  // Every write's every set goes through here, and the schema rarely changed: nothing is built until something does.
  let changed: Map<PathElement, FieldSet | undefined> | undefined; // undefined: the element is now atomic, a member
  set.forEachChild((pe, sub) => {
    const ct = typeBelow(t, pe);
    if (isAtomicType(ct)) (changed ??= new Map()).set(pe, undefined);
    else {
      const r = reconcileWithSchema(sub, ct);
      if (r !== sub) (changed ??= new Map()).set(pe, r);
    }
  });
  if (!changed) return set;
  const now = changed;
  const members = [...set.eachMember()];
  const children: Array<readonly [PathElement, FieldSet]> = [];
  set.forEachChild((pe, sub) => {
    if (!now.has(pe)) children.push([pe, sub]);
    else if (now.get(pe) === undefined) members.push(pe);
    else children.push([pe, now.get(pe)!]);
  });
  return FieldSet.from(members, children);
}

function isAtomicType(t: TypeInfo): boolean {
  if (t.kind === 'list') return listSemantics(t).relationship === 'atomic';
  if (t.kind === 'struct' || t.kind === 'map') return isAtomicMap(t);
  return false;
}

/** Removes the listed members (and what they hold) from a value; emptied containers disappear. */
export function removeItems(v: unknown, set: FieldSet, t: TypeInfo): unknown {
  const shape = shapeOf(v, t);
  if (shape.kind === 'leaf') return isObject(v) || Array.isArray(v) ? undefined : v;
  if (shape.kind === 'map') {
    const obj = v as JsonObject, out: JsonObject = {};
    for (const k of Object.keys(obj)) {
      const pe = fieldPE(k);
      if (set.hasMember(pe)) continue;
      const sub = set.child(pe);
      const nv = sub ? removeItems(obj[k], sub, childOf(t, k)) : obj[k];
      if (nv !== undefined) setOwn(out, k, nv);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  const itemType = itemsOf(t);
  const out: unknown[] = [];
  (v as unknown[]).forEach((item, position) => {
    const pe = itemElement(item, shape.sem, itemType, position);
    if (typeof pe === 'string') {
      out.push(item);
      return;
    }
    if (set.hasMember(pe)) return;
    const sub = set.child(pe);
    const nv = sub ? removeItems(item, sub, itemType) : item;
    if (nv !== undefined) out.push(nv);
  });
  return out.length > 0 ? out : undefined;
}
