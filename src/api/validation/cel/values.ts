// The values the Kubernetes CEL libraries make (a URL, an IP, a quantity, an
// authorizer and its checks): maps with one hidden key naming their kind, so
// equality and `type()` behave as for any map; their methods check the key
// and fail with upstream's `no such overload` otherwise.

import { celMap, isCelMap, type CelMap, type CelValue } from '@bufbuild/cel';
import { JsonMap } from './jsonvalues.js';

const KIND = '\u0000kind';

export function opaque(kind: string, fields: Record<string, unknown>): CelValue {
  return celMap(new Map<string, never>([[KIND, kind as never], ...Object.entries(fields).map(([k, v]) => [k, v as never] as [string, never])]));
}

/** The kind of a value one of the libraries made; undefined for any other value. */
export function libraryKindOf(v: unknown): unknown {
  // A rule's data (the commonest map by far) is never one: no lookup of the hidden key through its property names.
  if (v instanceof JsonMap || !isCelMap(v)) return undefined;
  return (v as CelMap).get(KIND as never);
}

/** Whether `v` is a value one of the libraries made, not a map of the rule's data. */
export function isLibraryValue(v: unknown): boolean {
  return libraryKindOf(v) !== undefined;
}

/** A field of a library value of `kind`; `no such overload` when `v` is another value. */
export function field<T>(v: CelValue, kind: string, name: string): T {
  if (!isCelMap(v) || v.get(KIND) !== kind) throw new Error('no such overload');
  return v.get(name) as T;
}
