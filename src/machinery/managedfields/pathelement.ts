// One step of a field path, as server-side apply names fields: a struct field
// or map key (`f:`), a list-map item by its key fields (`k:`), a set item by
// its value (`v:`), or a list position (`i:`). The serialized form is the
// FieldsV1 key, so it doubles as the identity of an element.

import { jsonTextExceedsDepth } from '../limits.js';
import { isObject } from '../patch/json.js';

export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export type Path = readonly PathElement[];

export const fieldPE = (name: string): PathElement => ({ field: name });

/** A key element; fields are sorted by name so equal keys serialize equally. */
export function keyPE(fields: Iterable<readonly [string, unknown]>): PathElement {
  return { key: [...fields].sort((a, b) => compareStrings(a[0], b[0])) };
}

/** JSON as Go's encoder writes it (`<`, `>`, `&` and line separators escaped, object keys sorted). */
export function goJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort(compareStrings);
    return `{${keys.map((k) => `${goJson(k)}:${goJson(v[k])}`).join(',')}}`;
  }
  const s = JSON.stringify(v ?? null);
  return typeof v === 'string' && goEscaped.test(s)
    ? s.replace(goEscapedAll, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : s;
}

const goEscaped = /[<>&\u2028\u2029]/;
const goEscapedAll = /[<>&\u2028\u2029]/g;

/** The FieldsV1 key of an element: `f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`. */
export function serializePE(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`;
  let id = idCache.get(pe);
  if (id === undefined) {
    id = serializeUncached(pe);
    idCache.set(pe, id);
  }
  return id;
}

/** Elements are immutable, so their serialized form is computed once. */
const idCache = new WeakMap<PathElement, string>();

function serializeUncached(pe: PathElement): string {
  if ('key' in pe) return `k:{${pe.key.map(([n, v]) => `${goJson(n)}:${goJson(v)}`).join(',')}}`;
  if ('value' in pe) return `v:${goJson(pe.value)}`;
  return 'index' in pe ? `i:${pe.index}` : `f:${pe.field}`;
}

/** Parses a FieldsV1 key; throws an Error on malformed input. */
export function parsePE(s: string): PathElement {
  if (s.length < 2) throw new Error('key must be 2 characters long:');
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const body = s.slice(2);
  // A key is a string, so no depth check of the request saw the JSON inside it.
  if ((s[0] === 'v' || s[0] === 'k') && jsonTextExceedsDepth(body)) throw new Error(`key nested too deeply: ${s.slice(0, 64)}`);
  switch (s[0]) {
    case 'f': return { field: body };
    case 'v': return { value: JSON.parse(body) };
    case 'k': {
      const obj: unknown = JSON.parse(body);
      if (!isObject(obj)) throw new Error(`invalid key element: ${s}`);
      return keyPE(Object.entries(obj));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`);
      return { index: Number(body) };
    }
    default: throw new Error('unknown path element type');
  }
}

/** Go's `%v`-like rendering used in conflict messages: `.spec`, `[name="a"]`, `[="x"]`, `[0]`. */
export function peString(pe: PathElement): string {
  if ('field' in pe) return `.${pe.field}`;
  if ('key' in pe) return `[${pe.key.map(([n, v]) => `${n}=${valueString(v)}`).join(',')}]`;
  if ('value' in pe) return `[=${valueString(pe.value)}]`;
  return `[${pe.index}]`;
}

export function pathString(path: Path): string {
  return path.map(peString).join('');
}

function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort(compareStrings).map((k) => `${k}=${valueString(v[k])}`).join(';')}}`;
  return String(v);
}

/** Byte-wise (UTF-8) order of strings, as Go's strings.Compare. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates encode code points above every other UTF-16 unit.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000; else if (x >= 0xe000) x -= 0x800;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000; else if (y >= 0xe000) y -= 0x800;
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

function rankOf(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isObject(v)) return 4;
  return 5;
}

/** Total order of JSON values: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rankOf(a), rb = rankOf(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (isObject(a) && isObject(b)) return compareStrings(goJson(a), goJson(b));
  return 0;
}

function typeRank(pe: PathElement): number {
  if ('field' in pe) return 0;
  if ('key' in pe) return 1;
  if ('value' in pe) return 2;
  return 3;
}

/** Order of elements in serialized sets: fields, then keys, values, indices. */
export function comparePE(a: PathElement, b: PathElement): number {
  const ta = typeRank(a), tb = typeRank(b);
  if (ta !== tb) return ta - tb;
  if ('field' in a && 'field' in b) return compareStrings(a.field, b.field);
  if ('key' in a && 'key' in b) {
    for (let i = 0; ; i++) {
      if (i >= a.key.length && i >= b.key.length) return 0;
      if (i >= a.key.length) return -1;
      if (i >= b.key.length) return 1;
      const c = compareStrings(a.key[i][0], b.key[i][0]) || compareValues(a.key[i][1], b.key[i][1]);
      if (c !== 0) return c;
    }
  }
  if ('value' in a && 'value' in b) return compareValues(a.value, b.value);
  if ('index' in a && 'index' in b) return a.index - b.index;
  return 0;
}
