// The structural validator: a schema compiled once into closures, one per
// node, each holding only the checks its node declares; validating an object
// runs them and collects every failure (nothing stops at the first one), in
// the wording and field paths of upstream's schema validator. The list-type
// and embedded-resource checks, which upstream runs as passes of their own,
// run in the same walk. The walk is linear in the object (sets, never pairs
// of items) and stops once more errors than a 422 lists are collected
// (`maxListedErrors`), so a request's validation is bounded in time and in
// the size of its answer, however hostile the object.

import { FieldError, fieldErrors, maxListedErrors } from '../../machinery/errors.js';
import { hasOwn } from '../../machinery/ownkeys.js';
import { formatCheck } from './formats.js';
import { fieldOf, schemaErrors, supportedValues } from './messages.js';
import { re2 } from './engines.js';
import { JSONSchemaProps, markersOf } from './structural.js';
import { childPath, isObject, Path } from './path.js';

/**
 * Checks one value at `path`, adding what fails to `errs`; answers how many
 * checks applied to it (upstream's match count, by which a combinator picks
 * the failing alternative whose errors it reports: the one that got furthest).
 */
export type NodeCheck = (value: unknown, path: string, errs: FieldError[]) => number;

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

export function jsonTypeOf(v: unknown): JsonType {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string': return 'string';
    case 'boolean': return 'boolean';
    case 'number': return Number.isInteger(v) ? 'integer' : 'number';
    case 'bigint': return 'integer';
    default: return 'object';
  }
}

/** A node's check inside the walk (NodeCheck with the walk's path). */
type Check = (value: unknown, path: Path, errs: FieldError[]) => number;

/** Compiles `schema` into one check for values of it; an error upstream's validator reports twice at one place is reported once. */
export function compileValidator(schema: JSONSchemaProps): NodeCheck {
  const check = compileNode(schema);
  return (v, path, errs) => {
    const before = errs.length;
    const count = check(v, new Path(path), errs);
    if (errs.length - before > 1) dropRepeated(errs, before);
    return count;
  };
}

/** Upstream's validator keeps one error per message; alternatives of an allOf, say, may each report the same one. */
function dropRepeated(errs: FieldError[], from: number): void {
  const seen = new Set<string>();
  let kept = from;
  for (let i = from; i < errs.length; i++) {
    const e = errs[i]!;
    const key = `${e.type}\0${e.field}\0${e.detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errs[kept++] = e;
  }
  errs.length = kept;
}

/** Answers a pattern (or a format) keeps, at most: values repeat across a kind's objects (images, sizes, names' shapes). */
const rememberedAnswers = 512;

/**
 * A compiled pattern that remembers its recent answers: RE2's linear-time
 * engine in JavaScript costs microseconds a value, a Map lookup nanoseconds.
 */
function rememberedPattern(re: { test(v: string): boolean }): { test(v: string): boolean } {
  const answers = new Map<string, boolean>();
  return {
    test(v) {
      let answer = answers.get(v);
      if (answer === undefined) {
        if (answers.size >= rememberedAnswers) answers.clear();
        answers.set(v, (answer = re.test(v)));
      }
      return answer;
    },
  };
}

/** A pattern compiled when it first runs, RE2 loaded by then (see engines.ts): compiling a schema does not load RE2. */
function firstUseCompiled(pattern: string): { test(v: string): boolean } {
  let compiled: { test(v: string): boolean } | undefined;
  return { test: (v) => (compiled ??= re2().compile(pattern)).test(v) };
}

/** What the type check calls a number's format (Go decodes JSON integers to int64, the rest to float64); other values have none. */
function dataFormat(v: unknown): string {
  if (typeof v === 'bigint') return 'int64';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return '';
}

/**
 * One node, checked in the order of upstream's validators, each of which
 * runs whatever the others found: type (and a format's type), combinators,
 * string bounds and pattern (the first that fails), format, numbers,
 * arrays, enum, objects. A validator that applies counts one match, and the
 * type, number and array validators one more of their own.
 */
function compileNode(s: JSONSchemaProps): Check {
  const m = markersOf(s);
  const types = m.intOrString ? ['integer', 'string'] : s.type ? [s.type] : [];
  // A format upstream does not support is stripped from the schema before it validates anything.
  const formatTest = s.format ? formatCheck(s.format) : undefined;
  const format = formatTest ? s.format! : '';
  const typeCheck = types.length || format ? compileTypeCheck(types, format, s.nullable === true) : undefined;
  const combinators = compileCombinators(s);
  const stringCheck = compileString(s, formatTest, format);
  const numberCheck = compileNumber(s);
  const arrayCheck = compileArray(s, m.listType, m.listMapKeys ?? []);
  const enumCheck = compileEnum(s);
  const objectCheck = compileObject(s, m.embeddedResource);

  return (v, path, errs) => {
    if (v === null || v === undefined) {
      // Only the type and the enum look at a null; the type check counts one match when it passes.
      const typeOk = typeCheck ? typeCheck(v, path, errs) : true;
      enumCheck?.(v, path, errs);
      return typeOk ? 1 : 0;
    }
    let count = 1;
    if (typeCheck) count += typeCheck(v, path, errs) ? 2 : 1;
    count += 1 + (combinators ? combinators(v, path, errs) : 1);
    if (typeof v === 'string') count += stringCheck(v, path, errs);
    else if (typeof v === 'number' || typeof v === 'bigint') count += numberCheck ? numberCheck(v, path, errs) : 2;
    else if (Array.isArray(v)) count += 2 + arrayCheck(v, path, errs);
    count += 1;
    enumCheck?.(v, path, errs);
    if (isObject(v)) count += 1 + objectCheck(v, path, errs);
    return count;
  };
}

/**
 * Upstream's type check: a value of none of the types is reported by its
 * type; with a format, a number of another type (or a boolean, an object) is
 * reported as not of the format's type, while any string or array passes
 * the type check (the format's own check then looks at strings).
 */
function compileTypeCheck(types: string[], format: string, nullable: boolean): (v: unknown, path: Path, errs: FieldError[]) => boolean {
  const typeName = types.join(',');
  // Which JSON types pass, decided once per node as a set of bits rather than searched per value.
  let accepted = 0;
  for (const t of types) if (hasOwn(typeBits, t)) accepted |= typeBits[t as JsonType];
  if (accepted & typeBits.number) accepted |= typeBits.integer;
  const numeric = types.includes('integer') || types.includes('number');
  return (v, path, errs) => {
    if (v === null || v === undefined) {
      if (types.length && !nullable) { errs.push(schemaErrors.type(path.text(), typeName, 'null')); return false; }
      return true;
    }
    // An integral value passes as a number, and (JSON has one number type) a number with an integral value as an integer.
    const matches = (accepted & typeBitOf(v)) !== 0;
    if (format && typeof v !== 'string' && !Array.isArray(v) && !matches) {
      errs.push(schemaErrors.formatType(path.text(), format, dataFormat(v)));
      return false;
    }
    if (format && !numeric && (typeof v === 'string' || Array.isArray(v))) return true;
    if (!matches) {
      errs.push(schemaErrors.type(path.text(), typeName, jsonTypeOf(v)));
      return false;
    }
    return true;
  };
}

const typeBits: Record<JsonType, number> = { null: 1, boolean: 2, integer: 4, number: 8, string: 16, array: 32, object: 64 };

/** jsonTypeOf as its bit (a non-null value). */
function typeBitOf(v: unknown): number {
  switch (typeof v) {
    case 'string': return typeBits.string;
    case 'boolean': return typeBits.boolean;
    case 'number': return Number.isInteger(v) ? typeBits.integer : typeBits.number;
    case 'bigint': return typeBits.integer;
    default: return Array.isArray(v) ? typeBits.array : typeBits.object;
  }
}

/** The string validator (the first of maxLength, minLength, pattern that fails) and the format's check; the matches they count. */
function compileString(s: JSONSchemaProps, formatTest: ((v: string) => boolean) | undefined, formatName: string): (v: string, path: Path, errs: FieldError[]) => number {
  const { maxLength, minLength } = s;
  const re = s.pattern !== undefined ? rememberedPattern(firstUseCompiled(s.pattern)) : undefined;
  const pattern = s.pattern ?? '';
  const format = formatTest && rememberedPattern({ test: formatTest });
  const matches = format ? 2 : 1;
  if (maxLength === undefined && minLength === undefined && !re && !format) return () => matches;
  return (v, path, errs) => {
    // A string has at least half as many runes as UTF-16 units, and at most as many: most need no count.
    const runes = (maxLength !== undefined && v.length > maxLength) || (minLength !== undefined && v.length >> 1 < minLength) ? countRunes(v) : -1;
    if (runes >= 0 && maxLength !== undefined && runes > maxLength) errs.push(schemaErrors.tooLong(path.text(), maxLength));
    else if (runes >= 0 && minLength !== undefined && runes < minLength) errs.push(schemaErrors.tooShort(path.text(), v, minLength));
    else if (re && !re.test(v)) errs.push(schemaErrors.pattern(path.text(), v, pattern));
    if (format && !format.test(v)) errs.push(schemaErrors.format(path.text(), formatName, v));
    return matches;
  };
}

/** multipleOf, minimum, maximum, in upstream's order; two matches. */
function compileNumber(s: JSONSchemaProps): ((v: number | bigint, path: Path, errs: FieldError[]) => number) | undefined {
  if (s.multipleOf === undefined && s.maximum === undefined && s.minimum === undefined) return undefined;
  const { multipleOf, maximum, minimum } = s;
  const exMax = s.exclusiveMaximum === true, exMin = s.exclusiveMinimum === true;
  return (value, path, errs) => {
    const v = Number(value);
    if (multipleOf !== undefined && !isMultiple(v, multipleOf)) errs.push(schemaErrors.multipleOf(path.text(), v, multipleOf));
    if (minimum !== undefined && (exMin ? v <= minimum : v < minimum)) errs.push(schemaErrors.minimum(path.text(), v, minimum, exMin));
    if (maximum !== undefined && (exMax ? v >= maximum : v > maximum)) errs.push(schemaErrors.maximum(path.text(), v, maximum, exMax));
    return 2;
  };
}

function compileEnum(s: JSONSchemaProps): ((v: unknown, path: Path, errs: FieldError[]) => void) | undefined {
  if (!s.enum) return undefined;
  const allowed = s.enum;
  // Scalars (nearly every enum) are found in a set; an object or a list by its canonical text, never compared one by one.
  const scalars = new Set(allowed.filter((a) => typeof a !== 'object' || a === null));
  const containers = new Set(allowed.filter((a) => typeof a === 'object' && a !== null).map(canonicalKey));
  // Upstream compares a value with each allowed one of a type it converts to; a null is of none, so it is never allowed.
  const isAllowed = (v: unknown) => (v === null || v === undefined ? false : typeof v !== 'object' ? scalars.has(v) : containers.size > 0 && containers.has(canonicalKey(v)));
  // The list of supported values is written once, at the first failure, and shared by every error of this node.
  let supported: string | undefined;
  return (v, path, errs) => { if (!isAllowed(v)) errs.push(schemaErrors.enum(path.text(), v ?? null, (supported ??= supportedValues(allowed)))); };
}

/**
 * allOf, anyOf, oneOf and not as upstream's validator runs them: anyOf
 * stops at the first alternative that passes; a failed anyOf or oneOf
 * reports, after its own complaint, the errors of the failing alternative
 * that counted the most matches (the first of equals); allOf reports every
 * alternative's errors, then its complaint. Answers the matches counted.
 */
function compileCombinators(s: JSONSchemaProps): Check | undefined {
  const allOf = (s.allOf ?? []).map(compileNode);
  const anyOf = (s.anyOf ?? []).map(compileNode);
  const oneOf = (s.oneOf ?? []).map(compileNode);
  const not = s.not ? compileNode(s.not) : undefined;
  if (!allOf.length && !anyOf.length && !oneOf.length && !not) return undefined;
  return (v, path, errs) => {
    let count = 1;
    if (anyOf.length) {
      let best: { errs: FieldError[]; count: number } | undefined;
      let passed = false;
      for (const alt of anyOf) {
        const mine: FieldError[] = [];
        const n = alt(v, path, mine);
        if (mine.length === 0) { count += n; passed = true; break; }
        if (!best || n > best.count) best = { errs: mine, count: n };
      }
      if (!passed) {
        errs.push(schemaErrors.anyOf(path.text()), ...best!.errs);
        count += best!.count;
      }
    }
    if (oneOf.length) {
      let valid = 0, firstValid = 0;
      let best: { errs: FieldError[]; count: number } | undefined;
      for (const alt of oneOf) {
        const mine: FieldError[] = [];
        const n = alt(v, path, mine);
        if (mine.length === 0) {
          if (valid++ === 0) firstValid = n;
          best = undefined;
        } else if (valid === 0 && (!best || n > best.count)) best = { errs: mine, count: n };
      }
      if (valid === 1) count += firstValid;
      else {
        errs.push(schemaErrors.oneOf(path.text(), valid));
        if (best) { errs.push(...best.errs); count += best.count; }
      }
    }
    if (allOf.length) {
      let valid = 0;
      for (const alt of allOf) {
        const before = errs.length;
        count += alt(v, path, errs);
        if (errs.length === before) valid++;
      }
      if (valid !== allOf.length) errs.push(schemaErrors.allOf(path.text(), valid === 0));
    }
    if (not) {
      const mine: FieldError[] = [];
      not(v, path, mine);
      if (mine.length === 0) errs.push(schemaErrors.not(path.text()));
    }
    return count;
  };
}

/** Properties, bounds on their number, required ones; the matches the properties' checks count. */
function compileObject(s: JSONSchemaProps, embedded: boolean): (v: Record<string, unknown>, path: Path, errs: FieldError[]) => number {
  const props = new Map<string, Check>();
  for (const [name, p] of Object.entries(s.properties ?? {})) props.set(name, compileNode(p));
  const extra = typeof s.additionalProperties === 'object' ? compileNode(s.additionalProperties) : undefined;
  const required = s.required ?? [];
  const { minProperties, maxProperties } = s;
  return (v, path, errs) => {
    let count = 0;
    if (minProperties !== undefined || maxProperties !== undefined) {
      const n = Object.keys(v).length;
      if (minProperties !== undefined && n < minProperties) errs.push(schemaErrors.tooFewProperties(path.text(), n, minProperties));
      if (maxProperties !== undefined && n > maxProperties) errs.push(schemaErrors.tooManyProperties(path.text(), n, maxProperties));
    }
    if (embedded) checkEmbedded(v, path, errs);
    for (const key of Object.keys(v)) {
      if (errs.length > maxListedErrors) return count;
      const check = props.get(key) ?? extra;
      if (!check) continue;
      path.push(key);
      count += check(v[key], path, errs);
      path.pop();
    }
    for (const name of required) if (!hasOwn(v, name)) errs.push(schemaErrors.required(childPath(path.text(), name)));
    return count;
  };
}

/** Items, then minItems, maxItems, uniqueness and the list type's own rules; the matches the items' checks count. */
function compileArray(s: JSONSchemaProps, listType: string | undefined, mapKeys: string[]): (v: unknown[], path: Path, errs: FieldError[]) => number {
  const items = s.items ? compileNode(s.items) : undefined;
  const { minItems, maxItems } = s;
  const unique = s.uniqueItems === true;
  return (v, path, errs) => {
    let count = 0;
    if (items) {
      for (let i = 0; i < v.length && errs.length <= maxListedErrors; i++) {
        path.push(i);
        count += items(v[i], path, errs);
        path.pop();
      }
    }
    if (minItems !== undefined && v.length < minItems) errs.push(schemaErrors.tooFewItems(path.text(), v.length, minItems));
    if (maxItems !== undefined && v.length > maxItems) errs.push(schemaErrors.tooManyItems(path.text(), v.length, maxItems));
    if (unique && hasDuplicates(v)) errs.push(schemaErrors.duplicateItems(path.text()));
    if (listType === 'set') checkSet(v, path, errs);
    else if (listType === 'map') checkListMap(v, path, mapKeys, errs);
    return count;
  };
}

/** The index of each item whose value appeared once before it (a third appearance is not reported again, as upstream). */
function repeatedIndices(keys: readonly unknown[]): number[] {
  const seen = new Set<unknown>(), reported = new Set<unknown>();
  const out: number[] = [];
  keys.forEach((k, i) => {
    if (!seen.has(k)) seen.add(k);
    else if (!reported.has(k)) {
      reported.add(k);
      out.push(i);
    }
  });
  return out;
}

/** Items of a `set` list are unique: scalars (the usual set) compared as they are, objects and lists by their canonical text. */
function checkSet(v: unknown[], path: Path, errs: FieldError[]): void {
  const scalars = v.every((x) => x === null || typeof x !== 'object');
  for (const i of repeatedIndices(scalars ? v : v.map(canonicalKey))) {
    if (errs.length > maxListedErrors) return;
    errs.push(fieldErrors.duplicate(`${fieldOf(path.text())}[${i}]`, v[i]));
  }
}

/** Items of a `map` list are objects (or null), no two with the same key fields; a missing key is a value of its own. */
function checkListMap(v: unknown[], path: Path, keys: string[], errs: FieldError[]): void {
  for (let i = 0; i < v.length; i++) {
    if (v[i] !== null && !isObject(v[i])) {
      errs.push(fieldErrors.invalid(`${fieldOf(path.text())}[${i}]`, v[i], 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (distinctStringKeys(v, keys)) return;
  const keyValues = (item: unknown): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (isObject(item)) for (const k of keys) if (hasOwn(item, k)) out[k] = item[k];
    return out;
  };
  const ids = v.map((item) => canonicalKey(keys.map((k) => (isObject(item) && hasOwn(item, k) ? [item[k]] : []))));
  for (const i of repeatedIndices(ids)) {
    if (errs.length > maxListedErrors) return;
    errs.push(fieldErrors.duplicate(`${fieldOf(path.text())}[${i}]`, keyValues(v[i])));
  }
}

/** Whether every item sets its one key field to a string, each a different one (the usual list-map: nothing to report). */
function distinctStringKeys(v: unknown[], keys: string[]): boolean {
  if (keys.length !== 1) return false;
  const key = keys[0]!;
  const seen = new Set<string>();
  for (const item of v) {
    const k = isObject(item) && hasOwn(item, key) ? item[key] : undefined;
    if (typeof k !== 'string' || seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}

const groupVersionRe = /^([^/]+\/)?[^/]+$/;

/** An embedded object carries apiVersion and kind of its own (metadata is optional). */
function checkEmbedded(v: Record<string, unknown>, path: Path, errs: FieldError[]): void {
  for (const field of ['apiVersion', 'kind'] as const) {
    const at = () => childPath(path.text(), field);
    if (!hasOwn(v, field)) { errs.push(fieldErrors.required(fieldOf(at()))); continue; }
    const value = v[field];
    if (typeof value !== 'string') errs.push(fieldErrors.invalid(fieldOf(at()), value, 'must be a string'));
    else if (value === '') errs.push(fieldErrors.invalid(fieldOf(at()), value, 'must not be empty'));
    else if (field === 'apiVersion' && !groupVersionRe.test(value)) {
      errs.push(fieldErrors.invalid(fieldOf(at()), value, `unexpected GroupVersion string: ${value}`));
    }
  }
}

/** Whether two items are equal: one pass with a set of their canonical texts (comparing each pair was quadratic). */
function hasDuplicates(v: unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of v) {
    const key = canonicalKey(item);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/**
 * A text equal for equal JSON values and different otherwise: objects' keys
 * in order, a bigint marked (JSON.stringify refuses one, and 1n is not 1).
 * Depth is bounded by the decoder.
 */
function canonicalKey(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalKey).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalKey(o[k])}`).join(',')}}`;
}

function isMultiple(v: number, factor: number): boolean {
  const q = v / factor;
  return Math.abs(q - Math.round(q)) < 1e-9;
}

function countRunes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
