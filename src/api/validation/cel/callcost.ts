// What one function call costs at run time, as upstream's cost tracker
// charges it: Kubernetes' own table for its libraries first (apiserver's
// library CostEstimator.CallCost), then cel-go's for the standard functions,
// else 1. Sizes are what cel-go calls a value's size: a string's code
// points, a list's or map's entries; anything else counts 1 (the values the
// Kubernetes libraries make, a URL, an IP, a quantity, included).
//
// The cost is computed from the operands alone, before the call runs, so a
// call the budget cannot pay for never builds its result. And a call that
// can make its result larger than its operands (`format`, `replace`,
// `strings.quote`, list `+`) is charged at least a tenth of the size it will
// make, as string `+` and `join` are upstream: upstream charges those few 1
// and counts on its estimator to refuse a rule that grows a string, but the
// runtime limits must hold whatever the estimate said, or one rule repeating
// `'%s%s'.format([x, x])` fills the heap. Below ten of growth, the charge is
// upstream's.

import { isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';
import { isLibraryValue } from './values.js';
import { formatRegexSize } from './format.js';

const stringFactor = 0.1;
const regexFactor = 0.25;

/** cel-go's actualSize. */
export function actualSize(v: unknown): number {
  if (typeof v === 'string') {
    // Code points: UTF-16 units less one for each surrogate pair (read by index: iterating a string is far slower).
    let n = v.length;
    for (let i = 0; i < v.length - 1; i++) {
      const c = v.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        const d = v.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) { n--; i++; }
      }
    }
    return n;
  }
  if (v instanceof Uint8Array) return v.length;
  if ((isCelList(v) || isCelMap(v)) && !isLibraryValue(v)) return v.size;
  return 1;
}

/**
 * Kubernetes' traversalCost: strings by their bytes, containers by their
 * elements. It stops counting past `budget`: a list grown by `+` (a view of
 * its parts) may have far more elements than memory holds.
 */
function traversalCost(v: unknown, budget: number): number {
  if (typeof v === 'string') return Math.floor(Buffer.byteLength(v) * stringFactor);
  if (v instanceof Uint8Array) return Math.floor(v.length * stringFactor);
  if (isCelList(v) && !isLibraryValue(v)) {
    let c = 0;
    for (const x of v) { c += traversalCost(x, budget - c); if (c > budget) break; }
    return c;
  }
  if (isCelMap(v) && !isLibraryValue(v)) {
    let c = 0;
    for (const [k, x] of v) { c += traversalCost(k, budget - c) + traversalCost(x, budget - c); if (c > budget) break; }
    return c;
  }
  return 1;
}

const scaled = (size: number, factor = stringFactor): number => Math.ceil(size * factor);

/** scaled(actualSize(v)): a string of ten code units or fewer is 1 (0 when empty) without counting its code points. */
const scaledSize = (v: unknown): number => (typeof v === 'string' && v.length <= 10 ? (v.length ? 1 : 0) : scaled(actualSize(v)));

/** The largest size worth measuring when `budget` is left: anything larger costs more than that at a tenth a unit. */
const sizeCap = (budget: number): number => (budget === Infinity ? Infinity : (budget + 1) / stringFactor);

/** At least a tenth of the size `size` a call makes, else upstream's `cost`. */
const growth = (cost: number, size: number): number => Math.max(cost, scaled(size));

/** The length of `join`'s result: the strings and the separators between them (counting stops past `cap`). */
function joinedSize(list: unknown, separator: unknown, cap: number): number {
  if (!isCelList(list)) return 1;
  const sep = typeof separator === 'string' ? separator.length : 0;
  let n = 0, first = true;
  for (const x of list) {
    n += (typeof x === 'string' ? x.length : 1) + (first ? 0 : sep);
    first = false;
    if (n > cap) break;
  }
  return n;
}

/** How long `%s` writes `v`: scalars as they print, lists and maps with their brackets and separators (counting stops past `cap`). */
function renderedSize(v: unknown, cap: number): number {
  if (typeof v === 'string' || v instanceof Uint8Array) return v.length;
  if (typeof v === 'bigint' || typeof v === 'number') return String(v).length;
  if (typeof v === 'boolean') return 5;
  if (isCelUint(v)) return String(v.value).length;
  if (isCelList(v) && !isLibraryValue(v)) {
    let n = 2;
    for (const x of v) { n += renderedSize(x, cap - n) + 2; if (n > cap) break; }
    return n;
  }
  if (isCelMap(v) && !isLibraryValue(v)) {
    let n = 2;
    for (const [k, x] of v) { n += renderedSize(k, cap - n) + renderedSize(x, cap - n) + 4; if (n > cap) break; }
    return n;
  }
  // null, a type, a timestamp or a duration: a few characters.
  return 32;
}

/** How long one clause of `format` writes `v`, at most. */
function clauseSize(verb: string, precision: number | undefined, v: unknown, cap: number): number {
  switch (verb) {
    case 's': case 'd':
      return renderedSize(v, cap);
    case 'f': {
      // The integer part's digits (309 at most), the point, the decimals.
      const whole = typeof v === 'number' && Number.isFinite(v) ? String(Math.trunc(Math.abs(v))).length + 1 : 310;
      return whole + 1 + (precision ?? 6);
    }
    case 'e':
      return 8 + (precision ?? 6);
    // Hex writes two digits a byte.
    case 'x': case 'X':
      return typeof v === 'string' ? 2 * Buffer.byteLength(v) : v instanceof Uint8Array ? 2 * v.length : 17;
    default:
      return 65;
  }
}

/** An upper bound of the length of `format`'s result: its literal text and each clause's argument as the clause writes it. */
function formattedSize(template: unknown, args: unknown, cap: number): number {
  if (typeof template !== 'string' || !isCelList(args)) return 1;
  let n = 0, arg = 0;
  for (let i = template.indexOf('%'), last = 0; n <= cap; i = template.indexOf('%', last)) {
    if (i < 0) { n += Math.max(0, template.length - last); break; }
    n += i - last;
    let j = i + 1, precision: number | undefined;
    if (template[j] === '.') {
      precision = 0;
      while (++j < template.length && template[j]! >= '0' && template[j]! <= '9') precision = Math.min(precision * 10 + Number(template[j]), 1000);
    }
    const verb = template[j] ?? '';
    last = j + 1;
    if (verb === '%') { n++; continue; }
    n += clauseSize(verb, precision, args.get(arg++), cap - n);
  }
  return n;
}

/** The length of `replace`'s result: as Go's strings.Replace, an empty `old` matches before every character and at the end. */
function replacedSize(s: unknown, old: unknown, by: unknown, limit: unknown): number {
  if (typeof s !== 'string' || typeof old !== 'string' || typeof by !== 'string') return 1;
  const max = typeof limit === 'bigint' && limit >= 0n ? Number(limit) : Infinity;
  let count = 0;
  if (old === '') count = Math.min(max, actualSize(s) + 1);
  else for (let i = s.indexOf(old); i >= 0 && count < max; i = s.indexOf(old, i + old.length)) count++;
  return s.length + count * (by.length - old.length);
}

/** The length of `strings.quote`'s result: the quotes, and two characters for each one it escapes. */
function quotedSize(s: unknown): number {
  if (typeof s !== 'string') return 1;
  let escaped = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c < 0x0e) escaped++;
  }
  return s.length + escaped + 2;
}

const nominal = new Set(['serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason', 'error', 'errored',
  'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast',
  'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub']);

/** The fixed cost of one authorization check: two per expression fit the per-call limit. */
export const authorizationCheckCost = 350_000;

/** What one call costs from its operands (the target first, when there is one) and the budget left. */
export type CallCost = (a0: unknown, a1: unknown, a2: unknown, a3: unknown, member: boolean, budget: number) => number;

const one: CallCost = () => 1;
const checkCost: CallCost = () => authorizationCheckCost;
const sizeOfFirst: CallCost = (a0) => scaledSize(a0);

/** The cost rule of function `name`, chosen once per call site (most names cost a constant). */
export function callCostOf(name: string): CallCost {
  if (name === 'check') return checkCost;
  if (nominal.has(name)) return one;
  switch (name) {
    case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
      return (a0, _a1, _a2, _a3, _m, budget) => (a0 === undefined ? 0 : traversalCost(a0, budget));
    case 'url': case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
    case 'cidr': case 'isIP': case 'isCIDR': case 'quantity': case 'isQuantity':
      return sizeOfFirst;
    case 'ip':
      // A CIDR's ip() reads a field; ip(string) parses.
      return (a0, _a1, _a2, _a3, member) => (member ? 1 : scaled(actualSize(a0)));
    case 'replace':
      return (a0, a1, a2, a3) => growth(scaled(actualSize(a0) * 2), replacedSize(a0, a1, a2, a3));
    case 'split':
      return (a0) => scaled(actualSize(a0) * 2);
    case 'join':
      return (a0, a1, _a2, _a3, _m, budget) => scaled(joinedSize(a0, a1, sizeCap(budget)) * 2);
    case 'format':
      return (a0, a1, _a2, _a3, _m, budget) => growth(1, formattedSize(a0, a1, sizeCap(budget)));
    case 'strings.quote':
      return (a0) => growth(1, quotedSize(a0));
    case 'find': case 'findAll':
      return (a0, a1) => scaled(1 + actualSize(a0)) * scaled(actualSize(a1), regexFactor);
    case 'containsIP': case 'containsCIDR':
      return (a0, a1) => {
        const cidr = actualSize(a0);
        let cost = scaled(cidr * 2);
        if (name === 'containsCIDR') cost += scaled(cidr) + 1;
        if (typeof a1 === 'string') cost += scaled(actualSize(a1));
        return cost;
      };
    case 'sets.contains': case 'sets.intersects':
      return (a0, a1) => 1 + actualSize(a0) * actualSize(a1);
    case 'sets.equivalent':
      return (a0, a1) => 1 + 2 * actualSize(a0) * actualSize(a1);
    // cel-go's standard functions.
    case 'startsWith': case 'endsWith':
      return sizeOfFirst;
    case 'bytes': case 'string':
      return (a0) => ((typeof a0 === 'string' && name === 'bytes') || (a0 instanceof Uint8Array && name === 'string') ? scaled(actualSize(a0)) : 1);
    case '@in':
      return (_a0, a1) => (isCelList(a1) ? actualSize(a1) : 1);
    case '_==_': case '_!=_':
      return (a0, a1) => {
        // Strings of ten code units or fewer cost 1 (0 when one is empty) without counting their code points.
        if (typeof a0 === 'string' && typeof a1 === 'string' && (a0.length <= 10 || a1.length <= 10)) return a0.length && a1.length ? 1 : 0;
        return scaled(Math.min(actualSize(a0), actualSize(a1)));
      };
    case '_<_': case '_<=_': case '_>_': case '_>=_':
      return (a0, a1) => ((typeof a0 === 'string' && typeof a1 === 'string') || (a0 instanceof Uint8Array && a1 instanceof Uint8Array)
        ? scaled(Math.min(actualSize(a0), actualSize(a1))) : 1);
    case '_+_':
      return (a0, a1) => {
        if ((typeof a0 === 'string' && typeof a1 === 'string') || (a0 instanceof Uint8Array && a1 instanceof Uint8Array)) return scaled(actualSize(a0) + actualSize(a1));
        // Appending one list to another adds the smaller one's size at least: what a doubling adds (a comprehension's one element costs 1).
        return isCelList(a0) && isCelList(a1) ? growth(1, Math.min(a0.size, a1.size)) : 1;
      };
    case 'validate':
      // A format's check is costed as a regex of upstream's size for it.
      return (a0, a1) => {
        const regexSize = formatRegexSize(a0);
        return regexSize === undefined ? 1 : scaled(1 + actualSize(a1)) * scaled(regexSize, regexFactor);
      };
    case 'matches':
      return (a0, a1) => scaled(1 + actualSize(a0)) * scaled(actualSize(a1), regexFactor);
    case 'contains':
      return (a0, a1) => (typeof a0 === 'string' ? scaledSize(a0) * scaledSize(a1) : 1);
    default:
      return one;
  }
}

/**
 * The cost of calling `name` on `target` (a member call) with `args`, before
 * the call runs; `budget` is what is left to spend (sizes beyond what it
 * could pay for are not measured). Upstream passes the target as the first
 * argument.
 */
export function callCost(name: string, target: CelValue | undefined, args: readonly CelValue[], budget = Infinity): number {
  const member = target !== undefined;
  return callCostOf(name)(member ? target : args[0], member ? args[0] : args[1], member ? args[1] : args[2], member ? args[2] : args[3], member, budget);
}
