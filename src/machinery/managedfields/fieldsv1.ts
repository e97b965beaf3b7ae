// The FieldsV1 wire form of a field set: a JSON object whose keys are path
// elements (`f:`, `k:`, `v:`, `i:`); `{}` marks a member, a nested object
// holds children, and `.` inside it marks that the element is a member too.

import { ownValue } from '../ownkeys.js';
import { isObject, type JsonObject } from '../patch/json.js';
import { FieldSet } from './fieldset.js';
import { parsePE, serializePE } from './pathelement.js';

/** Serializes a set, elements in upstream's order. */
export function toFieldsV1(set: FieldSet): JsonObject {
  return emit(set, false);
}

function emit(set: FieldSet, includeSelf: boolean): JsonObject {
  const out: JsonObject = {};
  if (includeSelf) out['.'] = {};
  // Keys are path elements (`f:…`, `k:…`), never a bare `__proto__`.
  for (const e of set.levelInOrder()) out[e.id] = e.sub ? emit(e.sub, e.member) : {};
  return out;
}

/** Parses FieldsV1; throws an Error on malformed input. */
export function fromFieldsV1(v: unknown): FieldSet {
  if (!isObject(v)) throw new Error('FieldsV1 must be a JSON object');
  const set = new FieldSet();
  parseInto(v, set);
  return set;
}

/** Builds the level of `set` that `obj` describes (its `.` marks the parent's element, read there). */
function parseInto(obj: JsonObject, set: FieldSet): void {
  for (const k of Object.keys(obj)) {
    if (k === '.') continue;
    const pe = parsePE(k);
    const sub = ownValue(obj, k);
    if (!isObject(sub)) throw new Error(`FieldsV1 value of ${k} must be an object`);
    let self = false, below = false;
    for (const key of Object.keys(sub)) {
      if (key === '.') self = true;
      else below = true;
    }
    // A field's key is already its element's key; others (`k:` JSON) are written again in canonical form.
    const id = k.startsWith('f:') ? k : serializePE(pe);
    if (self || !below) set.addMember(pe, id);
    // Anything beside `.` names a member or a child below, so the child is never empty.
    if (below) parseInto(sub, set.childSet(pe, id));
  }
}
