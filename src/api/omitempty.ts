// Empty maps and lists a built-in kind's object leaves out, as upstream's
// typed encoding does: its Go types mark them `omitempty`, so after a
// strategic merge patch that removes every annotation, or a write of
// `subsets: []`, the object holds no `annotations` and no `subsets` at all.
// The fields upstream writes even when empty are its required ones (no
// omitempty), and those are ours too; structs are never dropped (an empty
// selector selects everything). Custom resources keep what they were sent,
// as upstream's unstructured objects do.

import { resolve, type Schema } from './schema.js';
import { hasOwn } from '../machinery/ownkeys.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Removes from `obj` (in place) the empty maps and lists `schema` does not require; answers `obj`. */
export function dropEmptyCollections<T>(obj: T, schema: Schema): T {
  walk(obj, resolve(schema), 0);
  return obj;
}

/** Objects nest far less than this in any built-in kind; deeper values were refused when decoded. */
const maxDepth = 64;

function walk(value: unknown, schema: Schema, depth: number): void {
  if (depth > maxDepth || schema.preserveUnknownFields || schema.embeddedResource) return;
  if (Array.isArray(value)) {
    const items = schema.items && resolve(schema.items);
    if (items) for (const item of value) walk(item, items, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  const props = schema.properties;
  if (!props) {
    // A map: its values may be structs or lists of their own.
    const values = schema.additionalProperties && resolve(schema.additionalProperties);
    if (values) for (const k of Object.keys(value)) walk(value[k], values, depth + 1);
    return;
  }
  const required = schema.required;
  for (const k of Object.keys(value)) {
    if (!hasOwn(props, k)) continue;
    const field = resolve(props[k]!);
    const v = value[k];
    if (isEmptyCollection(v, field) && !required?.includes(k)) delete value[k];
    else walk(v, field, depth + 1);
  }
}

/** An empty list, or an empty map (an object whose schema names no fields: a struct is never empty here). */
function isEmptyCollection(v: unknown, field: Schema): boolean {
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && field.type === 'object' && !field.properties && field.additionalProperties !== undefined && Object.keys(v).length === 0;
}
