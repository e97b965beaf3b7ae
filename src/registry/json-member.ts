// One member of a stored JSON object read without decoding the rest: the
// watch cache's indexes read a pod's spec.nodeName from each of 150,000 pods
// at a restart, where a whole decode per pod was most of the index's cost
// (and of the collector's work after it). The walk skips the other members
// byte by byte, outside strings, and answers what JSON.parse of the whole
// value would hold at the path: the last of duplicate keys, escapes decoded.

const quote = 0x22;
const backslash = 0x5c;
const colon = 0x3a;
const comma = 0x2c;

/** Index after the string that opens at `i` (a quote); -1 when it does not close. */
function stringEnd(v: Buffer, i: number): number {
  for (i++; i < v.length; i++) {
    const c = v[i];
    if (c === quote) return i + 1;
    if (c === backslash) i++;
  }
  return -1;
}

function hasEscape(v: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (v[i] === backslash) return true;
  return false;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(v: Buffer, i: number): number {
  while (isSpace(v[i])) i++;
  return i;
}

/** Index after the value that starts at `i`; -1 when it is cut short. */
function valueEnd(v: Buffer, i: number): number {
  const c = v[i];
  if (c === quote) return stringEnd(v, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (; i < v.length; i++) {
      const d = v[i];
      if (d === quote) {
        i = stringEnd(v, i) - 1;
        if (i < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < v.length && v[i] !== comma && v[i] !== 0x7d && v[i] !== 0x5d && !isSpace(v[i])) i++;
  return i;
}

/** The [start, end) of the value of member `name` of the object that opens at `at` (its last, as JSON.parse keeps); null: no such member. */
function memberOf(v: Buffer, at: number, name: string): [number, number] | null | undefined {
  let found: [number, number] | null = null;
  let i = skipSpace(v, at + 1);
  if (v[i] === 0x7d) return null;
  for (;;) {
    if (v[i] !== quote) return undefined;
    const keyEnd = stringEnd(v, i);
    if (keyEnd < 0) return undefined;
    // A key with escapes is compared decoded; the others as they are written.
    const key = hasEscape(v, i + 1, keyEnd - 1) ? (JSON.parse(v.toString('utf8', i, keyEnd)) as string) : v.toString('utf8', i + 1, keyEnd - 1);
    i = skipSpace(v, keyEnd);
    if (v[i] !== colon) return undefined;
    const start = skipSpace(v, i + 1);
    const end = valueEnd(v, start);
    if (end < 0) return undefined;
    if (key === name) found = [start, end];
    i = skipSpace(v, end);
    if (v[i] === 0x7d) return found;
    if (v[i] !== comma) return undefined;
    i = skipSpace(v, i + 1);
  }
}

/**
 * The object holding only what `value` (a stored JSON object) has at `path`
 * (e.g. ["spec", "nodeName"] gives {spec: {nodeName: "n1"}}, or {spec: {}}
 * without one); undefined when the bytes are not a JSON object this walk
 * reads, so that the caller decodes the whole instead.
 */
export function objectAlongPath(value: Buffer, path: string[]): Record<string, unknown> | undefined {
  try {
    const root: Record<string, unknown> = {};
    let holder = root;
    let at = skipSpace(value, 0);
    if (value[at] !== 0x7b) return undefined;
    for (let depth = 0; depth < path.length; depth++) {
      const member = memberOf(value, at, path[depth]!);
      if (member === undefined) return undefined;
      if (member === null) return root;
      const [start, end] = member;
      if (depth === path.length - 1 || value[start] !== 0x7b) {
        // The leaf, or a scalar or array where the path goes on: as JSON.parse gives it.
        Object.defineProperty(holder, path[depth]!, { value: JSON.parse(value.toString('utf8', start, end)), enumerable: true, writable: true, configurable: true });
        return root;
      }
      const next: Record<string, unknown> = {};
      Object.defineProperty(holder, path[depth]!, { value: next, enumerable: true, writable: true, configurable: true });
      holder = next;
      at = start;
    }
    return root;
  } catch {
    return undefined;
  }
}
