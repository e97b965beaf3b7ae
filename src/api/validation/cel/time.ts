// Timestamps and durations, and CEL equality, without the library's
// evaluation context. @bufbuild/cel's own functions that make a timestamp or
// a duration (`timestamp('…')`, `duration('1h')`, `+` and `-` on them) return
// a bare protobuf message that its call wrapper turns into a CEL value by
// looking the type up in the registry of the evaluation under way, and its
// `==` compares messages with that registry: both read a context only the
// library's own planner sets (from a module it does not export). These
// replace those overloads (same names and signatures, so the library's
// resolver keeps ours) with the same answers and messages, building the
// reflected message directly from the schema, so nothing reads a context.

import { celFunc, CelScalar, isCelList, isCelMap, isCelType, isCelUint, listType, objectType, type CelFunc, type CelValue } from '@bufbuild/cel';
import { create, equals as equalsMessage, fromJson } from '@bufbuild/protobuf';
import { isReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import { DurationSchema, timestampFromMs, TimestampSchema, type Duration, type Timestamp } from '@bufbuild/protobuf/wkt';

const { BOOL, DYN, INT, STRING } = CelScalar;
const TIMESTAMP = objectType(TimestampSchema);
const DURATION = objectType(DurationSchema);

/** A CEL timestamp of `seconds` since the epoch and `nanos`. */
export function celTimestamp(seconds: bigint, nanos: number): CelValue {
  return reflect(TimestampSchema, create(TimestampSchema, { seconds, nanos })) as unknown as CelValue;
}

/** A CEL duration of `total` nanoseconds. */
export function celDuration(total: bigint): CelValue {
  const seconds = total / oneSecond;
  return reflect(DurationSchema, create(DurationSchema, { seconds, nanos: Number(total - seconds * oneSecond) })) as unknown as CelValue;
}

const oneSecond = 1_000_000_000n;
// The library's ranges: timestamps of years 1 to 9999, durations of a signed 64-bit count of nanoseconds.
const maxTimestampSeconds = 253402300799n;
const minTimestampSeconds = -62135596800n;
const maxDurationNanos = 9223372036854775807n;
const minDurationNanos = -9223372036854775808n;

function timestampOf(s: bigint, ns: bigint): CelValue {
  const total = s * oneSecond + ns;
  // Nanos stay positive: a negative remainder borrows a second.
  const borrow = total % oneSecond < 0n ? 1n : 0n;
  const seconds = total / oneSecond - borrow;
  if (seconds > maxTimestampSeconds || seconds < minTimestampSeconds) throw new Error('timestamp out of range');
  return celTimestamp(seconds, Number(total % oneSecond + borrow * oneSecond));
}

function durationOf(s: bigint, ns: bigint): CelValue {
  const total = s * oneSecond + ns;
  if (total > maxDurationNanos || total < minDurationNanos) throw new Error('duration out of range');
  return celDuration(total);
}

const unitNanos: Record<string, bigint> = { ns: 1n, us: 1_000n, 'µs': 1_000n, ms: 1_000_000n, s: oneSecond, m: 60n * oneSecond, h: 3600n * oneSecond };
const durationPart = /^(\d*)(?:\.(\d*))?(ns|us|µs|ms|s|m|h)/;

/** The library's duration syntax: an optional sign, then numbers with units (`1h30m`, `1.5s`), or a bare zero. */
function parseDuration(text: string): CelValue {
  const bad = (why: string) => new Error(`Failed to parse duration: ${why}`);
  if (text.length > 128) throw bad('duration string exceeds 128 characters');
  if (/^[-+]?0$/.test(text)) return durationOf(0n, 0n);
  const sign = text[0] === '-' ? -1n : 1n;
  let rest = text[0] === '-' || text[0] === '+' ? text.slice(1) : text;
  let total = 0n;
  while (rest.length > 0) {
    const m = durationPart.exec(rest);
    if (!m || (m[1] === '' && !m[2])) throw bad('invalid syntax');
    const [all, whole, fraction, unit] = m;
    const per = unitNanos[unit!]!;
    total += BigInt(whole || '0') * per;
    if (fraction) total += (BigInt(fraction) * per) / 10n ** BigInt(fraction.length);
    rest = rest.slice(all.length);
  }
  return durationOf(0n, sign * total);
}

type Time = { message: Timestamp | Duration };
const parts = (v: unknown): Timestamp | Duration => (v as Time).message;

/** CEL equality, as the library's: numbers across int, uint and double, containers by their entries, messages by their fields. */
export function celEquals(lhs: unknown, rhs: unknown): boolean {
  if (lhs === rhs) return true;
  if (isCelUint(lhs)) lhs = lhs.value;
  if (isCelUint(rhs)) rhs = rhs.value;
  if ((typeof lhs === 'number' || typeof lhs === 'bigint') && (typeof rhs === 'number' || typeof rhs === 'bigint')) return lhs == rhs;
  if (lhs instanceof Uint8Array) return rhs instanceof Uint8Array && lhs.length === rhs.length && lhs.every((b, i) => b === rhs[i]);
  if (isCelList(lhs)) {
    if (!isCelList(rhs) || lhs.size !== rhs.size) return false;
    for (let i = 0; i < lhs.size; i++) if (!celEquals(lhs.get(i), rhs.get(i))) return false;
    return true;
  }
  if (isCelMap(lhs)) {
    if (!isCelMap(rhs) || lhs.size !== rhs.size) return false;
    for (const [k, v] of lhs) {
      const other = rhs.get(k as never);
      if (other === undefined || !celEquals(v, other)) return false;
    }
    return true;
  }
  if (isCelType(lhs)) return isCelType(rhs) && lhs.kind === rhs.kind && lhs.name === rhs.name;
  if (isReflectMessage(lhs)) {
    if (!isReflectMessage(rhs) || lhs.desc.typeName !== rhs.desc.typeName) return false;
    return equalsMessage(lhs.desc, lhs.message, rhs.message);
  }
  return false;
}

/** The overloads that replace the library's: conversions to and arithmetic of timestamps and durations, `==`, `!=` and `in` a list. */
export const timeLib: CelFunc[] = [
  celFunc('timestamp', [STRING], TIMESTAMP, (s: string) => {
    try {
      return reflect(TimestampSchema, fromJson(TimestampSchema, s)) as never;
    } catch (e) {
      throw new Error(`Failed to parse timestamp: ${e}`);
    }
  }),
  celFunc('timestamp', [INT], TIMESTAMP, (n: bigint) => reflect(TimestampSchema, timestampFromMs(Number(n))) as never),
  celFunc('duration', [STRING], DURATION, (s: string) => parseDuration(s) as never),
  celFunc('duration', [INT], DURATION, (n: bigint) => reflect(DurationSchema, create(DurationSchema, { seconds: n })) as never),
  celFunc('_+_', [DURATION, DURATION], DURATION, (l, r) => durationOf(parts(l).seconds + parts(r).seconds, BigInt(parts(l).nanos + parts(r).nanos)) as never),
  celFunc('_+_', [TIMESTAMP, DURATION], TIMESTAMP, (l, r) => timestampOf(parts(l).seconds + parts(r).seconds, BigInt(parts(l).nanos + parts(r).nanos)) as never),
  celFunc('_+_', [DURATION, TIMESTAMP], TIMESTAMP, (l, r) => timestampOf(parts(l).seconds + parts(r).seconds, BigInt(parts(l).nanos + parts(r).nanos)) as never),
  celFunc('_-_', [TIMESTAMP, TIMESTAMP], DURATION, (l, r) => durationOf(parts(l).seconds - parts(r).seconds, BigInt(parts(l).nanos - parts(r).nanos)) as never),
  celFunc('_-_', [DURATION, DURATION], DURATION, (l, r) => durationOf(parts(l).seconds - parts(r).seconds, BigInt(parts(l).nanos - parts(r).nanos)) as never),
  celFunc('_-_', [TIMESTAMP, DURATION], TIMESTAMP, (l, r) => timestampOf(parts(l).seconds - parts(r).seconds, BigInt(parts(l).nanos - parts(r).nanos)) as never),
  celFunc('_==_', [DYN, DYN], BOOL, (l, r) => celEquals(l, r)),
  celFunc('_!=_', [DYN, DYN], BOOL, (l, r) => !celEquals(l, r)),
  celFunc('@in', [DYN, listType(DYN)], BOOL, (v, list) => {
    for (const x of list as Iterable<unknown>) if (celEquals(x, v)) return true;
    return false;
  }),
];
