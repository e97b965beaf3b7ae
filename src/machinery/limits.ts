// How deeply nested a value the server accepts. The algorithms over objects
// (pruning, patches, field ownership, structuredClone, JSON.stringify) recurse
// per level, and V8's stack ends near 2,000 levels for the deepest of them;
// upstream's decoder stops at 10,000. Refusing deeper input with a 400 when it
// is read keeps every later step far from the stack's end, and no real object
// comes near the limit.

import { errors, type ApiError } from './errors.js';

/**
 * Request bodies above this many bytes are refused (413), as upstream. It
 * also bounds the bytes a JSON patch's `copy` operations may add in total,
 * as upstream arms its JSON patch library with the same number.
 */
export const maxRequestBodyBytes = 3 * 1024 * 1024;

/** Levels of objects and arrays a value may nest (the top-level object is level 1). */
export const maxNestingDepth = 500;

/** The 400 for input nested deeper than the limit. */
export function tooDeep(what = 'the object provided'): ApiError {
  return errors.badRequest(`${what} is nested too deeply: exceeded max depth of ${maxNestingDepth}`);
}

/**
 * The index of the quote that closes the JSON string whose opening quote is
 * at `open` (text.length when it is not closed). Jumps from quote to quote
 * (indexOf runs natively): a quote closes unless an odd run of backslashes
 * precedes it.
 */
export function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c /* \ */) slashes++;
    if (slashes % 2 === 0) return at;
  }
  return text.length;
}

/** Whether JSON text nests deeper than `max`: one pass over the text, strings skipped. */
export function jsonTextExceedsDepth(text: string, max = maxNestingDepth): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether a decoded value nests deeper than `max`. It recurses, but never
 * below level `max + 1`, so the stack stays far from its end however deep
 * the value is; no allocation per node (it runs on every write).
 */
export function valueExceedsDepth(value: unknown, max = maxNestingDepth): boolean {
  return deeperThan(value, 1, max);
}

function deeperThan(v: unknown, level: number, max: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (level > max) return true;
  if (Array.isArray(v)) {
    for (const child of v) if (typeof child === 'object' && child !== null && deeperThan(child, level + 1, max)) return true;
    return false;
  }
  for (const key of Object.keys(v)) {
    const child = (v as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && deeperThan(child, level + 1, max)) return true;
  }
  return false;
}
