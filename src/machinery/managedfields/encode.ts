// An object's metadata as JSON, with the texts of kept FieldsV1 (template.ts)
// written in as they are: a FieldsV1 is a hundred small objects for an
// operator's kind, and JSON.stringify would walk each of them again on every
// write that stores one, though the text never changes.

import { isObject } from '../patch/json.js';
import { setOwn } from '../ownkeys.js';
import { keptFieldsV1Text } from './template.js';

/** ObjectMeta's members in the order of upstream's Go type (and so of its JSON). */
const metadataOrder = [
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
];
const metadataRank = new Map(metadataOrder.map((k, i) => [k, i]));

/** Whether the members are in upstream's order already (unknown ones last): then nothing is reordered. */
function inOrder(keys: string[]): boolean {
  let last = -1;
  for (const k of keys) {
    const rank = metadataRank.get(k) ?? metadataOrder.length;
    if (rank < last) return false;
    last = rank;
  }
  return true;
}

/** The members of `metadata` in upstream's order; the object itself when they are already. */
function ordered(metadata: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(metadata);
  if (inOrder(keys)) return metadata;
  const out: Record<string, unknown> = {};
  const rank = (k: string) => metadataRank.get(k) ?? metadataOrder.length;
  for (const k of keys.sort((a, b) => rank(a) - rank(b))) setOwn(out, k, metadata[k]);
  return out;
}

/** JSON.stringify(metadata) in upstream's member order, cheaper when its managedFields hold a kept FieldsV1. */
export function metadataJson(metadata: Record<string, unknown>): string {
  const meta = ordered(metadata);
  const entries = meta.managedFields;
  if (!Array.isArray(entries) || !entries.some((e) => isObject(e) && keptFieldsV1Text(e.fieldsV1) !== undefined)) return JSON.stringify(meta);
  return objectJson(meta, (key, value) => (key === 'managedFields' ? `[${entries.map(entryJson).join(',')}]` : JSON.stringify(value)));
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
