// A copy of an object decoded from JSON (a request body, a stored value),
// for a writer that changes it while the original must stay as it was (a
// retried update starts again from the original). structuredClone gives the
// same copy, but goes through V8's serializer: about 4 µs for a 1 KiB
// ConfigMap, where walking the plain objects and arrays takes 0.5.

import { setOwn } from './ownkeys.js';

/** Below this depth the walk recurses; a deeper part is left to structuredClone (no stack to run out of). */
const maxWalkDepth = 64;

/**
 * A deep copy of `value`: plain objects (own enumerable keys, `__proto__`
 * included as an ordinary key) and arrays are copied here; anything else
 * that is an object (a Buffer, a Date) and parts deeper than the walk goes
 * through structuredClone, so the result is what structuredClone gives
 * for JSON-like values (a key whose value is undefined is kept).
 */
export function copyDecoded<T>(value: T): T {
  return copyAt(value, 0) as T;
}

function copyAt(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    // A function is refused by structuredClone, as before.
    return typeof value === 'function' ? structuredClone(value) : value;
  }
  if (depth >= maxWalkDepth) return structuredClone(value);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyAt(value[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyAt((value as Record<string, unknown>)[key], depth + 1));
  return out;
}

/**
 * What `JSON.parse(JSON.stringify(value))` gives for a value decoded from
 * JSON and changed by the server since (a written object), without the text
 * in between: keys whose value is undefined or a function are left out, such
 * an array item becomes null, as do numbers JSON cannot write; anything that
 * is not a plain object or array (a Date, a Buffer) goes through the text.
 */
export function copyAsJson<T>(value: T): T {
  return jsonAt(value, 0) as T;
}

function jsonAt(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= maxWalkDepth) return JSON.parse(JSON.stringify(value));
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      out[i] = item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : jsonAt(item, depth + 1);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.parse(JSON.stringify(value));
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    setOwn(out, key, jsonAt(item, depth + 1));
  }
  return out;
}
