// How one call site of a plan calls its function. The library finds the
// overload of every call by trying each of the name's overloads in turn,
// computing the type of each argument and comparing it with the overload's
// (a list's type is a new object each time): for `!`, `==` or `contains` on
// primitives that search is most of the call, and the rules of a kind such
// as Gateway API's HTTPRoute make a thousand such calls an object. The
// interpreter answers those primitive cases directly (`directCall`, exactly
// as the library's standard overloads answer them, with no array of
// arguments made), and otherwise (`siteCall`) tries the overload the
// library picked for the same argument types before, then the library's
// whole search.

import { isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';
import { actualSize } from './callcost.js';

/** One overload, or a name's group of them, as the library's function registry hands them out. */
export interface Callable {
  call(id: number, target: CelValue | undefined, args: CelValue[]): unknown;
}
export type Overloads = Callable & Partial<Iterable<Callable>>;

/**
 * The answer of the library's standard overload for primitive operands (the
 * target first, when there is one); undefined where another overload (or
 * none) decides.
 */
export type Direct = (x0: unknown, x1: unknown) => unknown;

const bothOf = (a: unknown, b: unknown, type: 'string' | 'bigint' | 'number' | 'boolean'): boolean => typeof a === type && typeof b === type;
/** Operands the standard relations compare with JavaScript's own operators. */
const ordered = (a: unknown, b: unknown): boolean => bothOf(a, b, 'bigint') || bothOf(a, b, 'string') || bothOf(a, b, 'number');
/** Operands whose CEL equality is JavaScript's strict equality (NaN unequal to itself in both). */
const sameScalar = (a: unknown, b: unknown): boolean => typeof a === typeof b && (typeof a === 'string' || typeof a === 'bigint' || typeof a === 'boolean' || typeof a === 'number');

function sizeOf(v: unknown): unknown {
  if (typeof v === 'string') return BigInt(actualSize(v));
  return isCelList(v) || isCelMap(v) ? BigInt(v.size) : undefined;
}

/** The direct answer of function `name` with one or two operands (`member`: the first is its target), if it has one. */
export function directCall(name: string, member: boolean, arity: number): Direct | undefined {
  if (member) {
    if (arity === 0 && name === 'size') return (t) => sizeOf(t);
    if (arity !== 1) return undefined;
    switch (name) {
      case 'contains': return (t, a) => (bothOf(t, a, 'string') ? (t as string).includes(a as string) : undefined);
      case 'startsWith': return (t, a) => (bothOf(t, a, 'string') ? (t as string).startsWith(a as string) : undefined);
      case 'endsWith': return (t, a) => (bothOf(t, a, 'string') ? (t as string).endsWith(a as string) : undefined);
      default: return undefined;
    }
  }
  if (arity === 1) {
    if (name === '!_') return (a) => (typeof a === 'boolean' ? !a : undefined);
    if (name === 'size') return (a) => sizeOf(a);
    return undefined;
  }
  if (arity !== 2) return undefined;
  switch (name) {
    case '_==_': return (a, b) => (sameScalar(a, b) ? a === b : undefined);
    case '_!=_': return (a, b) => (sameScalar(a, b) ? a !== b : undefined);
    case '_<_': return (a, b) => (ordered(a, b) ? (a as number) < (b as number) : undefined);
    case '_<=_': return (a, b) => (ordered(a, b) ? (a as number) <= (b as number) : undefined);
    case '_>_': return (a, b) => (ordered(a, b) ? (a as number) > (b as number) : undefined);
    case '_>=_': return (a, b) => (ordered(a, b) ? (a as number) >= (b as number) : undefined);
    default: return undefined;
  }
}

/**
 * What decides which overload takes a value: its CEL type, as a small code
 * (the library computes the type itself per overload tried). Undefined for
 * values whose type needs more than its kind (messages, type values).
 */
function typeCode(v: unknown): number | undefined {
  switch (typeof v) {
    case 'bigint': return 1;
    case 'boolean': return 2;
    case 'number': return 3;
    case 'string': return 4;
    case 'object':
      if (v === null) return 5;
      if (v instanceof Uint8Array) return 6;
      if (isCelList(v)) return 7;
      if (isCelMap(v)) return 8;
      if (isCelUint(v)) return 9;
      return undefined;
    default: return undefined;
  }
}

/**
 * The call of `fn` at one site: (target, args) to the result, undefined
 * when no overload takes the arguments, as the library's own call. The
 * overload the library picks (the first that takes the arguments' types)
 * is remembered per combination of types; values of other kinds, and an
 * overload that declines after all, take the library's whole road.
 */
export function siteCall(fn: Overloads, arity: number): (id: number, target: CelValue | undefined, args: CelValue[]) => unknown {
  const overloads = fn[Symbol.iterator] && arity <= 3 ? [...(fn as Iterable<Callable>)] : undefined;
  const chosen = new Map<number, Callable>();
  const search = (id: number, target: CelValue | undefined, args: CelValue[]): unknown => {
    let key: number | undefined = overloads ? (target === undefined ? 0 : typeCode(target)) : undefined;
    for (let i = 0; i < args.length && key !== undefined; i++) {
      const code = typeCode(args[i]);
      key = code === undefined ? undefined : key * 10 + code;
    }
    if (key === undefined) return fn.call(id, target, args);
    const known = chosen.get(key);
    if (known) return known.call(id, target, args) ?? fn.call(id, target, args);
    for (const o of overloads!) {
      const r = o.call(id, target, args);
      if (r !== undefined) { chosen.set(key, o); return r; }
    }
    return undefined;
  };
  return search;
}
