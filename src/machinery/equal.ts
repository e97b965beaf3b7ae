import { hasOwn } from './ownkeys.js';

/**
 * Structural equality of JSON values; key order of objects does not matter.
 * Walks with its own stack, so the depth of the values does not matter either.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  const left: unknown[] = [a], right: unknown[] = [b];
  while (left.length > 0) {
    const x = left.pop(), y = right.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ys = y as unknown[];
      if (x.length !== ys.length) return false;
      for (let i = 0; i < x.length; i++) {
        left.push(x[i]);
        right.push(ys[i]);
      }
      continue;
    }
    const xo = x as Record<string, unknown>, yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const k of keys) {
      if (!hasOwn(yo, k)) return false;
      left.push(xo[k]);
      right.push(yo[k]);
    }
  }
  return true;
}
