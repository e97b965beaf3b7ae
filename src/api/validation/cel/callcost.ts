// What one function call costs at run time, as upstream's cost tracker
// charges it: Kubernetes' own table for its libraries first (apiserver's
// library CostEstimator.CallCost), then cel-go's for the standard functions,
// else 1. Sizes are what cel-go calls a value's size: a string's code
// points, a list's or map's entries; anything else counts 1 (the values the
// Kubernetes libraries make, a URL, an IP, a quantity, included).

import { isCelList, isCelMap, type CelValue } from '@bufbuild/cel';
import { isLibraryValue } from './values.js';
import { formatRegexSize } from './format.js';

const stringFactor = 0.1;
const regexFactor = 0.25;

/** cel-go's actualSize. */
export function actualSize(v: unknown): number {
  if (typeof v === 'string') {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (v instanceof Uint8Array) return v.length;
  if ((isCelList(v) || isCelMap(v)) && !isLibraryValue(v)) return v.size;
  return 1;
}

/** Kubernetes' traversalCost: strings by their bytes, containers by their elements. */
function traversalCost(v: unknown): number {
  if (typeof v === 'string') return Math.floor(Buffer.byteLength(v) * stringFactor);
  if (v instanceof Uint8Array) return Math.floor(v.length * stringFactor);
  if (isCelList(v) && !isLibraryValue(v)) { let c = 0; for (const x of v) c += traversalCost(x); return c; }
  if (isCelMap(v) && !isLibraryValue(v)) { let c = 0; for (const [k, x] of v) c += traversalCost(k) + traversalCost(x); return c; }
  return 1;
}

const scaled = (size: number, factor = stringFactor): number => Math.ceil(size * factor);

const nominal = new Set(['serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason', 'error', 'errored',
  'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast',
  'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub']);

/** The fixed cost of one authorization check: two per expression fit the per-call limit. */
export const authorizationCheckCost = 350_000;

/**
 * The cost of calling `name` on `target` (a member call) with `args`, which
 * returned `result`. Upstream passes the target as the first argument.
 */
export function callCost(name: string, target: CelValue | undefined, args: readonly CelValue[], result: unknown): number {
  const a0 = target === undefined ? args[0] : target, a1 = target === undefined ? args[1] : args[0];
  if (name === 'check') return authorizationCheckCost;
  if (nominal.has(name)) return 1;
  switch (name) {
    case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
      return a0 === undefined ? 0 : traversalCost(a0);
    case 'url': case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
    case 'cidr': case 'isIP': case 'isCIDR': case 'quantity': case 'isQuantity':
      return scaled(actualSize(a0));
    case 'ip':
      // A CIDR's ip() reads a field; ip(string) parses.
      return target !== undefined ? 1 : scaled(actualSize(a0));
    case 'replace': case 'split':
      return scaled(actualSize(a0) * 2);
    case 'join':
      return scaled(actualSize(result) * 2);
    case 'find': case 'findAll':
      return scaled(1 + actualSize(a0)) * scaled(actualSize(a1), regexFactor);
    case 'containsIP': case 'containsCIDR': {
      const cidr = actualSize(a0);
      let cost = scaled(cidr * 2);
      if (name === 'containsCIDR') cost += scaled(cidr) + 1;
      if (typeof a1 === 'string') cost += scaled(actualSize(a1));
      return cost;
    }
    case 'sets.contains': case 'sets.intersects':
      return 1 + actualSize(a0) * actualSize(a1);
    case 'sets.equivalent':
      return 1 + 2 * actualSize(a0) * actualSize(a1);
    // cel-go's standard functions.
    case 'startsWith': case 'endsWith':
      return scaled(actualSize(a0));
    case 'bytes': case 'string':
      return (typeof a0 === 'string' && name === 'bytes') || (a0 instanceof Uint8Array && name === 'string') ? scaled(actualSize(a0)) : 1;
    case '@in':
      return isCelList(a1) ? actualSize(a1) : 1;
    case '_==_': case '_!=_':
      return scaled(Math.min(actualSize(a0), actualSize(a1)));
    case '_<_': case '_<=_': case '_>_': case '_>=_':
      return (typeof a0 === 'string' && typeof a1 === 'string') || (a0 instanceof Uint8Array && a1 instanceof Uint8Array)
        ? scaled(Math.min(actualSize(a0), actualSize(a1))) : 1;
    case '_+_':
      return (typeof a0 === 'string' && typeof a1 === 'string') || (a0 instanceof Uint8Array && a1 instanceof Uint8Array)
        ? scaled(actualSize(a0) + actualSize(a1)) : 1;
    case 'validate': {
      // A format's check is costed as a regex of upstream's size for it.
      const regexSize = formatRegexSize(a0);
      return regexSize === undefined ? 1 : scaled(1 + actualSize(a1)) * scaled(regexSize, regexFactor);
    }
    case 'matches':
      return scaled(1 + actualSize(a0)) * scaled(actualSize(a1), regexFactor);
    case 'contains':
      return typeof a0 === 'string' ? scaled(actualSize(a0)) * scaled(actualSize(a1)) : 1;
    default:
      return 1;
  }
}
