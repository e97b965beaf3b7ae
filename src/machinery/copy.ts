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
