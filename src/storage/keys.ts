// Key order. Stores order keys by their UTF-8 bytes; JavaScript compares
// strings by UTF-16 code units, which differs for characters above U+FFFF.
// Code point order equals UTF-8 byte order, so compare by code point.

/** Negative, zero or positive as `a` sorts before, with or after `b` in byte order. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return codeUnitRank(ca) - codeUnitRank(cb);
  }
  return a.length - b.length;
}

// Surrogates (U+D800..U+DFFF) start code points above U+FFFF, so they must
// sort after U+E000..U+FFFF: shift both ranges to put them in code point order.
function codeUnitRank(c: number): number {
  if (c >= 0xe000) return c - 0x800;
  if (c >= 0xd800) return c + 0x2000;
  return c;
}

/**
 * The smallest key greater than every key that starts with `prefix`, or
 * undefined when no such key exists (empty prefix: the range is unbounded).
 * Replacing the last code point by its successor bounds exactly the keys
 * that begin with the prefix.
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

/** Where a range starts: the later of the prefix and the paging start key. */
export function rangeStart(prefix: string, startKey: string | undefined): string {
  return startKey !== undefined && compareKeys(startKey, prefix) > 0 ? startKey : prefix;
}
