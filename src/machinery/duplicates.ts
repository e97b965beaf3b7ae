// What JSON.parse loses from a body's text: how deep it nests, keys given
// twice in one object (it keeps the last; fieldValidation must report them)
// and the exact text of numbers (1.0, 1e10 and 18446744073709551616 all
// become doubles, while upstream's typed decoder refuses them for integer
// fields and quotes them as written). All three come from one walk over the
// text (scanJsonText), run before JSON.parse so that depth is refused before
// anything is built; malformed text ends the walk and JSON.parse reports it.

import { closingQuote, jsonTextExceedsDepth, maxNestingDepth, tooDeep } from './limits.js';

/** A step into a value: an object key or an array index. */
export type Segment = string | number;

/** The RFC 6901 pointer of a location, e.g. `/metadata/labels/a~1b`, `/items/0`. */
export function jsonPointer(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out += `/${typeof s === 'number' ? s : s.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return out;
}

/** A location as messages print it: `data.a`, `items[2].name`. */
function dottedPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  return out;
}

interface Visitor {
  key?(segments: readonly Segment[], repeated: boolean): void;
  number?(segments: readonly Segment[], literal: string): void;
}

function walk(text: string, visit: Visitor): void {
  let i = 0;
  const segments: Segment[] = [];

  const skipWs = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  };
  /** Steps over a string; returns its value when `decode` (keys), else nothing. */
  const readString = (decode: boolean): string => {
    const start = i; // at the opening quote
    i = closingQuote(text, start) + 1;
    if (!decode) return '';
    const raw = text.slice(start, i);
    // Most keys have no escapes: their text is their value.
    if (raw.indexOf('\\') < 0) return raw.slice(1, -1);
    try { return JSON.parse(raw) as string; } catch { return raw; }
  };

  const value = (): void => {
    skipWs();
    const c = text[i];
    // A container here is at level segments.length + 1.
    if ((c === '{' || c === '[') && segments.length >= maxNestingDepth) throw tooDeep();
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      skipWs();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        skipWs();
        if (i >= text.length) return; // malformed text: JSON.parse reports it
        const key = readString(true);
        segments.push(key);
        visit.key?.(segments, seen.has(key));
        seen.add(key);
        skipWs();
        i++; // ':'
        value();
        segments.pop();
        skipWs();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      skipWs();
      if (text[i] === ']') { i++; return; }
      for (let n = 0; ; n++) {
        if (i >= text.length) return;
        segments.push(n);
        value();
        segments.pop();
        skipWs();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      readString(false);
    } else {
      const start = i;
      while (i < text.length && !',}] \t\n\r'.includes(text[i])) i++;
      if (c === '-' || (c >= '0' && c <= '9')) visit.number?.(segments, text.slice(start, i));
    }
  };

  value();
}

/** Paths (`data.a`, `items[2].name`) of keys that appear twice in one object. */
export function findDuplicateFields(text: string): string[] {
  const found: string[] = [];
  walk(text, { key: (segments, repeated) => { if (repeated) found.push(dottedPath(segments)); } });
  return found;
}

/** Integers of at most 15 digits: the only literals a double holds exactly as written. */
const plainInteger = /^-?\d{1,15}$/;

/**
 * The literal text of the numbers a double does not hold as written, by
 * JSON pointer. A key given twice keeps its last literal, as JSON.parse keeps
 * its last value.
 */
export function numberLiterals(text: string): Map<string, string> {
  const found = new Map<string, string>();
  walk(text, {
    number(segments, literal) {
      const at = jsonPointer(segments);
      if (plainInteger.test(literal)) found.delete(at);
      else found.set(at, literal);
    },
  });
  return found;
}

/** Looks up the literal text of a number by pointer; the text is walked on the first question only. */
export type NumberText = (pointer: string) => string | undefined;

/** Every literal a double does not hold has a digit before a point or an exponent, or sixteen digits. */
const mayHoldInexactNumber = (text: string) => /\d[.eE]|\d{16}/.test(text);

export function numberTextOf(text: string): NumberText {
  if (!mayHoldInexactNumber(text)) return () => undefined;
  let literals: Map<string, string> | undefined;
  return (pointer) => (literals ??= numberLiterals(text)).get(pointer);
}

export interface JsonTextFacts {
  /** Paths of repeated keys, when asked for. */
  duplicates: string[];
  numberText: NumberText;
}

/**
 * Depth (a 400 when too deep), repeated keys (when `findDuplicates`) and the
 * literal text of numbers, in one walk over JSON text; a text with neither
 * question to answer gets only the depth scan, the cheapest pass. What it
 * says of malformed text is meaningless: parse it too.
 */
export function scanJsonText(text: string, findDuplicates: boolean): JsonTextFacts {
  const numbers = mayHoldInexactNumber(text);
  if (!findDuplicates && !numbers) {
    if (jsonTextExceedsDepth(text)) throw tooDeep();
    return { duplicates: [], numberText: () => undefined };
  }
  const duplicates: string[] = [];
  const literals = new Map<string, string>();
  walk(text, {
    key: findDuplicates ? (segments, repeated) => { if (repeated) duplicates.push(dottedPath(segments)); } : undefined,
    number: numbers ? (segments, literal) => {
      const at = jsonPointer(segments);
      if (plainInteger.test(literal)) literals.delete(at);
      else literals.set(at, literal);
    } : undefined,
  });
  return { duplicates, numberText: literals.size ? (pointer) => literals.get(pointer) : () => undefined };
}
