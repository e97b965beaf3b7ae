// An object's metadata as JSON, with the texts of kept FieldsV1 (template.ts)
// written in as they are: a FieldsV1 is a hundred small objects for an
// operator's kind, and JSON.stringify would walk each of them again on every
// write that stores one, though the text never changes.

import { isObject } from '../patch/json.js';
import { keptFieldsV1Text } from './template.js';

/** JSON.stringify(metadata), the same text, cheaper when its managedFields hold a kept FieldsV1. */
export function metadataJson(metadata: Record<string, unknown>): string {
  const entries = metadata.managedFields;
  if (!Array.isArray(entries) || !entries.some((e) => isObject(e) && keptFieldsV1Text(e.fieldsV1) !== undefined)) return JSON.stringify(metadata);
  return objectJson(metadata, (key, value) => (key === 'managedFields' ? `[${entries.map(entryJson).join(',')}]` : JSON.stringify(value)));
}

function entryJson(entry: unknown): string {
  if (!isObject(entry)) return JSON.stringify(entry) ?? 'null';
  return objectJson(entry, (key, value) => (key === 'fieldsV1' ? keptFieldsV1Text(value) ?? JSON.stringify(value) : JSON.stringify(value)));
}

/** An object's JSON with each member's value written by `value` (undefined leaves the member out, as JSON.stringify does). */
function objectJson(o: Record<string, unknown>, value: (key: string, v: unknown) => string | undefined): string {
  let out = '';
  for (const k of Object.keys(o)) {
    const text = value(k, o[k]);
    if (text === undefined) continue;
    out += `${out ? ',' : ''}${JSON.stringify(k)}:${text}`;
  }
  return `{${out}}`;
}
