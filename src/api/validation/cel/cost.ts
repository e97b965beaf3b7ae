// Static cost estimation of a validation rule, as upstream refuses a rule
// whose worst case is too dear when its schema is declared. @bufbuild/cel
// has no estimator, so this one walks the parsed expression with the sizes
// the schema allows: a string's maxLength, a list's maxItems, a map's
// maxProperties, or, where the schema sets no bound, as many as fit in the
// largest request (3 MiB), as upstream assumes. The cost model follows
// upstream's: 1 per variable read, field selection and call; string work a
// tenth of the string's length; list work the list's length; a comprehension
// (all, exists, map, filter) its body's cost per element. The rule's cost is
// then multiplied by how many times it can run (the product of the bounds of
// the lists and maps above its node).
//
// An authorization check costs 350,000, as upstream, so an expression may
// make two within the per-call limit.
//
// Not estimated as upstream does: the exact per-function factors of
// upstream's estimator (regex compilation, `matches` against the pattern's
// length, quantity and URL parsing count as one call plus their string).

import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { JSONSchemaProps } from '../structural.js';
import { authorizationCheckCost } from './callcost.js';
import { typedStringFormats } from './typed.js';

/** Upstream's limits (k8s.io/apiserver/pkg/apis/cel/config.go). */
export const costLimits = {
  perCall: 1_000_000,
  perRequest: 10_000_000,
  /** One rule's estimated cost, times its cardinality. */
  perRule: 10_000_000,
  /** All rules of one schema. */
  perSchema: 100_000_000,
  /** The match conditions of one webhook, per request. */
  matchConditions: 2_500_000,
};

export const maxRequestSizeBytes = 3 * 1024 * 1024;

interface Estimate { cost: number; size: number; schema?: JSONSchemaProps }

function minSerializedSize(s: JSONSchemaProps | undefined): number {
  switch (s?.type) {
    case 'boolean': return 4;
    case 'integer': case 'number': return 1;
    default: return 2; // "" {} []
  }
}

/** The largest size a value of `s` can have (string length, item or property count). */
export function maxSize(s: JSONSchemaProps | undefined): number {
  if (!s) return maxRequestSizeBytes;
  // A timestamp or duration is one value, as upstream's declared types size it.
  if (s.type === 'string') return typedStringFormats.has(s.format ?? '') ? 1 : s.maxLength ?? maxRequestSizeBytes - 2;
  if (s.type === 'array') return s.maxItems ?? Math.floor((maxRequestSizeBytes - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'object') {
    const values = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    if (values) return s.maxProperties ?? Math.floor((maxRequestSizeBytes - 2) / (minSerializedSize(values) + 4));
    return Object.keys(s.properties ?? {}).length;
  }
  return 1;
}

function childSchema(s: JSONSchemaProps | undefined, name: string): JSONSchemaProps | undefined {
  if (!s) return undefined;
  if (s.properties && Object.prototype.hasOwnProperty.call(s.properties, name)) return s.properties[name];
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

function elementSchema(s: JSONSchemaProps | undefined): JSONSchemaProps | undefined {
  if (!s) return undefined;
  if (s.type === 'array') return s.items;
  // Iterating a map yields its keys.
  if (s.type === 'object') return { type: 'string' };
  return undefined;
}

const stringWork = new Set(['contains', 'startsWith', 'endsWith', 'matches', 'lowerAscii', 'upperAscii', 'trim', 'replace', 'split', 'substring',
  'indexOf', 'lastIndexOf', 'find', 'findAll', 'join', 'url', 'isURL', 'quantity', 'isQuantity', 'ip', 'isIP', 'cidr', 'isCIDR', 'validate', 'charAt', 'format']);
const listWork = new Set(['sum', 'min', 'max', 'isSorted', '@in', 'join', 'indexOf', 'lastIndexOf', '_+_']);

// The sets library's calls cost their lists' sizes multiplied (twice for equivalence).
const setFunctions = new Map([['sets.contains', 1], ['sets.intersects', 1], ['sets.equivalent', 2]]);

/** `sets.contains(...)` reads as a call of `contains` on the identifier `sets`: the qualified name, when it is one. */
function namespacedName(target: Expr | undefined, name: string, scope: Map<string, unknown>): string | undefined {
  const t = target?.exprKind;
  if (t?.case !== 'identExpr' || scope.has(t.value.name)) return undefined;
  return `${t.value.name}.${name}`;
}

/** The estimated cost of `ast` with the variables' schemas. */
export function estimateCost(ast: Expr, vars: Record<string, JSONSchemaProps | undefined>): number {
  return walk(ast, new Map(Object.entries(vars))).cost;
}

function walk(e: Expr, scope: Map<string, JSONSchemaProps | undefined>): Estimate {
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr': {
      const c = k.value.constantKind;
      return { cost: 0, size: c.case === 'stringValue' ? c.value.length : 1 };
    }
    case 'identExpr': {
      const s = scope.get(k.value.name);
      return { cost: 1, size: maxSize(s), schema: s };
    }
    case 'selectExpr': {
      const operand = k.value.operand ? walk(k.value.operand, scope) : { cost: 0, size: 1 };
      const s = childSchema(operand.schema, k.value.field);
      return { cost: operand.cost + 1, size: k.value.testOnly ? 1 : maxSize(s), schema: k.value.testOnly ? undefined : s };
    }
    case 'callExpr': {
      const qualified = namespacedName(k.value.target, k.value.function, scope);
      if (qualified) {
        const args = k.value.args.map((a) => walk(a, scope));
        let cost = 1;
        for (const a of args) cost += a.cost;
        const factor = setFunctions.get(qualified);
        if (factor !== undefined && args.length === 2) cost += factor * args[0]!.size * args[1]!.size;
        return { cost, size: 1 };
      }
      const name = k.value.function;
      // `a.?f` is a field selection of `a`, optional.
      const optionalField = name === '_?._' ? k.value.args[1]?.exprKind : undefined;
      if (optionalField?.case === 'constExpr' && optionalField.value.constantKind.case === 'stringValue') {
        const operand = walk(k.value.args[0]!, scope);
        const s = childSchema(operand.schema, optionalField.value.constantKind.value);
        return { cost: operand.cost + 1, size: maxSize(s), schema: s };
      }
      const parts = [...(k.value.target ? [walk(k.value.target, scope)] : []), ...k.value.args.map((a) => walk(a, scope))];
      let cost = name === 'check' ? authorizationCheckCost : 1;
      for (const p of parts) cost += p.cost;
      const biggest = parts.reduce((m, p) => Math.max(m, p.size), 0);
      if (stringWork.has(name) || name === '_==_' || name === '_!=_' || name === '_<_' || name === '_>_') cost += Math.ceil(biggest * 0.1);
      if (listWork.has(name)) cost += biggest;
      const first = parts[0];
      const size = name === '_+_' ? parts.reduce((t, p) => t + p.size, 0) : name === 'size' ? 1 : first?.size ?? 1;
      return { cost, size, schema: name === '_[_]' || name === '_[?_]' ? elementSchema(first?.schema) ?? childSchema(first?.schema, '') : undefined };
    }
    case 'listExpr': {
      let cost = 0;
      for (const el of k.value.elements) cost += walk(el, scope).cost;
      return { cost, size: k.value.elements.length };
    }
    case 'structExpr': {
      let cost = 0;
      for (const en of k.value.entries) {
        if (en.keyKind.case === 'mapKey') cost += walk(en.keyKind.value, scope).cost;
        if (en.value) cost += walk(en.value, scope).cost;
      }
      return { cost, size: k.value.entries.length };
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const range = c.iterRange ? walk(c.iterRange, scope) : { cost: 0, size: 0 };
      const inner = new Map(scope);
      inner.set(c.iterVar, elementSchema(range.schema));
      if (c.iterVar2) inner.set(c.iterVar2, range.schema?.type === 'array' ? range.schema.items : childSchema(range.schema, ''));
      // The accumulator of map/filter grows to the range's size at most.
      inner.set(c.accuVar, { type: 'array', maxItems: range.size, items: elementSchema(range.schema) });
      const init = c.accuInit ? walk(c.accuInit, scope).cost : 0;
      const step = (c.loopStep ? walk(c.loopStep, inner).cost : 0) + (c.loopCondition ? walk(c.loopCondition, inner).cost : 0);
      const result = c.result ? walk(c.result, inner).cost : 0;
      return { cost: range.cost + init + range.size * step + result, size: range.size };
    }
    default:
      return { cost: 0, size: 1 };
  }
}

/** How many times a rule at the end of `ancestors` (root first) can run: the bounds of the lists and maps above it multiplied. */
export function cardinalityOf(ancestors: JSONSchemaProps[]): number {
  let n = 1;
  for (let i = 0; i < ancestors.length - 1; i++) {
    const s = ancestors[i]!;
    const next = ancestors[i + 1]!;
    const viaItems = s.items === next;
    const viaValues = typeof s.additionalProperties === 'object' && s.additionalProperties === next;
    if (viaItems || viaValues) n *= maxSize(s);
  }
  return n;
}

/** Upstream's refusal message for a cost over its limit. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule(s), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

