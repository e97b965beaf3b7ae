// The Kubernetes CEL libraries upstream 1.32 offers in validation rules and
// match conditions, written over @bufbuild/cel's function interface: lists,
// regex, url, ip and cidr, quantity, format, sets (sets.contains,
// sets.equivalent, sets.intersects), the authorizer (authz.ts) and optional
// values (optional.ts), beside the library's own standard functions and
// strings extension. Values the libraries make are maps with one hidden key
// naming their kind (values.ts). The two-variable comprehensions are macros
// of the parser (parser.ts); transformMap's insertion is here.
//
// Not offered, as upstream 1.32: base64 (cel-go's encoders are not in its
// base environment) and semver (1.33). The format library is
// format.ts; schema-typed values (timestamps of `format: date-time`) are
// typed.ts.

import { isIP } from 'node:net';
import { celEnv, celFunc, celList, celMap, celMethod, CelScalar, isCelError, isCelList, isCelMap, listType, mapType, type CelFunc, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { parseQuantity, type Quantity } from './quantity.js';
import { field, opaque } from './values.js';
import { authorizationLib } from './authz.js';
import { optionalLib } from './optional.js';
import { formatLib } from './format.js';
import { mapInsert } from './parser.js';
import { compileRegex, find, findAll, test } from './regex.js';
import { insertEntry } from './append.js';
import { timeLib } from './time.js';

const { STRING, BOOL, INT, DOUBLE, DYN } = CelScalar;
const LIST = listType(DYN);
function compare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error('no such overload');
}

function items(l: unknown): unknown[] {
  if (!isCelList(l)) throw new Error('no such overload');
  return [...l];
}

const lists: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    const xs = items(this);
    for (let i = 1; i < xs.length; i++) if (compare(xs[i - 1], xs[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    const xs = items(this);
    if (xs.length === 0) return 0n;
    return xs.reduce((t: any, x: any) => t + x) as never;
  }),
  celMethod('min', LIST, [], DYN, function () {
    const xs = items(this);
    if (xs.length === 0) throw new Error('min called on empty list');
    return xs.reduce((m, x) => (compare(x, m) < 0 ? x : m)) as never;
  }),
  celMethod('max', LIST, [], DYN, function () {
    const xs = items(this);
    if (xs.length === 0) throw new Error('max called on empty list');
    return xs.reduce((m, x) => (compare(x, m) > 0 ? x : m)) as never;
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (x) {
    const xs = items(this);
    return BigInt(xs.findIndex((y) => compare(y, x) === 0));
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (x) {
    const xs = items(this);
    for (let i = xs.length - 1; i >= 0; i--) if (compare(xs[i], x) === 0) return BigInt(i);
    return -1n;
  }),
];

// Upstream's regex library (find, findAll) and the global form of `matches`,
// on RE2 (regex.ts). A pattern that does not compile is upstream's error.
const compiled = (fn: string, pattern: string) => {
  try {
    return compileRegex(pattern);
  } catch (e) {
    throw new Error(fn === 'matches' ? (e as Error).message : `Illegal regex: ${(e as Error).message}`);
  }
};

const regexLib: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (pattern) { return find(compiled('find', pattern), this); }),
  celMethod('findAll', STRING, [STRING], LIST, function (pattern) { return celList(findAll(compiled('findAll', pattern), this, -1)); }),
  celMethod('findAll', STRING, [STRING, INT], LIST, function (pattern, limit) {
    // Go's int of the limit: anything below zero means all.
    return celList(findAll(compiled('findAll', pattern), this, limit < 0n ? -1 : Number(limit > 2n ** 31n ? 2n ** 31n : limit)));
  }),
  celMethod('matches', STRING, [STRING], BOOL, function (pattern) { return test(compiled('matches', pattern), this); }),
  celFunc('matches', [STRING, STRING], BOOL, (s, pattern) => test(compiled('matches', pattern), s)),
];

function parseUrl(s: string): URL | undefined {
  // Go's url.Parse accepts absolute URLs and absolute paths; upstream refuses anything else.
  try { return new URL(s); } catch { return undefined; }
}

const urlLib: CelFunc[] = [
  celFunc('url', [STRING], DYN, (s) => {
    const u = parseUrl(s);
    if (!u) throw new Error(`URL parse error during conversion from string: ${s}`);
    return opaque('url', { href: s, scheme: u.protocol.replace(/:$/, ''), host: u.host, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: u.pathname, query: u.search.slice(1) });
  }),
  celFunc('isURL', [STRING], BOOL, (s) => parseUrl(s) !== undefined),
  celMethod('getScheme', DYN, [], STRING, function () { return field<string>(this, 'url', 'scheme'); }),
  celMethod('getHost', DYN, [], STRING, function () { return field<string>(this, 'url', 'host'); }),
  celMethod('getHostname', DYN, [], STRING, function () { return field<string>(this, 'url', 'hostname'); }),
  celMethod('getPort', DYN, [], STRING, function () { return field<string>(this, 'url', 'port'); }),
  celMethod('getEscapedPath', DYN, [], STRING, function () { return field<string>(this, 'url', 'path'); }),
  celMethod('getQuery', DYN, [], DYN, function () {
    const q = new URLSearchParams(field<string>(this, 'url', 'query'));
    const m = new Map<string, string[]>();
    for (const [k, v] of q) m.set(k, [...(m.get(k) ?? []), v]);
    return celMap(new Map([...m].map(([k, v]) => [k, celList(v)] as [string, never])));
  }),
];

function ipBytes(s: string): number[] | undefined {
  const family = isIP(s);
  if (family === 4) return s.split('.').map(Number);
  if (family !== 6 || s.includes('%')) return undefined;
  const [head, tail] = s.includes('::') ? s.split('::') as [string, string] : [s, undefined];
  const part = (t: string | undefined) => (t ? t.split(':') : []);
  let h = part(head), t = part(tail);
  const expand = (g: string[]) => g.flatMap((x) => (x.includes('.') ? (() => { const b = x.split('.').map(Number); return [((b[0]! << 8) | b[1]!).toString(16), ((b[2]! << 8) | b[3]!).toString(16)]; })() : [x]));
  h = expand(h); t = expand(t);
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => { const n = parseInt(g, 16); return [n >> 8, n & 255]; });
}

function ipValue(s: string): CelValue {
  // Upstream refuses IPv4-mapped IPv6 addresses and zones.
  const bytes = ipBytes(s);
  if (!bytes || /^::ffff:/i.test(s)) throw new Error(`IP Address '${s}' parse error during conversion from string`);
  return opaque('ip', { text: s, family: BigInt(bytes.length === 4 ? 4 : 6), bytes: celList(bytes.map(BigInt)) });
}

const ipOf = (v: CelValue): number[] => [...(field<Iterable<bigint>>(v, 'ip', 'bytes'))].map(Number);

function canonicalIp(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // Longest run of zero groups (two or more) becomes `::`, as Go's net.IP.String.
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i; while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function cidrValue(s: string): CelValue {
  const slash = s.indexOf('/');
  const bytes = slash > 0 ? ipBytes(s.slice(0, slash)) : undefined;
  const bits = slash > 0 && /^\d{1,3}$/.test(s.slice(slash + 1)) ? Number(s.slice(slash + 1)) : NaN;
  if (!bytes || !(bits <= bytes.length * 8)) throw new Error(`network address parse error during conversion from string: ${s}`);
  return opaque('cidr', { text: s, bytes: celList(bytes.map(BigInt)), bits: BigInt(bits) });
}

const cidrOf = (v: CelValue) => ({ bytes: [...field<Iterable<bigint>>(v, 'cidr', 'bytes')].map(Number), bits: Number(field<bigint>(v, 'cidr', 'bits')) });

function masked(bytes: number[], bits: number): number[] {
  return bytes.map((b, i) => { const keep = Math.max(0, Math.min(8, bits - i * 8)); return b & ((0xff << (8 - keep)) & 0xff); });
}

function inPrefix(ip: number[], net: number[], bits: number): boolean {
  if (ip.length !== net.length) return false;
  const a = masked(ip, bits), b = masked(net, bits);
  return a.every((x, i) => x === b[i]);
}

const ipLib: CelFunc[] = [
  celFunc('ip', [STRING], DYN, ipValue),
  celFunc('isIP', [STRING], BOOL, (s) => { try { ipValue(s); return true; } catch { return false; } }),
  celMethod('family', DYN, [], INT, function () { return field<bigint>(this, 'ip', 'family'); }),
  celMethod('isUnspecified', DYN, [], BOOL, function () { return ipOf(this).every((b) => b === 0); }),
  celMethod('isLoopback', DYN, [], BOOL, function () {
    const b = ipOf(this);
    return b.length === 4 ? b[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  }),
  celMethod('isLinkLocalMulticast', DYN, [], BOOL, function () {
    const b = ipOf(this);
    return b.length === 4 ? b[0] === 224 && b[1] === 0 && b[2] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
  }),
  celMethod('isLinkLocalUnicast', DYN, [], BOOL, function () {
    const b = ipOf(this);
    return b.length === 4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
  }),
  celMethod('isGlobalUnicast', DYN, [], BOOL, function () {
    const b = ipOf(this);
    if (b.length === 4) return !(b.every((x) => x === 0) || b[0] === 127 || b[0]! >= 224 || (b[0] === 169 && b[1] === 254) || b.every((x) => x === 255));
    return !(b.every((x) => x === 0) || (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) || b[0] === 0xff || (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80));
  }),
  celMethod('isCanonical', DYN, [], BOOL, function () { return canonicalIp(ipOf(this)) === field<string>(this, 'ip', 'text'); }),
  celFunc('cidr', [STRING], DYN, cidrValue),
  celFunc('isCIDR', [STRING], BOOL, (s) => { try { cidrValue(s); return true; } catch { return false; } }),
  celMethod('containsIP', DYN, [STRING], BOOL, function (s) { const c = cidrOf(this); return inPrefix(ipOf(ipValue(s)), c.bytes, c.bits); }),
  celMethod('containsIP', DYN, [DYN], BOOL, function (ip) { const c = cidrOf(this); return inPrefix(ipOf(ip), c.bytes, c.bits); }),
  celMethod('containsCIDR', DYN, [STRING], BOOL, function (s) {
    const c = cidrOf(this), o = cidrOf(cidrValue(s));
    return o.bits >= c.bits && inPrefix(o.bytes, c.bytes, c.bits);
  }),
  celMethod('containsCIDR', DYN, [DYN], BOOL, function (other) {
    const c = cidrOf(this), o = cidrOf(other);
    return o.bits >= c.bits && inPrefix(o.bytes, c.bytes, c.bits);
  }),
  celMethod('ip', DYN, [], DYN, function () { return ipValue(canonicalIp(cidrOf(this).bytes)); }),
  celMethod('masked', DYN, [], DYN, function () {
    const c = cidrOf(this);
    return cidrValue(`${canonicalIp(masked(c.bytes, c.bits))}/${c.bits}`);
  }),
  celMethod('prefixLength', DYN, [], INT, function () { return BigInt(cidrOf(this).bits); }),
];

function quantityValue(s: string): CelValue {
  const q = parseQuantity(s);
  if (!q) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
  return opaque('quantity', { text: s, num: q.num, den: q.den });
}

const qOf = (v: CelValue): Quantity => ({ num: field<bigint>(v, 'quantity', 'num'), den: field<bigint>(v, 'quantity', 'den') });
const qCompare = (a: Quantity, b: Quantity): number => { const l = a.num * b.den, r = b.num * a.den; return l < r ? -1 : l > r ? 1 : 0; };
const qFrom = (q: Quantity): CelValue => opaque('quantity', { text: '', num: q.num, den: q.den });
const qArg = (v: CelValue | string | bigint): Quantity => (typeof v === 'string' ? qOf(quantityValue(v)) : typeof v === 'bigint' ? { num: v, den: 1n } : qOf(v));

const quantityLib: CelFunc[] = [
  celFunc('quantity', [STRING], DYN, quantityValue),
  celFunc('isQuantity', [STRING], BOOL, (s) => parseQuantity(s) !== undefined),
  celMethod('sign', DYN, [], INT, function () { const q = qOf(this); return q.num > 0n ? 1n : q.num < 0n ? -1n : 0n; }),
  celMethod('isInteger', DYN, [], BOOL, function () { const q = qOf(this); return q.num % q.den === 0n; }),
  celMethod('asInteger', DYN, [], INT, function () {
    const q = qOf(this);
    if (q.num % q.den !== 0n) throw new Error('cannot convert value to integer');
    const v = q.num / q.den;
    if (v > 2n ** 63n - 1n || v < -(2n ** 63n)) throw new Error('cannot convert value to integer');
    return v;
  }),
  celMethod('asApproximateFloat', DYN, [], DOUBLE, function () { const q = qOf(this); return Number(q.num) / Number(q.den); }),
  celMethod('isGreaterThan', DYN, [DYN], BOOL, function (o) { return qCompare(qOf(this), qOf(o)) > 0; }),
  celMethod('isLessThan', DYN, [DYN], BOOL, function (o) { return qCompare(qOf(this), qOf(o)) < 0; }),
  celMethod('compareTo', DYN, [DYN], INT, function (o) { return BigInt(qCompare(qOf(this), qOf(o))); }),
  ...(['add', 'sub'] as const).flatMap((op) => [DYN, INT].map((t) => celMethod(op, DYN, [t], DYN, function (o: any) {
    const a = qOf(this), b = qArg(o);
    const num = op === 'add' ? a.num * b.den + b.num * a.den : a.num * b.den - b.num * a.den;
    return qFrom({ num, den: a.den * b.den });
  }))),
];

// CEL equality (numbers equal across int, uint and double), as `in` uses it.
const celIn = celEnv().funcs.find('@in')!;
const listHas = (list: CelValue, x: CelValue): boolean => celIn.call(0, undefined, [x, list]) === true;

function setContains(list: CelValue, sub: CelValue): boolean {
  for (const x of items(sub)) if (!listHas(list, x as CelValue)) return false;
  return true;
}

const setsLib: CelFunc[] = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a, b) => setContains(a, b)),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a, b) => setContains(a, b) && setContains(b, a)),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a, b) => items(a).some((x) => listHas(b, x as CelValue))),
];

// `split(sep, n)` as Go's strings.SplitN, which upstream's strings extension
// uses: at most n parts, the last holding the rest (the library's own drops
// the rest). It and the functions below replace the library's overloads of
// the same signatures.
function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  const parts = sep === '' ? [...s] : s.split(sep);
  if (n < 0 || parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

// Go's strings.Replace, which upstream's `replace` calls: at most n
// replacements (all when n is negative), an empty `old` matching before each
// character and at the end; the result built once, in parts (the library's
// rebuilt the whole string at each replacement).
function replaceN(s: string, old: string, by: string, n: number): string {
  if (n === 0 || old === by) return s;
  const parts: string[] = [];
  let count = 0, last = 0;
  if (old === '') {
    for (const ch of s) {
      if (count === n) break;
      parts.push(by, ch);
      count++;
      last += ch.length;
    }
    if (count !== n && last === s.length) { parts.push(by); return parts.join(''); }
  } else {
    for (let i = s.indexOf(old); i >= 0 && count !== n; i = s.indexOf(old, last)) {
      parts.push(s.slice(last, i), by);
      last = i + old.length;
      count++;
    }
  }
  parts.push(s.slice(last));
  return parts.join('');
}

// ASCII case in one pass over runs of letters (the library's built its result a character at a time).
const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (run) => run.toLowerCase());
const upperAscii = (s: string): string => s.replace(/[a-z]+/g, (run) => run.toUpperCase());

// strings.quote with the library's escapes, in one pass.
const quoteEscapes = new Map([['\0', '\\0'], ['\x07', '\\a'], ['\b', '\\b'], ['\t', '\\t'], ['\n', '\\n'], ['\v', '\\v'], ['\f', '\\f'], ['\r', '\\r'], ['"', '\\"'], ['\\', '\\\\']]);
const quote = (s: string): string => `"${s.replace(/[\0\x07-\x0d"\\]/g, (c) => quoteEscapes.get(c)!)}"`;

// `format` copies its literal text in runs and hands each clause to the
// library's own formatting, one clause at a time, so its output is the
// library's without being built a character at a time.
const libraryFormat = strings.find((f) => f.name === 'format')!;
const formatError = (issue: string) => new Error(`invalid argument to function format: ${issue}`);

function formatWith(template: string, args: CelValue): string {
  if (!isCelList(args)) throw new Error('no such overload');
  const out: string[] = [];
  let next = 0;
  for (let i = 0; i < template.length;) {
    const percent = template.indexOf('%', i);
    if (percent < 0) { out.push(template.slice(i)); break; }
    out.push(template.slice(i, percent));
    if (percent + 1 >= template.length) throw formatError('invalid format string');
    i = percent + 2;
    let verb = template[percent + 1]!;
    if (verb === '%') { out.push('%'); continue; }
    let clause = '%';
    if (verb === '.') {
      while (i < template.length && template[i]! >= '0' && template[i]! <= '9') i++;
      if (i >= template.length) throw formatError('invalid format string');
      clause += `.${template.slice(percent + 2, i)}`;
      verb = template[i++]!;
    }
    const value = args.get(next++);
    if (value === undefined) throw formatError('too few arguments for format string');
    const written = libraryFormat.call(0, `${clause}${verb}`, [celList([value])]);
    if (typeof written !== 'string') throw new Error(isCelError(written) ? written.message : 'no such overload');
    out.push(written);
  }
  if (next < args.size) throw formatError('too many arguments for format string');
  return out.join('');
}

const stringFixes: CelFunc[] = [
  celMethod('split', STRING, [STRING], LIST, function (sep) { return celList(splitN(this, sep, -1)); }),
  celMethod('split', STRING, [STRING, INT], LIST, function (sep, n) { return celList(splitN(this, sep, Number(n))); }),
  celFunc('strings.quote', [STRING], STRING, quote),
  celMethod('replace', STRING, [STRING, STRING], STRING, function (old, by) { return replaceN(this, old, by, -1); }),
  celMethod('replace', STRING, [STRING, STRING, INT], STRING, function (old, by, n) { return replaceN(this, old, by, n < 0n ? -1 : Number(n)); }),
  celMethod('lowerAscii', STRING, [], STRING, function () { return lowerAscii(this); }),
  celMethod('upperAscii', STRING, [], STRING, function () { return upperAscii(this); }),
  celMethod('format', STRING, [LIST], STRING, function (args) { return formatWith(this, args); }),
];

// What transformMap's expansion calls to add one entry (an existing key is an error, as upstream), in place where it can (append.ts).
const comprehensionLib: CelFunc[] = [
  celFunc(mapInsert, [mapType(DYN, DYN), DYN, DYN], DYN, (m, k, v) => {
    const out = isCelMap(m) ? insertEntry(m, k, v) : undefined;
    if (out === undefined) throw new Error(`insert failed: key ${String(k)} already exists`);
    return out as never;
  }),
];

/** Every function a validation rule may call beside the standard ones. */
export const kubernetesLibraries: CelFunc[] = [];

kubernetesLibraries.push(...strings, ...stringFixes, ...lists, ...regexLib, ...urlLib, ...ipLib, ...quantityLib, ...formatLib, ...setsLib, ...comprehensionLib, ...authorizationLib, ...optionalLib, ...timeLib);
