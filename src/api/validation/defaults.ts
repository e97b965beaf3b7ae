// Defaulting from the schema's `default`, compiled once: a missing field (or
// a null one where the schema is not nullable) gets a copy of its default,
// then the walk goes on inside it, so defaults nest (an object defaulted to
// `{}` picks up its own fields' defaults) and reach every list item and map
// value. Upstream applies these on decode and again when reading a stored
// object, so a default added later shows on objects stored before it.
// Also what a definition's defaults must be (checkDefaults, upstream's
// ValidateDefaults) and their pruning when a definition is served.

import { FieldError, fieldErrors, GoLiteral } from '../../machinery/errors.js';
import { setOwn } from '../../machinery/ownkeys.js';
import type { Budget } from './cel/rules.js';
import { cel, schemaNeeds } from './engines.js';
import { compilePruner } from './pruning.js';
import { JSONSchemaProps, markersOf, propertiesOf } from './structural.js';
import { compileValidator } from './validator.js';
import { isObject } from './path.js';

/** Fills defaults into `value` in place. */
export type Defaulter = (value: unknown) => void;

const nothing: Defaulter = () => {};

/** Compiles `schema` into a defaulter; a schema without any `default` compiles to a no-op. */
export function compileDefaulter(schema: JSONSchemaProps): Defaulter {
  return compileNode(schema) ?? nothing;
}

/** A default's value for one object: a scalar as it is, an object or list copied (structuredClone costs a microsecond even for a string). */
function freshCopy(value: unknown): () => unknown {
  return typeof value === 'object' && value !== null ? () => structuredClone(value) : () => value;
}

function compileNode(s: JSONSchemaProps): Defaulter | undefined {
  const steps: Defaulter[] = [];
  const props: [string, JSONSchemaProps, Defaulter | undefined, () => unknown][] = [];
  for (const [name, p] of propertiesOf(s)) {
    const inner = compileNode(p);
    if (p.default !== undefined || inner) props.push([name, p, inner, freshCopy(p.default)]);
  }
  if (props.length) {
    steps.push((v) => {
      if (!isObject(v)) return;
      for (const [name, p, inner, fresh] of props) {
        const has = Object.prototype.hasOwnProperty.call(v, name);
        if (p.default !== undefined && (!has || (v[name] === null && p.nullable !== true))) setOwn(v, name, fresh());
        if (inner && Object.prototype.hasOwnProperty.call(v, name)) inner(v[name]);
      }
    });
  }
  const values = typeof s.additionalProperties === 'object' ? compileValueDefaults(s.additionalProperties) : undefined;
  if (values) steps.push((v) => { if (isObject(v)) for (const key of Object.keys(v)) v[key] = values(v[key]); });
  const items = s.items ? compileValueDefaults(s.items) : undefined;
  if (items) steps.push((v) => { if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = items(v[i]); });
  if (!steps.length) return undefined;
  return steps.length === 1 ? steps[0] : (v) => { for (const step of steps) step(v); };
}

/** For list items and map values: a null item takes the item schema's default, then defaults inside it. */
function compileValueDefaults(s: JSONSchemaProps): ((v: unknown) => unknown) | undefined {
  const inner = compileNode(s);
  if (s.default === undefined && !inner) return undefined;
  const fresh = freshCopy(s.default);
  return (v) => {
    const out = v === null && s.default !== undefined && s.nullable !== true ? fresh() : v;
    inner?.(out);
    return out;
  };
}

/**
 * Every problem of the defaults in `schema` (paths under `base`), as
 * upstream's ValidateDefaults: a default must have no field its schema would
 * prune (unless `prunedDefaults` is off: an update of a definition that
 * already had such a default), must validate against its own schema, and,
 * when it does and `rules` is on (the schema is otherwise sound), must pass
 * the CEL rules of its node and below: once as an update from itself, once
 * as a create, under one cost budget for the whole schema. Inside the
 * metadata, apiVersion and kind of a resource nothing is pruned.
 */
export function checkDefaults(schema: JSONSchemaProps, base: string, opts: { prunedDefaults: boolean; rules: boolean }): FieldError[] {
  const errs: FieldError[] = [];
  // One budget for the whole schema, made when the first rules run (CEL is loaded when there are any).
  let budget: Budget | undefined;
  walkDefaults(schema, base, true, false, (s, path, resourceRoot, insideMeta) => {
    if (opts.prunedDefaults && !insideMeta && unpruned(s, resourceRoot)) errs.push(fieldErrors.invalid(`${path}.default`, new GoLiteral(goSyntax(s.default)), 'must not have unknown fields'));
    const found = schemaErrorsOf(s, `${path}.default`);
    errs.push(...found);
    if (found.length || !opts.rules || (budget && budget.remaining < 0)) return;
    // Only a default under rules needs CEL (loaded by then: see engines.ts).
    const rules = schemaNeeds(s).rules ? cel().compileRules(s) : undefined;
    if (!rules) return;
    budget ??= { remaining: cel().costLimits.perRequest };
    const before = errs.length;
    rules(s.default, s.default, `${path}.default`, errs, budget);
    if (errs.length === before && budget.remaining >= 0) rules(s.default, undefined, `${path}.default`, errs, budget);
  });
  return errs;
}

/** Whether any default in `schema` has fields its schema prunes (upstream's schemaHasUnprunedDefaults). */
export function hasUnprunedDefaults(schema: JSONSchemaProps): boolean {
  let found = false;
  walkDefaults(schema, '', true, false, (s, _path, resourceRoot, insideMeta) => { if (!insideMeta && unpruned(s, resourceRoot)) found = true; });
  return found;
}

/**
 * A copy of `schema` whose defaults hold only what their schema keeps
 * (upstream's PruneDefaults when it serves a definition): a definition
 * stored before its defaults were checked never adds unknown fields to
 * objects. Defaults inside metadata are left as they are.
 */
export function pruneDefaults(schema: JSONSchemaProps): JSONSchemaProps {
  const copy = structuredClone(schema);
  walkDefaults(copy, '', true, false, (s, _path, resourceRoot, insideMeta) => { if (!insideMeta) compilePruner(s, resourceRoot)(s.default); });
  return copy;
}

type DefaultVisit = (s: JSONSchemaProps, path: string, resourceRoot: boolean, insideMeta: boolean) => void;

/** Visits every node with a default; an embedded resource starts a resource of its own, whose metadata, apiVersion and kind are "inside meta". */
function walkDefaults(s: JSONSchemaProps, path: string, resourceRoot: boolean, insideMeta: boolean, visit: DefaultVisit): void {
  if (typeof s !== 'object' || s === null) return;
  const embedded = resourceRoot || markersOf(s).embeddedResource;
  const meta = embedded ? false : insideMeta;
  if (s.default !== undefined) visit(s, path, embedded, meta);
  if (s.items && typeof s.items === 'object') walkDefaults(s.items, `${path}.items`, false, meta, visit);
  for (const [name, p] of propertiesOf(s)) {
    walkDefaults(p, `${path}.properties[${name}]`, false, meta || (embedded && resourceFields.has(name)), visit);
  }
  if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) {
    walkDefaults(s.additionalProperties, `${path}.additionalProperties`, false, meta, visit);
  }
}

const resourceFields = new Set(['apiVersion', 'kind', 'metadata']);

/** Whether pruning a copy of the node's default by the node's schema drops a field. */
function unpruned(s: JSONSchemaProps, resourceRoot: boolean): boolean {
  if (typeof s.default !== 'object' || s.default === null) return false;
  return compilePruner(s, resourceRoot)(structuredClone(s.default)).length > 0;
}

/** The default checked against its own node's schema, errors under `<path>.default`. */
function schemaErrorsOf(s: JSONSchemaProps, at: string): FieldError[] {
  const found: FieldError[] = [];
  compileValidator(s)(s.default, '', found);
  return found.map((e) => new FieldError(e.type, `${at}${e.field === '<nil>' ? '' : `.${e.field}`}`, e.detail.replace(/^ in body/, 'in body'), e.badValue, e.hasValue));
}

/** A JSON value as Go's %#v prints it decoded (upstream prints a default that way): maps with sorted keys, int64 and float64 numbers. */
function goSyntax(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSyntax).join(', ')}}`;
  const o = v as Record<string, unknown>;
  return `map[string]interface {}{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${goSyntax(o[k])}`).join(', ')}}`;
}
