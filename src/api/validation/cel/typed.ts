// The CEL values of schema-typed data, as upstream's UnstructuredToVal makes
// them (k8s.io/apiserver/pkg/cel/common/values.go): a string of `format:
// date-time` or `date` is a timestamp, of `format: duration` a duration, of
// `format: byte` the decoded bytes; integers (and the integers of an
// int-or-string) are CEL ints; lists of `x-plat-list-type: set` or `map`
// are lists of their own kind (listtypes.ts). The conversion is compiled once
// per schema and applied as a rule reads each value (jsonvalues.ts); a subtree
// with nothing to convert is read as plain JSON.

import type { CelValue } from '@bufbuild/cel';
import { JSONSchemaProps, markersOf, propertiesOf } from '../structural.js';
import { isObject } from '../path.js';
import { asCelList, celOfJson, JsonList, JsonMap, type PropertyNames, type ToCel } from './jsonvalues.js';
import { escapePropertyName, needsEscaping, unescapePropertyName } from './escaping.js';
import { withListKind, type ListKind } from './listtypes.js';
import { celDuration, celTimestamp } from './time.js';

/** The CEL form of a value of `s`, converted as a rule reads it (jsonvalues.ts). */
export function compileToCel(s: JSONSchemaProps): ToCel {
  return compileConvert(s) ?? celOfJson;
}

/** The formats whose strings are not CEL strings (what the cost estimator sizes as one). */
export const typedStringFormats = new Set(['date-time', 'date', 'duration']);

/** Integral JSON numbers as CEL ints, at every level (a subtree the schema leaves open). */
const jsonInts: ToCel = (v) => {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return new JsonList(v, jsonInts);
  return isObject(v) ? new JsonMap(v, undefined, jsonInts) : celOfJson(v);
};

/** The conversion of a value of `s`; undefined when the schema says nothing `celOfJson` does not. */
function compileConvert(s: JSONSchemaProps): ToCel | undefined {
  const m = markersOf(s);
  if (m.preserveUnknownFields || m.embeddedResource) return jsonInts;
  if (s.type === 'integer' || m.intOrString) return (v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : celOfJson(v));
  if (s.type === 'string') {
    const parse = stringFormats[s.format ?? ''];
    return parse ? (v) => (typeof v === 'string' ? parse(v) ?? v : celOfJson(v)) : undefined;
  }
  if (s.type === 'array') {
    const item = (s.items ? compileConvert(s.items) : undefined) ?? celOfJson;
    if (m.listType === 'set' || m.listType === 'map') {
      const kind: ListKind = { kind: m.listType, keys: m.listMapKeys ?? [] };
      return (v) => (Array.isArray(v) ? withListKind(asCelList(new JsonList(v, item)), kind) : celOfJson(v));
    }
    return item === celOfJson ? undefined : (v) => (Array.isArray(v) ? new JsonList(v, item) : celOfJson(v));
  }
  if (s.type === 'object') {
    const props = new Map<string, ToCel>();
    for (const [name, p] of propertiesOf(s)) { const c = compileConvert(p); if (c) props.set(name, c); }
    const values = typeof s.additionalProperties === 'object' ? compileConvert(s.additionalProperties) : undefined;
    // Properties named as CEL cannot name them are read under upstream's escaped names.
    const names = needsEscaping(Object.keys(s.properties ?? {})) ? escapedNames(new Set(Object.keys(s.properties!))) : undefined;
    if (!props.size && !values && !names) return undefined;
    const fields = props.size ? props : undefined;
    const rest = values ?? celOfJson;
    return (v) => (isObject(v) ? new JsonMap(v, fields, rest, names) : celOfJson(v));
  }
  return undefined;
}

/** Upstream's escaped property names; a key the schema does not declare keeps its own name. */
function escapedNames(declared: ReadonlySet<string>): PropertyNames {
  return {
    name: (p) => (declared.has(p) ? escapePropertyName(p) ?? p : p),
    property: (n) => {
      // Without a double underscore a name escapes nothing: it is its own property (the common case, without a regex).
      if (!n.includes('__')) return n;
      const p = unescapePropertyName(n);
      return p !== undefined && declared.has(p) ? p : declared.has(n) ? undefined : n;
    },
  };
}

// A string that does not parse stays a string (the schema validator reports
// its format in the same response).
const stringFormats: Record<string, (s: string) => unknown> = {
  'date-time': parseDateTime,
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) ? parseDateTime(`${s}T00:00:00Z`) : undefined),
  duration: parseDuration,
  byte: (s) => (/^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 ? new Uint8Array(Buffer.from(s, 'base64')) : undefined),
};

// RFC 3339 and the layouts strfmt's ParseDateTime accepts: fractions optional, a missing zone is UTC.
const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:?\d{2})?$/;

function parseDateTime(s: string): CelValue | undefined {
  const m = dateTime.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec ?? 0));
  if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== Number(d)) return undefined;
  let offset = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const digits = zone.replace(':', '');
    offset = (zone[0] === '-' ? -1 : 1) * (Number(digits.slice(1, 3)) * 3600 + Number(digits.slice(3, 5)) * 60);
  }
  return celTimestamp(BigInt(ms / 1000 - offset), frac ? Number(frac.padEnd(9, '0')) : 0);
}

const unitNanos: Record<string, bigint> = {
  ns: 1n, us: 1_000n, 'µs': 1_000n, 'μs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n,
  d: 86_400_000_000_000n, w: 604_800_000_000_000n,
};
// strfmt's long unit names, as its ParseDuration accepts after Go's form fails.
const unitNames: Record<string, string> = {
  nanosecond: 'ns', nanoseconds: 'ns', nanos: 'ns', nano: 'ns', microsecond: 'us', microseconds: 'us', micros: 'us', micro: 'us',
  millisecond: 'ms', milliseconds: 'ms', millis: 'ms', milli: 'ms', second: 's', seconds: 's', sec: 's', minute: 'm', minutes: 'm', min: 'm',
  hour: 'h', hours: 'h', hr: 'h', day: 'd', days: 'd', week: 'w', weeks: 'w',
};

/** Go's time.ParseDuration (`1h30m`, `-1.5s`), else strfmt's `<n> <unit>` (`3 days`, `2w`). */
function parseDuration(s: string): CelValue | undefined {
  if (s === '0' || s === '+0' || s === '-0') return celDuration(0n);
  const go = /^([-+]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(s);
  if (go) {
    let total = 0n;
    for (const [, whole, frac, unit] of go[2]!.matchAll(/(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/g)) {
      const per = unitNanos[unit!]!;
      total += BigInt(whole || '0') * per;
      if (frac) total += (BigInt(frac) * per) / 10n ** BigInt(frac.length);
    }
    return celDuration(go[1] === '-' ? -total : total);
  }
  const long = /^(\d+)\s*([a-zµμ]+)$/i.exec(s.trim());
  if (!long) return undefined;
  const unit = unitNames[long[2]!.toLowerCase()] ?? long[2]!.toLowerCase();
  const per = unitNanos[unit];
  return per === undefined ? undefined : celDuration(BigInt(long[1]!) * per);
}
