// What JSON.parse loses from a body's text: how deep it nests, keys given
// twice in one object (it keeps the last; fieldValidation must report them)
// and the exact text of numbers (1.0, 1e10 and 18446744073709551616 all
// become doubles, while upstream's typed decoder refuses them for integer
// fields and quotes them as written). All three come from one walk over the
// text (scanJsonText), run before JSON.parse so that depth is refused before
// anything is built; malformed text ends the walk and JSON.parse reports it.

import { closingQuote, maxNestingDepth, tooDeep } from './limits.js';

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
  /** Paths of repeated keys (when asked for) in the text whose parsed value is `value`. */
  duplicates(value: unknown): string[];
  /** Undefined when every number of the text is a plain integer (nothing to look up). */
  numberText: NumberText | undefined;
}

interface TextShape {
  tooDeep: boolean;
  /** Object members in the text: its colons outside strings. */
  members: number;
  /** A number literal a double may not hold as written: a point or an exponent, or sixteen digits. */
  inexactNumber: boolean;
}

/**
 * One pass over JSON text, strings jumped over: its depth, its members and
 * whether a number may need its literal text. Outside strings a point is
 * only ever in a number, and an `e` after a digit too (true and false have
 * theirs after a letter).
 */
function shapeOf(text: string): TextShape {
  let depth = 0;
  let members = 0;
  let digits = 0;
  let inexactNumber = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      if (++digits >= 16) inexactNumber = true;
      continue;
    }
    if (c === 0x22 /* " */) i = closingQuote(text, i);
    else if (c === 0x3a /* : */) members++;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxNestingDepth) return { tooDeep: true, members, inexactNumber };
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    else if (c === 0x2e /* . */ || ((c === 0x65 || c === 0x45) /* e E */ && digits > 0)) inexactNumber = true;
    digits = 0;
  }
  return { tooDeep: false, members, inexactNumber };
}

/** Own keys of every object in a parsed value. */
function membersOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) if (typeof v === 'object' && v !== null) n += membersOf(v);
    return n;
  }
  for (const k in value) {
    n++;
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'object' && v !== null) n += membersOf(v);
  }
  return n;
}

const noDuplicates = (): string[] => [];

/**
 * Depth (a 400 when too deep), repeated keys (when `findDuplicates`) and the
 * literal text of numbers. The common text (no number a double may change)
 * gets one cheap pass: JSON.parse keeps one member per distinct key and
 * drops what a repeated key overrode, so its value has as many members as
 * the text has colons exactly when no key repeats; only then is the text
 * walked key by key to name the repeated ones. What it says of malformed
 * text is meaningless: parse it too.
 */
export function scanJsonText(text: string, findDuplicates: boolean): JsonTextFacts {
  const shape = shapeOf(text);
  if (shape.tooDeep) throw tooDeep();
  if (!shape.inexactNumber) {
    const duplicates = findDuplicates
      ? (value: unknown) => (membersOf(value) === shape.members ? [] : findDuplicateFields(text))
      : noDuplicates;
    return { duplicates, numberText: undefined };
  }
  const duplicates: string[] = [];
  const literals = new Map<string, string>();
  walk(text, {
    key: findDuplicates ? (segments, repeated) => { if (repeated) duplicates.push(dottedPath(segments)); } : undefined,
    number: (segments, literal) => {
      // Most literals are plain integers: their pointer matters only to forget an earlier literal at the same place.
      if (!plainInteger.test(literal)) literals.set(jsonPointer(segments), literal);
      else if (literals.size) literals.delete(jsonPointer(segments));
    },
  });
  return { duplicates: () => duplicates, numberText: literals.size ? (pointer) => literals.get(pointer) : undefined };
}
