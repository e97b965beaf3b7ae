// The structural validator: a schema compiled once into closures, one per
// node, each holding only the checks its node declares; validating an object
// runs them and collects every failure (nothing stops at the first one), in
// the wording and field paths of upstream's schema validator. The list-type
// and embedded-resource checks, which upstream runs as passes of their own,
// run in the same walk. The walk is linear in the object (sets, never pairs
// of items) and stops once more errors than a 422 lists are collected
// (`maxListedErrors`), so a request's validation is bounded in time and in
// the size of its answer, however hostile the object.

import { RE2JS } from '@bufbuild/re2';
import { FieldError, fieldErrors, maxListedErrors } from '../../machinery/errors.js';
import { hasOwn } from '../../machinery/ownkeys.js';
import { formatCheck } from './formats.js';
import { fieldOf, schemaErrors, supportedValues } from './messages.js';
import { JSONSchemaProps, markersOf } from './structural.js';

/** Checks one value at `path`, adding what fails to `errs`. */
export type NodeCheck = (value: unknown, path: string, errs: FieldError[]) => void;

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

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const childPath = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

/** Compiles `schema` into one check for values of it. */
export function compileValidator(schema: JSONSchemaProps): NodeCheck {
  return compileNode(schema);
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

function compileNode(s: JSONSchemaProps): NodeCheck {
  const m = markersOf(s);
  const checks: NodeCheck[] = [];
  const types = m.intOrString ? ['integer', 'string'] : s.type ? [s.type] : [];
  const typeName = types.join(',');

  // Scalars.
  if (s.enum) {
    const allowed = s.enum;
    // Scalars (nearly every enum) are found in a set; an object or a list by its canonical text, never compared one by one.
    const scalars = new Set(allowed.filter((a) => typeof a !== 'object' || a === null));
    const containers = new Set(allowed.filter((a) => typeof a === 'object' && a !== null).map(canonicalKey));
    const isAllowed = (v: unknown) => (typeof v !== 'object' || v === null ? scalars.has(v) : containers.size > 0 && containers.has(canonicalKey(v)));
    // The list of supported values is written once, at the first failure, and shared by every error of this node.
    let supported: string | undefined;
    checks.push((v, path, errs) => { if (!isAllowed(v)) errs.push(schemaErrors.enum(path, v, (supported ??= supportedValues(allowed)))); });
  }
  if (s.maxLength !== undefined || s.minLength !== undefined || s.pattern !== undefined || s.format) {
    const { maxLength, minLength } = s;
    const re = s.pattern !== undefined ? rememberedPattern(RE2JS.compile(s.pattern)) : undefined;
    const pattern = s.pattern ?? '';
    const formatTest = s.format && (types.length === 0 || types.includes('string')) ? formatCheck(s.format) : undefined;
    const format = formatTest && rememberedPattern({ test: formatTest });
    const formatName = s.format ?? '';
    checks.push((v, path, errs) => {
      if (typeof v !== 'string') return;
      // A string has at least half as many runes as UTF-16 units, and at most as many: most need no count.
      if ((maxLength !== undefined && v.length > maxLength) || (minLength !== undefined && v.length >> 1 < minLength)) {
        const runes = countRunes(v);
        if (maxLength !== undefined && runes > maxLength) errs.push(schemaErrors.tooLong(path, maxLength));
        if (minLength !== undefined && runes < minLength) errs.push(schemaErrors.tooShort(path, v, minLength));
      }
      if (re && !re.test(v)) errs.push(schemaErrors.pattern(path, v, pattern));
      if (format && !format.test(v)) errs.push(schemaErrors.format(path, formatName, v));
    });
  }
  if (s.multipleOf !== undefined || s.maximum !== undefined || s.minimum !== undefined) {
    const { multipleOf, maximum, minimum } = s;
    const exMax = s.exclusiveMaximum === true, exMin = s.exclusiveMinimum === true;
    checks.push((v, path, errs) => {
      if (typeof v !== 'number') return;
      if (multipleOf !== undefined && !isMultiple(v, multipleOf)) errs.push(schemaErrors.multipleOf(path, v, multipleOf));
      if (maximum !== undefined && (exMax ? v >= maximum : v > maximum)) errs.push(schemaErrors.maximum(path, v, maximum, exMax));
      if (minimum !== undefined && (exMin ? v <= minimum : v < minimum)) errs.push(schemaErrors.minimum(path, v, minimum, exMin));
    });
  }

  // Objects.
  if (s.properties || s.additionalProperties !== undefined || s.required || s.minProperties !== undefined || s.maxProperties !== undefined || m.embeddedResource) {
    checks.push(compileObject(s, m.embeddedResource));
  }

  // Arrays.
  if (s.items || s.minItems !== undefined || s.maxItems !== undefined || s.uniqueItems || m.listType === 'set' || m.listType === 'map') {
    checks.push(compileArray(s, m.listType, m.listMapKeys ?? []));
  }

  // Combinators.
  const allOf = (s.allOf ?? []).map(compileNode);
  const anyOf = (s.anyOf ?? []).map(compileNode);
  const oneOf = (s.oneOf ?? []).map(compileNode);
  const not = s.not ? compileNode(s.not) : undefined;
  if (anyOf.length) {
    checks.push((v, path, errs) => {
      let best: FieldError[] | undefined;
      for (const alt of anyOf) {
        const mine: FieldError[] = [];
        alt(v, path, mine);
        if (mine.length === 0) return;
        if (!best || mine.length < best.length) best = mine;
      }
      errs.push(schemaErrors.anyOf(path), ...best!);
    });
  }
  if (oneOf.length) {
    checks.push((v, path, errs) => {
      let valid = 0;
      let best: FieldError[] | undefined;
      for (const alt of oneOf) {
        const mine: FieldError[] = [];
        alt(v, path, mine);
        if (mine.length === 0) valid++;
        else if (!best || mine.length < best.length) best = mine;
      }
      if (valid === 1) return;
      errs.push(schemaErrors.oneOf(path, valid));
      if (valid === 0 && best) errs.push(...best);
    });
  }
  if (allOf.length) {
    checks.push((v, path, errs) => {
      let valid = 0;
      for (const alt of allOf) {
        const before = errs.length;
        alt(v, path, errs);
        if (errs.length === before) valid++;
      }
      if (valid !== allOf.length) errs.push(schemaErrors.allOf(path, valid === 0));
    });
  }
  if (not) {
    checks.push((v, path, errs) => {
      const mine: FieldError[] = [];
      not(v, path, mine);
      if (mine.length === 0) errs.push(schemaErrors.not(path));
    });
  }

  const nullable = s.nullable === true;
  const body: NodeCheck = checks.length === 1 ? checks[0]! : (v, path, errs) => { for (const c of checks) c(v, path, errs); };
  const typed = typeTest(types);
  return (v, path, errs) => {
    if (v === null || v === undefined) {
      if (types.length && !nullable) errs.push(schemaErrors.type(path, typeName, 'null'));
      return;
    }
    if (typed && !typed(v)) {
      errs.push(schemaErrors.type(path, typeName, jsonTypeOf(v)));
      return;
    }
    if (checks.length) body(v, path, errs);
  };
}

/**
 * Whether a value (not null) is of one of `types`, undefined when any is:
 * an integer is a number, a float with an integral value counts as an
 * integer (JSON has one number type). One test per node, no type name made.
 */
function typeTest(types: string[]): ((v: unknown) => boolean) | undefined {
  if (!types.length) return undefined;
  const one = (t: string): ((v: unknown) => boolean) => {
    switch (t) {
      case 'string': return (v) => typeof v === 'string';
      case 'boolean': return (v) => typeof v === 'boolean';
      case 'integer': return (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
      case 'number': return (v) => typeof v === 'number' || typeof v === 'bigint';
      case 'array': return Array.isArray;
      case 'object': return isObject;
      default: return (v) => jsonTypeOf(v) === t;
    }
  };
  if (types.length === 1) return one(types[0]!);
  const tests = types.map(one);
  return (v) => tests.some((test) => test(v));
}

function compileObject(s: JSONSchemaProps, embedded: boolean): NodeCheck {
  const props = new Map<string, NodeCheck>();
  for (const [name, p] of Object.entries(s.properties ?? {})) props.set(name, compileNode(p));
  const extra = typeof s.additionalProperties === 'object' ? compileNode(s.additionalProperties) : undefined;
  const required = s.required ?? [];
  const { minProperties, maxProperties } = s;
  return (v, path, errs) => {
    if (!isObject(v)) return;
    if (minProperties !== undefined || maxProperties !== undefined) {
      const n = Object.keys(v).length;
      if (minProperties !== undefined && n < minProperties) errs.push(schemaErrors.tooFewProperties(path, n, minProperties));
      if (maxProperties !== undefined && n > maxProperties) errs.push(schemaErrors.tooManyProperties(path, n, maxProperties));
    }
    if (embedded) checkEmbedded(v, path, errs);
    for (const key of Object.keys(v)) {
      if (errs.length > maxListedErrors) return;
      const check = props.get(key) ?? extra;
      if (check) check(v[key], childPath(path, key), errs);
    }
    for (const name of required) if (!hasOwn(v, name)) errs.push(schemaErrors.required(childPath(path, name)));
  };
}

function compileArray(s: JSONSchemaProps, listType: string | undefined, mapKeys: string[]): NodeCheck {
  const items = s.items ? compileNode(s.items) : undefined;
  const { minItems, maxItems } = s;
  const unique = s.uniqueItems === true;
  return (v, path, errs) => {
    if (!Array.isArray(v)) return;
    if (items) for (let i = 0; i < v.length && errs.length <= maxListedErrors; i++) items(v[i], `${path}[${i}]`, errs);
    if (minItems !== undefined && v.length < minItems) errs.push(schemaErrors.tooFewItems(path, v.length, minItems));
    if (maxItems !== undefined && v.length > maxItems) errs.push(schemaErrors.tooManyItems(path, v.length, maxItems));
    if (unique && hasDuplicates(v)) errs.push(schemaErrors.duplicateItems(path));
    if (listType === 'set') checkSet(v, path, errs);
    else if (listType === 'map') checkListMap(v, path, mapKeys, errs);
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
function checkSet(v: unknown[], path: string, errs: FieldError[]): void {
  const scalars = v.every((x) => x === null || typeof x !== 'object');
  for (const i of repeatedIndices(scalars ? v : v.map(canonicalKey))) {
    if (errs.length > maxListedErrors) return;
    errs.push(fieldErrors.duplicate(`${fieldOf(path)}[${i}]`, v[i]));
  }
}

/** Items of a `map` list are objects (or null), no two with the same key fields; a missing key is a value of its own. */
function checkListMap(v: unknown[], path: string, keys: string[], errs: FieldError[]): void {
  for (let i = 0; i < v.length; i++) {
    if (v[i] !== null && !isObject(v[i])) {
      errs.push(fieldErrors.invalid(`${fieldOf(path)}[${i}]`, v[i], 'must be an object for an array of list-type map'));
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
    errs.push(fieldErrors.duplicate(`${fieldOf(path)}[${i}]`, keyValues(v[i])));
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
function checkEmbedded(v: Record<string, unknown>, path: string, errs: FieldError[]): void {
  for (const field of ['apiVersion', 'kind'] as const) {
    const at = childPath(path, field);
    if (!hasOwn(v, field)) { errs.push(fieldErrors.required(fieldOf(at))); continue; }
    const value = v[field];
    if (typeof value !== 'string') errs.push(fieldErrors.invalid(fieldOf(at), value, 'must be a string'));
    else if (value === '') errs.push(fieldErrors.invalid(fieldOf(at), value, 'must not be empty'));
    else if (field === 'apiVersion' && !groupVersionRe.test(value)) {
      errs.push(fieldErrors.invalid(fieldOf(at), value, `unexpected GroupVersion string: ${value}`));
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
