// The `x-plat-validations` rules of a schema, compiled once into a walker
// that visits only the nodes holding rules (and the paths down to them).
// At each such node the value is turned into CEL values as its schema types
// it (typed.ts: ints, timestamps, durations, bytes, set and map lists), `oldSelf` is the correlated value of the
// object being replaced (same property, same map key, the list-map item with
// the same keys), and the rules run in order under upstream's two budgets:
// per call, and for the whole request. Failures are field errors in
// upstream's wording.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { hasOwn } from '../../../machinery/ownkeys.js';
import { fieldOf } from '../messages.js';
import { JSONSchemaProps, markersOf, propertiesOf, type ValidationRule } from '../structural.js';
import { isObject, Path } from '../path.js';
import { costLimits } from './cost.js';
import { optionalMaybe } from './optional.js';
import { compileExpression, costLimitExceeded, type Compiled, type Evaluation } from './program.js';
import { compileToCel } from './typed.js';
import { rememberedOutcomesFor } from './remembered.js';

export { compileToCel };

export interface RuleLimits {
  perCall?: number;
  perRequest?: number;
}

/** Remaining budget of one request; negative once a rule ran out. */
export interface Budget { remaining: number }

export type RuleWalk = (value: unknown, old: unknown, path: string, errs: FieldError[], budget: Budget) => void;

interface CompiledRule {
  rule: ValidationRule;
  program?: Compiled;
  message?: Compiled;
  compileError?: string;
  usesOldSelf: boolean;
  fieldPath: string;
}

const childPath = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

/** The walker of every rule in `schema`, or undefined when it has none. */
export function compileRules(schema: JSONSchemaProps, limits: RuleLimits = {}): RuleWalk | undefined {
  const perCall = limits.perCall ?? costLimits.perCall;
  const walk = compileNode(schema, perCall);
  return walk && ((value, old, path, errs, budget) => walk(value, old, new Path(path), errs, budget));
}

/** A node's walker inside the walk (RuleWalk with the walk's path, made into text only for an error). */
type Walk = (value: unknown, old: unknown, path: Path, errs: FieldError[], budget: Budget) => void;

/** Compiles one rule (and its messageExpression); compile errors are kept for the schema checker to report. */
export function compileRule(rule: ValidationRule): CompiledRule {
  const vars = ['self', 'oldSelf'];
  const program = compileExpression(rule.rule, vars);
  const message = rule.messageExpression ? compileExpression(rule.messageExpression, vars) : undefined;
  const compileError = typeof program === 'string' ? program : typeof message === 'string' ? message : undefined;
  return {
    rule,
    program: typeof program === 'string' ? undefined : program,
    message: typeof message === 'string' ? undefined : message,
    compileError,
    usesOldSelf: typeof program !== 'string' && program.reads.has('oldSelf'),
    fieldPath: normalizeFieldPath(rule.fieldPath ?? ''),
  };
}

/** `.spec.replicas` → `spec.replicas`, `['a.b']` → `[a.b]` (how upstream prints the normalized path). */
function normalizeFieldPath(p: string): string {
  return p.replace(/\[\s*'((?:[^'\\]|\\.)*)'\s*\]/g, (_m, key: string) => `[${key.replace(/\\(.)/g, '$1')}]`).replace(/^\./, '');
}

function compileNode(s: JSONSchemaProps, perCall: number): Walk | undefined {
  const m = markersOf(s);
  const rules = (m.validations ?? []).map(compileRule);
  const toCel = compileToCel(s);
  const props: [string, Walk][] = [];
  for (const [name, p] of propertiesOf(s)) {
    const walk = compileNode(p, perCall);
    if (walk) props.push([name, walk]);
  }
  const values = typeof s.additionalProperties === 'object' ? compileNode(s.additionalProperties, perCall) : undefined;
  const items = s.items ? compileNode(s.items, perCall) : undefined;
  if (!rules.length && !props.length && !values && !items) return undefined;
  const typeName = m.intOrString ? '' : s.type ?? '';
  const correlate = itemCorrelation(m.listType, m.listMapKeys ?? []);
  const remembered = rules.length ? rememberedRules(s, rules) : undefined;

  return (v, old, path, errs, budget) => {
    if (v === null || v === undefined || budget.remaining < 0) return;
    if (remembered) remembered(v, old, toCel, typeName, path, errs, budget, perCall);
    else if (rules.length) runRules(rules, v, old, toCel, typeName, path, errs, budget, perCall);
    if (props.length && isObject(v)) {
      const o = isObject(old) ? old : undefined;
      for (const [name, walk] of props) {
        if (!hasOwn(v, name)) continue;
        path.push(name);
        walk(v[name], o && hasOwn(o, name) ? o[name] : undefined, path, errs, budget);
        path.pop();
      }
    }
    if (values && isObject(v)) {
      const o = isObject(old) ? old : undefined;
      for (const key of Object.keys(v)) {
        path.push(key);
        values(v[key], o && hasOwn(o, key) ? o[key] : undefined, path, errs, budget);
        path.pop();
      }
    }
    if (items && Array.isArray(v)) {
      const find = correlate(Array.isArray(old) ? old : undefined);
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        items(v[i], find(v[i]), path, errs, budget);
        path.pop();
      }
    }
  };
}

/** How an item finds its old self: by keys in a list-map, by value in a set; atomic lists have none. */
function itemCorrelation(listType: string | undefined, keys: string[]): (old: unknown[] | undefined) => (item: unknown) => unknown {
  if (listType === 'map') {
    return (old) => {
      if (!old) return () => undefined;
      const byKey = new Map<string, unknown>();
      for (const o of old) if (isObject(o)) byKey.set(JSON.stringify(keys.map((k) => o[k])), o);
      return (item) => (isObject(item) ? byKey.get(JSON.stringify(keys.map((k) => item[k]))) : undefined);
    };
  }
  if (listType === 'set') {
    return (old) => {
      if (!old) return () => undefined;
      const values = new Set(old.map((o) => JSON.stringify(o)));
      return (item) => (values.has(JSON.stringify(item)) ? item : undefined);
    };
  }
  return () => () => undefined;
}

/**
 * The node's rules, their passing outcomes remembered by the fields they
 * read (remembered.ts); undefined when they read more than fields of `self`.
 * A remembered pass charges its cost without running (only when the
 * request's budget holds it: then no rule of the run met a limit either).
 */
function rememberedRules(s: JSONSchemaProps, rules: CompiledRule[]): NodeRules | undefined {
  if (rules.some((r) => !r.program)) return undefined;
  const outcomes = rememberedOutcomesFor(s, rules.map((r) => r.program!.ast));
  if (!outcomes) return undefined;
  // Rules reading oldSelf depend on it when there is one: remembered only for creates (and nodes new in an update).
  const readsOld = rules.some((r) => r.program!.reads.has('oldSelf'));
  return (v, old, toCel, typeName, path, errs, budget, perCall) => {
    const cost = outcomes.paused() || (readsOld && old !== undefined && old !== null) ? null : outcomes.get(v);
    if (cost === null) { runRules(rules, v, old, toCel, typeName, path, errs, budget, perCall); return; }
    if (cost !== undefined && budget.remaining >= cost) { budget.remaining -= cost; return; }
    const before = budget.remaining, found = errs.length;
    runRules(rules, v, old, toCel, typeName, path, errs, budget, perCall);
    if (errs.length === found && budget.remaining >= 0) outcomes.keep(before - budget.remaining);
  };
}

/** Runs the rules of one node over its value `v` (see runRules). */
type NodeRules = (v: unknown, old: unknown, toCel: (v: unknown) => unknown, typeName: string,
  path: Path, errs: FieldError[], budget: Budget, perCall: number) => void;

function runRules(rules: CompiledRule[], v: unknown, old: unknown, toCel: (v: unknown) => unknown, typeName: string,
  path: Path, errs: FieldError[], budget: Budget, perCall: number): void {
  const self = toCel(v);
  let oldSelf: unknown;
  // The variables in the order compileRule declares them, shared by the rules of this node (oldSelf set once it is read).
  const vars: unknown[] = [self, undefined];
  for (const r of rules) {
    if (budget.remaining < 0) return;
    if (!r.program) {
      errs.push(fieldErrors.invalid(fieldOf(path.text()), typeName, `rule compile error: ${r.compileError}`));
      continue;
    }
    const hasOld = old !== undefined && old !== null;
    if (r.usesOldSelf && !hasOld && !r.rule.optionalOldSelf) continue;
    if (r.usesOldSelf && oldSelf === undefined && hasOld) oldSelf = toCel(old);
    vars[1] = r.rule.optionalOldSelf ? optionalMaybe(hasOld ? oldSelf : undefined) : oldSelf;
    const result = r.program.evalValues(vars, Math.min(perCall, budget.remaining));
    if (result.exceeded || result.error !== undefined || result.value !== true) ruleFailed(r, result, v, vars, typeName, path, errs, budget, perCall);
    else budget.remaining -= result.cost;
    if (budget.remaining < 0) return;
  }
}

/** What a rule that did not pass adds: a field error, and the budget spent (none left when it ran out). */
function ruleFailed(r: CompiledRule, result: Evaluation, v: unknown, vars: readonly unknown[], typeName: string,
  path: Path, errs: FieldError[], budget: Budget, perCall: number): void {
  const text = path.text();
  const field = fieldOf(text);
  const ruleText = (r.rule.message?.trim() || r.rule.rule.trim());
  if (result.exceeded) {
    if (result.cost > budget.remaining) {
      errs.push(fieldErrors.invalid(field, typeName, 'validation failed due to running out of cost budget, no further validation rules will be run'));
    } else {
      errs.push(fieldErrors.invalid(field, typeName, `'${costLimitExceeded}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText}`));
    }
    budget.remaining = -1;
    return;
  }
  budget.remaining -= result.cost;
  if (result.error !== undefined) {
    if (result.error.startsWith('no such overload') || result.error.startsWith('unbound function')) {
      errs.push(fieldErrors.invalid(field, typeName, `'${result.error}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`));
    } else {
      errs.push(fieldErrors.invalid(field, typeName, `${result.error} evaluating rule: ${ruleText}`));
    }
    return;
  }
  const at = r.fieldPath ? fieldOf(childPath(text, r.fieldPath).replace(/\.\[/g, '[')) : field;
  let detail = r.rule.message?.trim() ? r.rule.message.trim() : `failed rule: ${ruleText}`;
  if (r.message) {
    const msg = r.message.evalValues(vars, Math.min(perCall, budget.remaining));
    if (msg.exceeded) {
      errs.push(fieldErrors.invalid(at, typeName, `messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run`));
      budget.remaining = -1;
      return;
    }
    budget.remaining -= msg.cost;
    if (typeof msg.value === 'string' && msg.value.trim() !== '' && !msg.value.includes('\n')) detail = msg.value.trim();
  }
  // Upstream 1.32 names the node's schema type as the value (`Invalid value: "object"`), never the data.
  errs.push(errorForReason(r.rule.reason, at, typeName, detail));
}

function errorForReason(reason: string | undefined, field: string, typeName: string, detail: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden': return fieldErrors.forbidden(field, detail);
    case 'FieldValueRequired': return fieldErrors.required(field, detail);
    case 'FieldValueDuplicate': return fieldErrors.duplicate(field, typeName);
    default: return fieldErrors.invalid(field, typeName, detail);
  }
}
