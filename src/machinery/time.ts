/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339Now(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microsecond precision, as metav1.MicroTime serialises. */
export function rfc3339MicroNow(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A short age such as 45s, 3m20s, 5h, 12d or 2y, as kubectl shows ages. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

/** Age of an RFC 3339 timestamp now, or `<unknown>` without one. */
export function ageOf(timestamp: unknown, now = Date.now()): string {
  if (typeof timestamp !== 'string' || !timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

// ---- RFC 3339 as upstream reads it ------------------------------------------
//
// metav1.Time and MicroTime read JSON with Go's time.Parse and the layouts
// below, and clients see Go's error text when that fails. This is Go's layout
// parser for just these two layouts, over the UTF-8 bytes as Go sees them, so
// that what is accepted and every message match: `parsing time "x" as
// "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`.

/** The layout of metav1.Time: any fraction of a second is accepted and dropped. */
export const rfc3339Layout = '2006-01-02T15:04:05Z07:00';
/** The layout of metav1.MicroTime: exactly six digits of fraction. */
export const rfc3339MicroLayout = '2006-01-02T15:04:05.000000Z07:00';

/** An instant as seconds and nanoseconds since the Unix epoch (the protobuf Timestamp shape). */
export interface Instant {
  seconds: number;
  nanos: number;
}

/** Seconds of Go's zero time (0001-01-01T00:00:00Z), which upstream treats as "no time". */
export const zeroTimeSeconds = -62135596800;

/** A value that does not parse in its layout; the message is Go's. */
export class TimeParseError extends Error {}

const bad = Symbol('bad value for field');

/** Go's quote for time errors: `"` and `\` escaped, bytes outside printable ASCII as \xNN. */
function goQuote(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b < 0x20 || b >= 0x80) out += `\\x${b.toString(16).padStart(2, '0')}`;
    else {
      if (b === 0x22 || b === 0x5c) out += '\\';
      out += String.fromCharCode(b);
    }
  }
  return `${out}"`;
}

const ascii = (s: string) => Buffer.from(s, 'latin1');
const isDigit = (v: Uint8Array, i: number) => i < v.length && v[i] >= 0x30 && v[i] <= 0x39;

/** One or two digits (`fixed`: exactly two); as Go's getnum. */
function getnum(v: Uint8Array, fixed: boolean): [number, Uint8Array] | typeof bad {
  if (!isDigit(v, 0)) return bad;
  if (!isDigit(v, 1)) return fixed ? bad : [v[0] - 0x30, v.subarray(1)];
  return [(v[0] - 0x30) * 10 + (v[1] - 0x30), v.subarray(2)];
}

/** An optionally signed decimal; as Go's atoi. */
function atoi(v: Uint8Array): number | typeof bad {
  let i = 0;
  let sign = 1;
  if (v.length > 0 && (v[0] === 0x2d || v[0] === 0x2b)) {
    sign = v[0] === 0x2d ? -1 : 1;
    i = 1;
  }
  let n = 0;
  for (; i < v.length; i++) {
    if (!isDigit(v, i)) return bad;
    n = n * 10 + (v[i] - 0x30);
  }
  return sign * n;
}

/** `v` starts with a separator and `n - 1` fraction digits; as Go's parseNanoseconds. */
function nanoseconds(v: Uint8Array, n: number): { ns: number; range?: string } | typeof bad {
  if (v[0] !== 0x2e && v[0] !== 0x2c) return bad;
  const digits = Math.min(n, 10);
  const ns = atoi(v.subarray(1, digits));
  if (ns === bad) return bad;
  if (ns < 0) return { ns: 0, range: 'fractional second' };
  return { ns: ns * 10 ** (10 - digits) };
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

type Element = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fraction' | 'zone';

// Both layouts as Go splits them: a literal prefix, then one element.
const chunks = (micro: boolean): Array<[prefix: string, element: Element, text: string]> => [
  ['', 'year', '2006'], ['-', 'month', '01'], ['-', 'day', '02'], ['T', 'hour', '15'],
  [':', 'minute', '04'], [':', 'second', '05'],
  ...(micro ? [['', 'fraction', '.000000'] as [string, Element, string]] : []),
  ['', 'zone', 'Z07:00'],
];

/**
 * Parses `text` as Go's time.Parse does with the RFC 3339 layout (or the
 * MicroTime one); throws TimeParseError with Go's message.
 */
export function parseGoTime(text: string, micro = false): Instant {
  const layout = micro ? rfc3339MicroLayout : rfc3339Layout;
  const all = Buffer.from(text, 'utf8');
  const fail = (layoutElem: string, valueElem: Uint8Array): never => {
    throw new TimeParseError(`parsing time ${goQuote(all)} as ${goQuote(ascii(layout))}: cannot parse ${goQuote(valueElem)} as ${goQuote(ascii(layoutElem))}`);
  };
  const failWith = (message: string): never => { throw new TimeParseError(`parsing time ${goQuote(all)}${message}`); };
  let v: Uint8Array = all;
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, nanos = 0, offset = 0;
  for (const [prefix, element, elementText] of chunks(micro)) {
    for (let i = 0; i < prefix.length; i++) {
      if (v.length === 0 || v[0] !== prefix.charCodeAt(i)) fail(prefix, v);
      v = v.subarray(1);
    }
    const hold = v;
    let range: string | undefined;
    let ok = true;
    const num = (fixed: boolean): number => {
      const r = getnum(v, fixed);
      if (r === bad) { ok = false; return 0; }
      v = r[1];
      return r[0];
    };
    switch (element) {
      case 'year': {
        if (v.length < 4 || !isDigit(v, 0)) { ok = false; break; }
        const y = atoi(v.subarray(0, 4));
        v = v.subarray(4);
        if (y === bad) ok = false;
        else year = y;
        break;
      }
      case 'month':
        month = num(true);
        if (ok && (month <= 0 || month > 12)) range = 'month';
        break;
      case 'day':
        day = num(true);
        break;
      case 'hour':
        hour = num(false);
        if (hour >= 24) range = 'hour';
        break;
      case 'minute':
        minute = num(true);
        if (minute >= 60) range = 'minute';
        break;
      case 'second': {
        second = num(true);
        if (!ok) break;
        if (second >= 60) { range = 'second'; break; }
        // A fraction the layout does not name is still read (any number of digits).
        if (!micro && v.length >= 2 && (v[0] === 0x2e || v[0] === 0x2c) && isDigit(v, 1)) {
          let n = 2;
          while (isDigit(v, n)) n++;
          const f = nanoseconds(v, n);
          v = v.subarray(n);
          if (f === bad) ok = false;
          else { nanos = f.ns; range = f.range; }
        }
        break;
      }
      case 'fraction': {
        if (v.length < 7) { ok = false; break; }
        const f = nanoseconds(v, 7);
        v = v.subarray(7);
        if (f === bad) ok = false;
        else { nanos = f.ns; range = f.range; }
        break;
      }
      case 'zone': {
        if (v.length >= 1 && v[0] === 0x5a /* Z */) { v = v.subarray(1); break; }
        if (v.length < 6 || v[3] !== 0x3a /* : */) { ok = false; break; }
        const sign = v[0];
        const hh = getnum(v.subarray(1, 3), true);
        const mm = hh === bad ? bad : getnum(v.subarray(4, 6), true);
        v = v.subarray(6);
        const hr = hh === bad ? 0 : hh[0];
        const mn = mm === bad ? 0 : mm[0];
        if (hh === bad || mm === bad) ok = false;
        // As Go: offsets of 24 hours or 60 minutes are let through.
        if (hr > 24) range = 'time zone offset hour';
        if (mn > 60) range = 'time zone offset minute';
        if (sign === 0x2b) offset = (hr * 60 + mn) * 60;
        else if (sign === 0x2d) offset = -(hr * 60 + mn) * 60;
        else ok = false;
        break;
      }
    }
    if (range !== undefined) failWith(`: ${range} out of range`);
    if (!ok) fail(elementText, hold);
  }
  if (v.length !== 0) failWith(`: extra text: ${goQuote(v)}`);
  if (day < 1 || day > daysIn(month, year)) failWith(': day out of range');
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return { seconds: date.getTime() / 1000 - offset, nanos };
}

/** RFC 3339 in UTC with `fractionDigits` digits of the second (0 for none), as Go formats it; years outside 0..9999 throw. */
export function formatInstant(t: Instant, fractionDigits: 0 | 6): string {
  // Nanos outside [0, 1e9) carry into the seconds, as Go's time.Unix does.
  const seconds = t.seconds + Math.floor(t.nanos / 1e9);
  const nanos = t.nanos - Math.floor(t.nanos / 1e9) * 1e9;
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) throw new RangeError(`time out of range: ${t.seconds}s`);
  const base = date.toISOString().slice(0, 19);
  if (fractionDigits === 0) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}
