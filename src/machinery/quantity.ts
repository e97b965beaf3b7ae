// Resource quantities (`500m`, `1Gi`, `1e3`) as upstream reads and writes
// them: parsed exactly (BigInt, rounded up to nano units as upstream does),
// written back in upstream's canonical form, so that `1000m` is stored as `1`
// and `1536Mi` stays `1536Mi`, whatever the client sent.

/** Upstream's messages for text that is not a quantity. */
export const quantityMessages = {
  format: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  numeric: 'unable to parse numeric part of quantity',
  suffix: "unable to parse quantity's suffix",
} as const;

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** The value in nano units (value × 10^9), rounded up as upstream rounds. */
  nanos: bigint;
  format: QuantityFormat;
}

const shape = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const nano = 10n ** 9n;

/**
 * Quantities met lately, by text: objects repeat the same few (`100m`,
 * `128Mi`), and a parse costs several BigInt operations. Answers are frozen;
 * the memo holds short texts only and is emptied when full (bounded memory
 * whatever clients send).
 */
const parsed = new Map<string, Readonly<Quantity>>();
const parsedLimit = 1024;

/** Parses quantity text; throws an Error with upstream's message when it is not one. */
export function parseQuantity(text: string): Readonly<Quantity> {
  if (text.length > 32) return parseUncached(text);
  let q = parsed.get(text);
  if (q === undefined) {
    q = Object.freeze(parseUncached(text));
    if (parsed.size >= parsedLimit) parsed.clear();
    parsed.set(text, q);
  }
  return q;
}

function parseUncached(text: string): Quantity {
  const m = shape.exec(text.trim());
  if (!m || text.trim() === '') throw new Error(quantityMessages.format);
  let digits = m[1];
  const suffix = m[2];
  let negative = false;
  if (digits[0] === '+' || digits[0] === '-') {
    negative = digits[0] === '-';
    digits = digits.slice(1);
  }
  const parts = digits.split('.');
  if (parts.length > 2 || (parts[0] === '' && (parts[1] ?? '') === '')) throw new Error(quantityMessages.numeric);
  const whole = parts[0] || '0';
  const fraction = parts[1] ?? '';
  // value = mantissa × 10^exp10 × 1024^exp1024
  let mantissa = BigInt(whole + fraction);
  let exp10 = -fraction.length;
  let exp1024 = 0;
  let format: QuantityFormat;
  if (Object.hasOwn(decimalSuffixes, suffix)) {
    format = 'DecimalSI';
    exp10 += decimalSuffixes[suffix]!;
  } else if (Object.hasOwn(binarySuffixes, suffix)) {
    format = 'BinarySI';
    exp1024 = binarySuffixes[suffix]!;
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    format = 'DecimalExponent';
    const e = Number(suffix.slice(1));
    if (!Number.isSafeInteger(e) || Math.abs(e) > 1000) throw new Error(quantityMessages.suffix);
    exp10 += e;
  } else {
    throw new Error(quantityMessages.suffix);
  }
  mantissa *= 1024n ** BigInt(exp1024);
  // To nano units, rounding up (away from zero) what is finer, as upstream.
  const shift = exp10 + 9;
  let nanos: bigint;
  if (shift >= 0) nanos = mantissa * 10n ** BigInt(shift);
  else {
    const div = 10n ** BigInt(-shift);
    nanos = mantissa / div + (mantissa % div === 0n ? 0n : 1n);
  }
  return { nanos: negative ? -nanos : nanos, format };
}

function removeFactors(value: bigint, base: bigint, max = Infinity): [bigint, number] {
  let times = 0;
  while (value !== 0n && value % base === 0n && times < max) {
    value /= base;
    times++;
  }
  return [value, times];
}

/** The canonical text of a quantity, as upstream's Quantity.String writes it. */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return '0';
  const negative = q.nanos < 0n;
  const abs = negative ? -q.nanos : q.nanos;
  const sign = negative ? '-' : '';
  let format = q.format;
  // Small or fractional binary quantities read better (and exactly) as decimal ones.
  if (format === 'BinarySI' && (abs < 1024n * nano || abs % nano !== 0n)) format = 'DecimalSI';
  if (format === 'BinarySI') {
    const [amount, times] = removeFactors(abs / nano, 1024n, 6);
    const suffix = Object.keys(binarySuffixes).find((k) => binarySuffixes[k] === times) ?? '';
    return `${sign}${amount}${suffix}`;
  }
  let [amount, times] = removeFactors(abs, 10n);
  let exponent = times - 9;
  // The exponent goes down to a multiple of 3.
  const rem = ((exponent % 3) + 3) % 3;
  amount *= 10n ** BigInt(rem);
  exponent -= rem;
  if (format === 'DecimalExponent') return `${sign}${amount}${exponent === 0 ? '' : `e${exponent}`}`;
  const suffix = Object.keys(decimalSuffixes).find((k) => decimalSuffixes[k] === exponent);
  return suffix === undefined ? `${sign}${amount}e${exponent}` : `${sign}${amount}${suffix}`;
}

/** Canonical text of a quantity given as JSON (text or number); throws upstream's message when it is none. */
export function canonicalQuantity(value: string | number): string {
  return formatQuantity(parseQuantity(typeof value === 'number' ? numberText(value) : value));
}

/** A JSON number as quantity text (no exponent form JavaScript might choose for large values). */
function numberText(n: number): string {
  const s = String(n);
  return /e/i.test(s) ? s.replace(/e\+?/i, 'e') : s;
}

/** Compares two quantities: negative, zero or positive. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}
