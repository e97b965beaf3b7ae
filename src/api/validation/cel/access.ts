// Reading into CEL values as a rule reads its data: field selection and
// indexing with CEL's errors (`no such key`, `index out of bounds`), and the
// optional chaining of cel-go: selecting into an optional stays optional,
// an absent field (or key, or index) makes an empty optional.

import { celError, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { JsonMap } from './jsonvalues.js';
import { optionalNone, optionalOf, optionalValue } from './optional.js';

export const noSuchOverload = (id: number) => celError('no such overload', id);

export function selectField(id: number, o: unknown, field: string): unknown {
  // The rule's own data, the common case: no optional to look through.
  if (o instanceof JsonMap) {
    const v = o.get(field);
    return v === undefined ? celError(`no such key: ${field}`, id) : v;
  }
  const opt = optionalValue(o);
  if (opt === null) return o;
  if (opt !== undefined) {
    if (!isCelMap(opt.value)) return celError(`no such key: ${field}`, id);
    const v = opt.value.get(field);
    return v === undefined ? optionalNone() : optionalOf(v);
  }
  if (!isCelMap(o)) return noSuchOverload(id);
  const v = o.get(field);
  return v === undefined ? celError(`no such key: ${field}`, id) : v;
}

export function indexValue(id: number, o: unknown, k: unknown, optional: boolean): unknown {
  const opt = optionalValue(o);
  if (opt === null) return o;
  const inOptional = opt !== undefined;
  const base = inOptional ? opt.value : o;
  let v: unknown;
  if (isCelList(base)) {
    const i = typeof k === 'bigint' ? Number(k) : isCelUint(k) ? Number(k.value) : typeof k === 'number' && Number.isInteger(k) ? k : NaN;
    if (Number.isNaN(i)) return noSuchOverload(id);
    v = i >= 0 && i < base.size ? base.get(i) : undefined;
    if (v === undefined && !optional && !inOptional) return celError(`index out of bounds: ${i}`, id);
  } else if (isCelMap(base)) {
    v = base.get(k as string);
    if (v === undefined && !optional && !inOptional) return celError(`no such key: ${String(k)}`, id);
  } else {
    return inOptional ? celError(`no such key: ${String(k)}`, id) : noSuchOverload(id);
  }
  if (!optional && !inOptional) return v;
  return v === undefined ? optionalNone() : optionalOf(v);
}
