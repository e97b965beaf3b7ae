// RFC 7386 JSON merge patch, as upstream's library applies it: null removes a
// key, objects merge recursively, anything else replaces; values added where
// nothing (or null) was lose their null members. The result is no larger than
// the document and the patch together, and nests no deeper than either.

import { tooDeep, valueExceedsDepth } from '../limits.js';
import { ownValue, setOwn } from '../ownkeys.js';
import { badPatch } from './errors.js';
import { clone, isObject, type JsonObject } from './json.js';

/** Applies a merge patch to a copy of `doc`. The patch must be a JSON object (400 otherwise). */
export function applyMergePatch(doc: unknown, patch: unknown): JsonObject {
  if (valueExceedsDepth(patch)) throw tooDeep();
  if (!isObject(patch)) throw badPatch('Invalid JSON Patch');
  const target = isObject(doc) ? clone(doc) : {};
  mergeInto(target, patch);
  return target;
}

function mergeInto(target: JsonObject, patch: JsonObject): void {
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete target[key];
      continue;
    }
    const current = ownValue(target, key);
    if (isObject(current) && isObject(value)) mergeInto(current, value);
    else if (isObject(current)) setOwn(target, key, clone(value));
    else setOwn(target, key, pruneNulls(clone(value)));
  }
}

/** Drops null members of objects, at any depth (nulls directly inside arrays stay). */
function pruneNulls<T>(v: T): T {
  if (Array.isArray(v)) {
    for (const item of v) pruneNulls(item);
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else pruneNulls(v[k]);
    }
  }
  return v;
}
