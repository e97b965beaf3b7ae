// Time and MicroTime travel as {seconds, nanos} since the Unix epoch; JSON
// carries RFC 3339 text. Upstream reads a Time back with whole seconds only and
// a MicroTime with microseconds, and writes the zero time as an empty message.

export interface Timestamp {
  seconds: number;
  nanos: number;
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Seconds of Go's zero time (0001-01-01T00:00:00Z), which upstream writes as an empty message. */
export const zeroTimeSeconds = -62135596800;

export function parseTimestamp(text: string): Timestamp {
  const m = rfc3339.exec(text);
  if (!m) throw new Error(`invalid RFC 3339 time ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  let seconds = date.getTime() / 1000;
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60);
  const nanos = frac ? Number(frac.slice(0, 9).padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

/** RFC 3339 in UTC with `fractionDigits` digits of the second (0 for none), as Go formats it. */
export function formatTimestamp(t: Timestamp, fractionDigits: 0 | 6): string {
  // Nanos outside [0, 1e9) carry into the seconds, as Go's time.Unix does.
  const seconds = t.seconds + Math.floor(t.nanos / 1e9);
  const nanos = t.nanos - Math.floor(t.nanos / 1e9) * 1e9;
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) throw new Error(`time out of range: ${t.seconds}s`);
  const base = date.toISOString().slice(0, 19);
  if (fractionDigits === 0) return `${base}Z`;
  const micros = Math.floor(nanos / 1000);
  return `${base}.${String(micros).padStart(6, '0')}Z`;
}
