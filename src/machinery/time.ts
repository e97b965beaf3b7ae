/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339Now(date?: Date): string {
  const ms = date ? date.getTime() : Date.now();
  // Every write stamps the time: the text of the current second is made once.
  const second = Math.floor(ms / 1000);
  if (second === lastSecond) return lastSecondText;
  const text = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  lastSecond = second;
  lastSecondText = text;
  return text;
}

let lastSecond = NaN;
let lastSecondText = '';

/** RFC 3339 with microsecond precision, as metav1.MicroTime serialises. */
export function rfc3339MicroNow(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The wall clock in microseconds since the epoch. Date.now() has only
 * milliseconds: the monotonic clock supplies the rest, anchored to the wall
 * clock and anchored again whenever the wall clock moves (NTP, a manual set).
 */
export function nowMicros(): number {
  const wall = Date.now();
  let micros = (clockAnchor + performance.now()) * 1000;
  // Date.now() truncates to the millisecond: a drift within that is the anchor's own.
  if (micros < wall * 1000 - 1000 || micros >= wall * 1000 + 2000) {
    clockAnchor = wall - performance.now();
    micros = wall * 1000;
  }
  return Math.floor(micros);
}

let clockAnchor = Date.now() - performance.now();

/** RFC 3339 with exactly six digits of fraction (metav1.MicroTime) for microseconds since the epoch. */
export function rfc3339Micro(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}

/** Go's RFC3339Nano text of a MicroTime text: trailing zeros of the fraction dropped, and the dot with them. */
export function rfc3339NanoOfMicro(text: string): string {
  return text.replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits ? `.${digits}Z` : 'Z'));
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

type Element = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fraction' | 'zone';
type Chunk = [prefix: number | undefined, element: Element, text: string];

// Both layouts as Go splits them: a literal prefix (one character, or none), then one element.
const dash = 0x2d, colon = 0x3a;
const dateAndClock: Chunk[] = [
  [undefined, 'year', '2006'], [dash, 'month', '01'], [dash, 'day', '02'], [0x54 /* T */, 'hour', '15'],
  [colon, 'minute', '04'], [colon, 'second', '05'],
];
const timeChunks: Chunk[] = [...dateAndClock, [undefined, 'zone', 'Z07:00']];
const microTimeChunks: Chunk[] = [...dateAndClock, [undefined, 'fraction', '.000000'], [undefined, 'zone', 'Z07:00']];

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// Most values are short ASCII: their bytes are copied here rather than allocated.
const scratch = new Uint8Array(64);

function bytesOf(text: string): Uint8Array {
  if (text.length > scratch.length) return Buffer.from(text, 'utf8');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return Buffer.from(text, 'utf8');
    scratch[i] = c;
  }
  return scratch.subarray(0, text.length);
}

/**
 * Parses `text` as Go's time.Parse does with the RFC 3339 layout (or the
 * MicroTime one); throws TimeParseError with Go's message. The value is
 * read by position (`at`), as Go reads it by slicing.
 */
export function parseGoTime(text: string, micro = false): Instant {
  const v = bytesOf(text);
  const n = v.length;
  const digit = (i: number) => i < n && v[i] >= 0x30 && v[i] <= 0x39;
  const quoted = (from: number) => goQuote(v.subarray(from));
  const fail = (layoutElem: string, from: number): never => {
    throw new TimeParseError(`parsing time ${quoted(0)} as "${micro ? rfc3339MicroLayout : rfc3339Layout}": cannot parse ${quoted(from)} as "${layoutElem}"`);
  };
  const failWith = (message: string): never => { throw new TimeParseError(`parsing time ${quoted(0)}${message}`); };
  /** Go's parseNanoseconds: a separator and `digits - 1` digits (an optional sign too, as its atoi takes one). */
  const fraction = (from: number, len: number): { ns: number; range?: string } | undefined => {
    if (v[from] !== 0x2e && v[from] !== 0x2c) return undefined;
    const stop = from + Math.min(len, 10);
    let i = from + 1;
    let sign = 1;
    if (i < stop && (v[i] === 0x2d || v[i] === 0x2b)) sign = v[i++] === 0x2d ? -1 : 1;
    let ns = 0;
    for (; i < stop; i++) {
      if (!digit(i)) return undefined;
      ns = ns * 10 + (v[i] - 0x30);
    }
    if (sign < 0 && ns > 0) return { ns: 0, range: 'fractional second' };
    return { ns: ns * 10 ** (10 - (stop - from)) };
  };

  let at = 0;
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, nanos = 0, offset = 0;
  for (const [prefix, element, elementText] of micro ? microTimeChunks : timeChunks) {
    if (prefix !== undefined) {
      if (at >= n || v[at] !== prefix) fail(String.fromCharCode(prefix), at);
      at++;
    }
    const hold = at;
    let range: string | undefined;
    let ok = true;
    /** Go's getnum: one or two digits (`fixed`: exactly two). */
    const num = (fixed: boolean): number => {
      if (!digit(at) || (fixed && !digit(at + 1))) { ok = false; return 0; }
      if (!digit(at + 1)) return v[at++] - 0x30;
      at += 2;
      return (v[at - 2] - 0x30) * 10 + (v[at - 1] - 0x30);
    };
    switch (element) {
      case 'year':
        if (n - at < 4 || !digit(at)) { ok = false; break; }
        for (let i = at; i < at + 4; i++) {
          if (!digit(i)) ok = false;
          year = year * 10 + (v[i] - 0x30);
        }
        at += 4;
        break;
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
        if (!micro && (v[at] === 0x2e || v[at] === 0x2c) && digit(at + 1)) {
          let end = at + 2;
          while (digit(end)) end++;
          const f = fraction(at, end - at);
          at = end;
          if (!f) ok = false;
          else ({ ns: nanos, range } = f);
        }
        break;
      }
      case 'fraction': {
        if (n - at < 7) { ok = false; break; }
        const f = fraction(at, 7);
        at += 7;
        if (!f) ok = false;
        else ({ ns: nanos, range } = f);
        break;
      }
      case 'zone': {
        if (at < n && v[at] === 0x5a /* Z */) { at++; break; }
        if (n - at < 6 || v[at + 3] !== colon) { ok = false; break; }
        const sign = v[at];
        const two = (i: number) => (digit(i) && digit(i + 1) ? (v[i] - 0x30) * 10 + (v[i + 1] - 0x30) : undefined);
        const hr = two(at + 1);
        const mn = hr === undefined ? undefined : two(at + 4);
        at += 6;
        if (hr === undefined || mn === undefined) ok = false;
        // As Go: offsets of 24 hours or 60 minutes are let through.
        if ((hr ?? 0) > 24) range = 'time zone offset hour';
        if ((mn ?? 0) > 60) range = 'time zone offset minute';
        const seconds = ((hr ?? 0) * 60 + (mn ?? 0)) * 60;
        if (sign === 0x2b) offset = seconds;
        else if (sign === 0x2d) offset = -seconds;
        else ok = false;
        break;
      }
    }
    if (range !== undefined) failWith(`: ${range} out of range`);
    if (!ok) fail(elementText, hold);
  }
  if (at !== n) failWith(`: extra text: ${quoted(at)}`);
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

// ---- Go durations (flags, the `timeout` query parameter, request logs) ----

const nanosecondsPerUnit: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 MICRO SIGN
  μs: 1e3, // U+03BC GREEK SMALL LETTER MU
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const durationPattern = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const durationPart = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** Parses a duration as Go's time.ParseDuration does; returns milliseconds. */
export function parseDuration(text: string): number {
  if (/^[-+]?0$/.test(text)) return 0;
  if (!durationPattern.test(text)) throw new Error('not a duration (examples: 300ms, 2s, 5m, 1h30m)');
  let nanoseconds = 0;
  for (const [, amount, unit] of text.matchAll(durationPart)) nanoseconds += Number(amount) * nanosecondsPerUnit[unit!]!;
  return (text.startsWith('-') ? -nanoseconds : nanoseconds) / 1e6;
}

/** Formats milliseconds as Go's Duration.String does: `5m0s`, `1h30m0s`, `300ms`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const ns = Math.round(Math.abs(ms) * 1e6);
  if (ns === 0) return '0s';
  const trim = (value: number) => String(Number(value.toFixed(9)));
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${sign}${trim(ns / 1e6)}ms`;
  const hours = Math.floor(ns / 3600e9);
  const minutes = Math.floor((ns % 3600e9) / 60e9);
  const seconds = trim((ns % 60e9) / 1e9);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
