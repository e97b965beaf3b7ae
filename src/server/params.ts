// Query parameters read as upstream's parameter codec reads them, so every
// client (kubectl, client-go, the Python client's `watch=True`) means the same.

import { errors } from '../machinery/errors.js';

/**
 * A boolean parameter: absent is undefined; `0` and `false` (any case) are
 * false; every other value, the empty one included, is true.
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const int64Max = 2n ** 63n - 1n;
const int64Min = -(2n ** 63n);

/**
 * An integer parameter (int64, as upstream declares them): absent or empty
 * is undefined; not an integer, or outside int64, is a 400. Values beyond
 * what a JavaScript number holds exactly are clamped there: they mean
 * "unbounded" to every parameter that takes them.
 */
export function integerParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw errors.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be an integer`);
  const big = BigInt(v);
  if (big > int64Max || big < int64Min) throw errors.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: value out of range`);
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(big)));
}
