// CEL's optional values (upstream enables them in validation rules and match
// conditions since 1.28): `optional.of(x)`, `optional.none()`,
// `optional.ofNonZeroValue(x)`, and on a value `hasValue()`, `value()`,
// `orValue(default)` and `or(otherOptional)`. The interpreter makes them from
// `.?f` and `[?k]` and reads them in `[?x]` and `{?k: v}` entries; `oldSelf`
// of a rule with optionalOldSelf is one.

import { celFunc, celMethod, CelScalar, isCelList, isCelMap, isCelUint, type CelFunc, type CelValue } from '@bufbuild/cel';
import { field, isLibraryValue, libraryKindOf, opaque } from './values.js';

const { BOOL, DYN } = CelScalar;

export function optionalOf(value: unknown): CelValue {
  return opaque('optional', { has: true, value: value ?? null });
}

export function optionalNone(): CelValue {
  return opaque('optional', { has: false, value: null });
}

/** For `oldSelf`: the optional of a value that may be absent (undefined). */
export function optionalMaybe(value: unknown): CelValue {
  return value === undefined ? optionalNone() : optionalOf(value);
}

/** What an optional holds: undefined when `v` is no optional, null when it is none, else the value. */
export function optionalValue(v: unknown): { value: unknown } | null | undefined {
  if (libraryKindOf(v) !== 'optional') return undefined;
  return field<boolean>(v as CelValue, 'optional', 'has') ? { value: field<unknown>(v as CelValue, 'optional', 'value') } : null;
}

function isZero(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (isCelUint(v)) return v.value === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if ((isCelList(v) || isCelMap(v)) && !isLibraryValue(v)) return v.size === 0;
  return false;
}

function held(v: CelValue): { value: unknown } | null {
  const o = optionalValue(v);
  if (o === undefined) throw new Error('no such overload');
  return o;
}

export const optionalLib: CelFunc[] = [
  celFunc('optional.of', [DYN], DYN, (v) => optionalOf(v)),
  celFunc('optional.none', [], DYN, () => optionalNone()),
  celFunc('optional.ofNonZeroValue', [DYN], DYN, (v) => (isZero(v) ? optionalNone() : optionalOf(v))),
  celMethod('hasValue', DYN, [], BOOL, function () { return held(this) !== null; }),
  celMethod('value', DYN, [], DYN, function () {
    const o = held(this);
    if (o === null) throw new Error('optional.none() dereference');
    return o.value as CelValue;
  }),
  celMethod('orValue', DYN, [DYN], DYN, function (other) { const o = held(this); return (o === null ? other : o.value) as CelValue; }),
  celMethod('or', DYN, [DYN], DYN, function (other) {
    if (held(this) !== null) return this;
    held(other);
    return other;
  }),
];
