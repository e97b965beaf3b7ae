// What JSON.parse loses from a body's text: keys given twice in one object
// (it keeps the last; fieldValidation must report them) and the exact text of
// numbers (1.0, 1e10 and 18446744073709551616 all become doubles, while
// upstream's typed decoder refuses them for integer fields and quotes them as
// written). Both come from one walk over the text, run only when the answer
// matters. The text must be valid JSON no deeper than the nesting limit.

import { maxNestingDepth, tooDeep } from './limits.js';

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

  const skipWs = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  /** Steps over a string; returns its value when `decode` (keys), else nothing. */
  const readString = (decode: boolean): string => {
    const start = i++; // at the opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (!decode) { i++; return ''; }
    const raw = text.slice(start, ++i);
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

export function numberTextOf(text: string): NumberText {
  // Every such literal has a digit before a point or an exponent, or sixteen digits: without one, nothing to walk for.
  if (!/\d[.eE]|\d{16}/.test(text)) return () => undefined;
  let literals: Map<string, string> | undefined;
  return (pointer) => (literals ??= numberLiterals(text)).get(pointer);
}
