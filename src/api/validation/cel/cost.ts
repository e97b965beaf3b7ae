// Static cost estimation of a rule, as upstream refuses a rule whose worst
// case is too dear when its schema is declared. @bufbuild/cel has no
// estimator, so this is cel-go's (checker/cost.go) re-expressed over our
// syntax tree, with Kubernetes' call costs (apiserver's library
// CostEstimator) and apiextensions' sizes: every figure is a [min, max]
// range that saturates at 2^64 as upstream's uint64 arithmetic does.
//
// Sizes come from the schema as upstream's SchemaDeclType derives them: a
// string's maxLength times 4 (bytes per code point), else its longest enum
// value, else as many characters as fit in the largest request (3 MiB); a
// list's maxItems, else how many of its smallest items fit in a request; a
// map's maxProperties likewise. A value reached from a variable through
// fields, items and map values is sized by its schema; a value computed by
// a call is sized by the call (concatenation adds, `format` has no bound);
// a scalar is one. Property names are matched in their escaped CEL form
// (escaping.ts).
//
// cel-go picks costs by overload, which needs types: the light type
// inference here knows the schema's types, the literals' and the result
// types of the calls whose cost depends on them; what it cannot know is
// `dyn`, costed as upstream costs a dyn value.
//
// A rule's cost is then multiplied by how many times it can run: the
// product of the maxItems and maxProperties of the lists and maps above it,
// or, once one of them is unbounded, how many copies of its node's smallest
// serialization fit in one request (apiextensions' MaxCardinality).

import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { markersOf, type JSONSchemaProps } from '../structural.js';
import { authorizationCheckCost } from './callcost.js';
import { escapePropertyName } from './escaping.js';

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

/** Go's math.MaxUint64, where upstream's sums and products saturate. */
export const unbounded = 2 ** 64;

const stringFactor = 0.1;
const regexFactor = 0.25;
/** Upstream's MaxNameFormatRegexSize: what `validate` charges per character. */
const maxNameFormatRegexSize = 128;

interface Range { min: number; max: number }
const fixed = (n: number): Range => ({ min: n, max: n });
const unknownRange: Range = { min: 0, max: unbounded };
const add = (a: Range, b: Range): Range => ({ min: Math.min(a.min + b.min, unbounded), max: Math.min(a.max + b.max, unbounded) });
const mulN = (x: number, y: number): number => (x === 0 || y === 0 ? 0 : Math.min(x * y, unbounded));
const mul = (a: Range, b: Range): Range => ({ min: mulN(a.min, b.min), max: mulN(a.max, b.max) });
const factorN = (x: number, f: number): number => (x >= unbounded ? unbounded : Math.min(Math.ceil(x * f), unbounded));
const byFactor = (a: Range, f: number): Range => ({ min: factorN(a.min, f), max: factorN(a.max, f) });
const union = (a: Range, b: Range): Range => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });

type Kind = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'null' | 'list' | 'map' | 'object'
  | 'dyn' | 'type' | 'optional' | 'opaque';

/** A CEL type with upstream's size facts (DeclType): the most elements and the smallest serialization of its values. */
export interface Decl {
  kind: Kind;
  maxElements: number;
  minSize: number;
  elem?: Decl;
  key?: Decl;
  /** An object's fields by their escaped names. */
  fields?: Map<string, Decl>;
}

const simple = (kind: Kind, minSize = 1): Decl => ({ kind, maxElements: 0, minSize });
const types = {
  bool: simple('bool', 4), int: simple('int'), uint: simple('uint'), double: simple('double'), string: simple('string', 2),
  bytes: simple('bytes', 2), timestamp: simple('timestamp', 12), duration: simple('duration', 3), null: simple('null', 4),
  dyn: simple('dyn'), type: simple('type'), opaque: simple('opaque'),
};
const listOf = (elem: Decl): Decl => ({ kind: 'list', maxElements: 0, minSize: 2, elem });
const optionalOf = (elem: Decl): Decl => ({ kind: 'optional', maxElements: 0, minSize: 1, elem });

const maxStringLength = maxRequestSizeBytes - 2;

/** Upstream's SchemaDeclType: undefined where rules cannot see the value. */
export function declOf(s: JSONSchemaProps | undefined, resourceRoot = false): Decl | undefined {
  if (!s) return undefined;
  const m = markersOf(s);
  if (m.intOrString) return { kind: 'dyn', maxElements: s.maxLength !== undefined ? zeroIfNegative(s.maxLength) * 4 : maxStringLength, minSize: 1 };
  switch (s.type) {
    case 'array': {
      const item = s.items ? declOf(s.items, markersOf(s.items).embeddedResource) : undefined;
      if (!item) return undefined;
      const max = s.maxItems !== undefined ? zeroIfNegative(s.maxItems) : Math.floor(maxStringLength / (item.minSize + 1));
      return { kind: 'list', maxElements: max, minSize: 2, elem: item };
    }
    case 'object': {
      if (typeof s.additionalProperties === 'object') {
        const value = declOf(s.additionalProperties, markersOf(s.additionalProperties).embeddedResource);
        if (!value) return undefined;
        const max = s.maxProperties !== undefined ? zeroIfNegative(s.maxProperties) : Math.floor(maxStringLength / (value.minSize + 6));
        return { kind: 'map', maxElements: max, minSize: 2, key: types.string, elem: value };
      }
      const props = resourceRoot || m.embeddedResource ? withTypeAndObjectMeta(s.properties ?? {}) : s.properties ?? {};
      const required = new Set(s.required ?? []);
      const fields = new Map<string, Decl>();
      let minSize = 2;
      for (const [name, p] of Object.entries(props)) {
        const d = declOf(p, markersOf(p).embeddedResource);
        if (!d) continue;
        const escaped = escapePropertyName(name);
        if (escaped !== undefined) fields.set(escaped, d);
        // Defaults are filled in by the server, so only required fields without one must be sent.
        if (required.has(name) && p.default === undefined) minSize += name.length + d.minSize + 4;
      }
      return { kind: 'object', maxElements: 0, minSize, fields };
    }
    case 'string':
      switch (s.format) {
        case 'byte': return { kind: 'bytes', maxElements: s.maxLength !== undefined ? zeroIfNegative(s.maxLength) : maxStringLength, minSize: 2 };
        case 'duration': return { kind: 'duration', maxElements: 32, minSize: 3 };
        case 'date': return { kind: 'timestamp', maxElements: 12, minSize: 12 };
        case 'date-time': return { kind: 'timestamp', maxElements: 32, minSize: 21 };
      }
      if (s.maxLength !== undefined) return { kind: 'string', maxElements: zeroIfNegative(s.maxLength) * 4, minSize: 2 };
      if (s.enum?.length) return { kind: 'string', maxElements: longestEnumValue(s.enum), minSize: 2 };
      return { kind: 'string', maxElements: maxStringLength, minSize: 2 };
    case 'boolean': return types.bool;
    case 'number': return types.double;
    case 'integer': return types.int;
  }
  return undefined;
}

const zeroIfNegative = (n: number): number => Math.max(0, n);

/** Go's len(): UTF-8 bytes. */
function longestEnumValue(values: unknown[]): number {
  let n = 0;
  for (const v of values) if (typeof v === 'string') n = Math.max(n, Buffer.byteLength(v));
  return n;
}

function withTypeAndObjectMeta(props: Record<string, JSONSchemaProps>): Record<string, JSONSchemaProps> {
  const meta = props.metadata;
  if (props.kind?.type === 'string' && props.apiVersion?.type === 'string' && meta?.type === 'object'
    && meta.properties?.name?.type === 'string' && meta.properties.generateName?.type === 'string') return props;
  return { ...props, kind: { type: 'string' }, apiVersion: { type: 'string' }, metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } } };
}

/** How many times data of `minSize` bytes can repeat in one request (apiextensions' maxCardinality). */
export function maxCardinality(minSize: number): number {
  return Math.floor(maxRequestSizeBytes / (minSize + 1));
}

/**
 * How many times a rule at the end of `ancestors` (root first) can run:
 * the product of the bounds of the lists and maps above it, or, when one
 * of them has none, how many copies of the rule's node fit in a request.
 */
export function cardinalityOf(ancestors: JSONSchemaProps[]): number {
  let n = 1;
  for (let i = 0; i < ancestors.length - 1; i++) {
    const s = ancestors[i]!;
    let bound: number | undefined = 1;
    if (s.type === 'array') bound = s.maxItems === undefined ? undefined : zeroIfNegative(s.maxItems);
    else if (s.type === 'object' && s.additionalProperties !== undefined && s.additionalProperties !== false) {
      bound = s.maxProperties === undefined ? undefined : zeroIfNegative(s.maxProperties);
    }
    if (bound === undefined) {
      const node = ancestors[ancestors.length - 1]!;
      return maxCardinality(declOf(node, ancestors.length === 1 || markersOf(node).embeddedResource)?.minSize ?? 1);
    }
    n = mulN(n, bound);
  }
  return n;
}

/** The cost of a rule's cost times its cardinality, saturating as upstream's multiplyWithOverflowGuard. */
export function ruleCost(cost: number, cardinality: number): number {
  return mulN(cost, cardinality);
}

// --- The estimator. ---

interface Entry { list: boolean; key: Range; val: Range }

interface Est {
  cost: Range;
  type: Decl;
  /** The size cel-go's computeSize would give; undefined is unknown. */
  size?: Range;
  /**
   * The schema node this expression's path reaches (upstream's EstimateSize
   * by Path()): undefined where it has no path (a call's result), null where
   * the path names nothing the schema declares.
   */
  path?: Decl | null;
  entry?: Entry;
  /** An int literal's value (split's limit). */
  int?: number;
}

interface Local { type: Decl; path?: Decl | null; size?: Range; entry?: Entry }

const isScalar = (t: Decl): boolean =>
  ['bool', 'double', 'duration', 'int', 'timestamp', 'uint'].includes(t.kind) || (t.kind === 'optional' && !!t.elem && isScalar(t.elem));

/** The size of a node, in cel-go's order: computed, then by path, then by type, then the variable's own. */
function sizeOf(e: Est): Range {
  return e.size ?? unknownRange;
}

function finish(e: Est, computed?: Range, local?: Local): Est {
  if (computed) return { ...e, size: computed };
  if (e.path) return { ...e, size: { min: 0, max: e.path.maxElements } };
  if (isScalar(e.type)) return { ...e, size: fixed(1) };
  if (local?.size) return { ...e, size: local.size };
  return e;
}

/** The estimated cost of `ast` (its max) with the variables' schemas; `roots` are resource roots. */
export function estimateCost(ast: Expr, vars: Record<string, JSONSchemaProps | undefined>, roots: ReadonlySet<string> = new Set()): number {
  const scope = new Map<string, Local[]>();
  for (const [name, s] of Object.entries(vars)) {
    const d = declOf(s, roots.has(name));
    scope.set(name, [{ type: d ?? types.dyn, path: d ?? null }]);
  }
  const self = scope.get('self')?.[0]?.path;
  return new Estimator(scope, self ?? null).cost(ast).cost.max;
}

/** The same for variables whose CEL types are already known (admission policies' object, request, params). */
export function estimateCostOfDecls(ast: Expr, vars: Record<string, Decl>): number {
  const scope = new Map<string, Local[]>();
  for (const [name, d] of Object.entries(vars)) scope.set(name, [{ type: d, path: d }]);
  return new Estimator(scope, null).cost(ast).cost.max;
}

class Estimator {
  /** `root` is what upstream's size estimator starts every path from (the rule's `self`). */
  constructor(private readonly scope: Map<string, Local[]>, private readonly root: Decl | null) {}

  /**
   * One step down a path. A path that does not start at a variable is one
   * step long, and upstream's estimator skips its first step as the
   * variable's: it lands on the root.
   */
  private step(from: Decl | null | undefined, how: 'elem' | 'key' | { field: string }): Decl | null {
    if (from === undefined) return this.root;
    if (from === null) return null;
    if (how === 'elem') return from.kind === 'list' || from.kind === 'map' ? from.elem ?? null : null;
    if (how === 'key') return from.kind === 'map' ? from.key ?? null : null;
    return from.kind === 'object' ? from.fields?.get(how.field) ?? null : null;
  }

  private push(name: string, l: Local): void { const s = this.scope.get(name) ?? []; s.push(l); this.scope.set(name, s); }
  private pop(name: string): void { this.scope.get(name)?.pop(); }
  private peek(name: string): Local | undefined { const s = this.scope.get(name); return s?.[s.length - 1]; }

  cost(e: Expr): Est {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind;
        switch (c.case) {
          case 'stringValue': return { cost: fixed(0), type: types.string, size: fixed([...c.value].length) };
          case 'bytesValue': return { cost: fixed(0), type: types.bytes, size: fixed(c.value.length) };
          case 'boolValue': return { cost: fixed(0), type: types.bool, size: fixed(1) };
          case 'int64Value': return { cost: fixed(0), type: types.int, size: fixed(1), int: Number(c.value) };
          case 'uint64Value': return { cost: fixed(0), type: types.uint, size: fixed(1) };
          case 'doubleValue': return { cost: fixed(0), type: types.double, size: fixed(1) };
          case 'nullValue': return { cost: fixed(0), type: types.null, size: fixed(1) };
          default: return { cost: fixed(0), type: types.dyn };
        }
      }
      case 'identExpr': {
        const l = this.peek(k.value.name);
        if (!l) return finish({ cost: fixed(1), type: identType(k.value.name), path: this.root });
        return finish({ cost: fixed(1), type: l.type, path: l.path, entry: l.entry }, undefined, l);
      }
      case 'selectExpr': {
        const operand = k.value.operand ? this.cost(k.value.operand) : { cost: fixed(0), type: types.dyn };
        if (k.value.testOnly) return { cost: add(operand.cost, fixed(1)), type: types.bool, size: fixed(1) };
        const t = operand.type;
        const selectCost = t.kind === 'map' || t.kind === 'object' ? 1 : 0;
        const field = t.kind === 'object' ? t.fields?.get(k.value.field) : t.kind === 'map' ? t.elem : undefined;
        return finish({ cost: add(operand.cost, fixed(selectCost)), type: field ?? types.dyn, path: this.step(operand.path, { field: k.value.field }) });
      }
      case 'listExpr': {
        let sum = fixed(0);
        let item: Range = { min: unbounded, max: 0 };
        if (k.value.elements.length === 0) item = fixed(0);
        let elem: Decl | undefined;
        for (const el of k.value.elements) {
          const x = this.cost(el);
          sum = add(sum, x.cost);
          item = union(item, sizeOf(x));
          elem = elem === undefined || elem.kind === x.type.kind ? x.type : types.dyn;
        }
        return { cost: add(sum, fixed(10)), type: listOf(elem ?? types.dyn), size: fixed(k.value.elements.length), entry: { list: true, key: fixed(1), val: item } };
      }
      case 'structExpr': {
        let sum = fixed(0);
        const isMap = !k.value.messageName;
        let key: Range = isMap && k.value.entries.length === 0 ? fixed(0) : { min: unbounded, max: 0 };
        let val: Range = { ...key };
        let valType: Decl | undefined;
        for (const en of k.value.entries) {
          if (en.keyKind.case === 'mapKey') { const kx = this.cost(en.keyKind.value); sum = add(sum, kx.cost); key = union(key, sizeOf(kx)); }
          if (en.value) {
            const v = this.cost(en.value);
            sum = add(sum, v.cost);
            val = union(val, sizeOf(v));
            valType = valType === undefined || valType.kind === v.type.kind ? v.type : types.dyn;
          }
        }
        if (!isMap) return { cost: add(sum, fixed(40)), type: types.opaque };
        return { cost: add(sum, fixed(30)), type: { kind: 'map', maxElements: 0, minSize: 2, key: types.string, elem: valType ?? types.dyn },
          size: fixed(k.value.entries.length), entry: { list: false, key, val } };
      }
      case 'comprehensionExpr':
        return this.comprehension(e);
      case 'callExpr':
        return this.call(e);
      default:
        return { cost: fixed(0), type: types.dyn };
    }
  }

  private comprehension(e: Expr): Est {
    const c = (e.exprKind as { case: 'comprehensionExpr'; value: import('@bufbuild/cel-spec/cel/expr/syntax_pb.js').Expr_Comprehension }).value;
    const range = c.iterRange ? this.cost(c.iterRange) : { cost: fixed(0), type: listOf(types.dyn), size: fixed(0) };
    const init = c.accuInit ? this.cost(c.accuInit) : { cost: fixed(0), type: types.dyn };
    const rangeIsList = range.entry ? range.entry.list : range.type.kind === 'list';
    // cel.bind: an empty range and a false condition, the accumulator holding the bound value.
    const loopFalse = c.loopCondition?.exprKind.case === 'constExpr' && c.loopCondition.exprKind.value.constantKind.case === 'boolValue'
      && c.loopCondition.exprKind.value.constantKind.value === false;
    if (c.iterRange?.exprKind.case === 'listExpr' && c.iterRange.exprKind.value.elements.length === 0 && loopFalse && c.accuVar !== '@result' && c.accuVar !== '__result__') {
      this.push(c.accuVar, { type: init.type, path: init.path, size: init.size, entry: init.entry });
      const result = c.result ? this.cost(c.result) : { cost: fixed(0), type: types.dyn };
      this.pop(c.accuVar);
      return { ...result, cost: add(add(range.cost, init.cost), result.cost) };
    }
    this.push(c.accuVar, { type: init.type, path: init.path, size: init.size, entry: init.entry });
    const elemType = rangeIsList ? range.type.elem ?? types.dyn : range.type.key ?? types.dyn;
    if (c.iterVar2) {
      // The key (or index: a path step upstream's estimator does not know) and the value.
      this.push(c.iterVar, { type: rangeIsList ? types.int : elemType, path: rangeIsList ? (range.path === undefined ? this.root : null) : this.step(range.path, 'key'), size: range.entry?.key });
      this.push(c.iterVar2, { type: range.type.elem ?? types.dyn, path: this.step(range.path, 'elem'), size: range.entry?.val });
    } else {
      this.push(c.iterVar, { type: elemType, path: this.step(range.path, rangeIsList ? 'elem' : 'key'), size: rangeIsList ? range.entry?.val : range.entry?.key });
    }
    const loop = c.loopCondition ? this.cost(c.loopCondition) : { cost: fixed(0), type: types.bool };
    const step = c.loopStep ? this.cost(c.loopStep) : { cost: fixed(0), type: types.dyn };
    this.pop(c.iterVar);
    if (c.iterVar2) this.pop(c.iterVar2);
    const result = c.result ? this.cost(c.result) : { cost: fixed(0), type: types.dyn };
    this.pop(c.accuVar);
    const count = sizeOf(range);
    const cost = add(add(add(range.cost, init.cost), result.cost), mul(count, add(step.cost, loop.cost)));
    const initKind = c.accuInit?.exprKind.case;
    let size: Range | undefined;
    let entry: Entry | undefined;
    if (initKind === 'constExpr') size = init.size;
    else if (initKind === 'listExpr' || initKind === 'structExpr') { size = count; entry = step.entry; }
    return { cost, type: result.type, size, entry };
  }

  private call(e: Expr): Est {
    const call = (e.exprKind as { case: 'callExpr'; value: import('@bufbuild/cel-spec/cel/expr/syntax_pb.js').Expr_Call }).value;
    const fn = call.function;
    if (fn === 'dyn' && call.args.length === 1) {
      const a = this.cost(call.args[0]!);
      return { ...a, cost: add(a.cost, fixed(1)), type: types.dyn };
    }
    const args = call.args.map((a) => this.cost(a));
    const argSum = args.reduce((s, a) => add(s, a.cost), fixed(0));
    const target = call.target ? this.cost(call.target) : undefined;
    // A namespaced function (`sets.contains(...)`) parses as a member call on an undeclared name.
    const namespace = call.target?.exprKind.case === 'identExpr' && !this.peek(call.target.exprKind.value.name) ? call.target.exprKind.value.name : undefined;
    const name = namespace ? `${namespace}.${fn}` : fn;
    const t = namespace ? undefined : target;
    const r = this.functionCost(name, t, args, argSum);
    const type = r.type ?? resultType(name, t, args);
    let est: Est = { cost: add(t ? t.cost : fixed(0), r.cost), type, entry: r.entry };
    if (name === '_[_]' && args.length === 2 && ['list', 'map', 'dyn'].includes(args[0]!.type.kind)) {
      const c0 = args[0]!;
      return finish({ ...est, path: this.step(c0.path, 'elem') }, c0.entry?.val);
    }
    return finish(est, r.size);
  }

  /** cel-go's functionCost with Kubernetes' EstimateCallCost first; costs include the arguments', not the target's. */
  private functionCost(name: string, target: Est | undefined, args: Est[], argSum: Range): { cost: Range; size?: Range; type?: Decl; entry?: Entry } {
    const a0 = args[0], a1 = args[1];
    const sz = (x: Est | undefined): Range => (x ? sizeOf(x) : unknownRange);
    const withArgs = (c: Range) => add(c, argSum);
    const str = (x: Est | undefined) => x?.type.kind === 'string';
    // Kubernetes' libraries.
    switch (name) {
      case 'check': return { cost: withArgs(fixed(authorizationCheckCost)) };
      case 'serviceAccount': case 'path': case 'group': case 'resource': case 'subresource': case 'namespace': case 'name':
      case 'allowed': case 'reason': case 'error': case 'errored':
        if (target) return { cost: withArgs(fixed(1)) };
        break;
      case 'fieldSelector': case 'labelSelector':
        if (args.length === 1) {
          const len = sz(a0);
          const parse = byFactor(len, stringFactor);
          const requirements = byFactor(len, 0.5);
          return { cost: withArgs(add(add(fixed(10), parse), byFactor(requirements, 50))) };
        }
        break;
      case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf': case 'includes':
        if (target) {
          if (target.type.kind === 'list') {
            let el = fixed(1);
            const elem = target.type.elem;
            if (elem && (elem.kind === 'string' || elem.kind === 'bytes')) {
              const el0 = target.path === undefined ? null : this.step(target.path, 'elem');
              const elSize = el0 ? { min: 0, max: el0.maxElements } : unknownRange;
              el = add(el, byFactor(elSize, stringFactor));
            }
            return { cost: withArgs(mul(sz(target), el)) };
          }
          if (name === 'includes') return { cost: withArgs(sz(target)) };
          return { cost: withArgs(byFactor(sz(target), stringFactor)) };
        }
        break;
      case 'url': case 'jsonpatch.escapeKey':
        if (args.length === 1) return { cost: withArgs(byFactor(sz(a0), stringFactor)), size: sz(a0) };
        break;
      case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
        if (target) return { cost: withArgs(byFactor(sz(target), stringFactor)), size: sz(target) };
        break;
      case 'replace':
        if (target && args.length >= 2) return { cost: withArgs(byFactor(sz(target), 2 * stringFactor)), size: replaceSize(sz(target), sz(a0), sz(a1)) };
        break;
      case 'split':
        if (target) {
          const s = sz(target);
          let max = s.max;
          if (a1?.int !== undefined) max = a1.int;
          return { cost: withArgs(byFactor(s, 2 * stringFactor)), size: { min: 0, max } };
        }
        break;
      case 'join':
        if (target) {
          const listSize = sz(target);
          let s = fixed(0);
          if (target.type.kind === 'list') {
            const el0 = target.path === undefined ? null : this.step(target.path, 'elem');
            const elSize = el0 ? { min: 0, max: el0.maxElements } : unknownRange;
            s = mul(listSize, elSize);
          }
          if (args.length > 0) s = add(s, mul(sz(a0), { min: Math.max(0, listSize.min - 1), max: Math.max(0, listSize.max - 1) }));
          return { cost: withArgs(byFactor(s, stringFactor)), size: s };
        }
        break;
      case 'find': case 'findAll':
        if (target && args.length >= 1) {
          const s = sz(target);
          return { cost: withArgs(mul(byFactor(add(s, fixed(1)), stringFactor), byFactor(sz(a0), regexFactor))), size: { min: 0, max: s.max } };
        }
        break;
      case 'cidr': case 'isIP': case 'isCIDR': case 'quantity': case 'isQuantity': case 'semver': case 'isSemver':
        if (args.length >= 1) return { cost: withArgs(byFactor(sz(a0), stringFactor)) };
        break;
      case 'ip':
        if (target) return { cost: withArgs(fixed(1)) };
        if (args.length >= 1) return { cost: withArgs(byFactor(sz(a0), stringFactor)) };
        break;
      case 'ip.isCanonical':
        if (args.length >= 1) return { cost: withArgs(byFactor(sz(a0), 2 * stringFactor)) };
        break;
      case 'masked': case 'prefixLength': case 'family': case 'isUnspecified': case 'isLoopback': case 'isLinkLocalMulticast':
      case 'isLinkLocalUnicast': case 'isGlobalUnicast':
        return { cost: withArgs(fixed(1)) };
      case 'containsIP': case 'containsCIDR':
        if (args.length >= 1) {
          const ip = { min: 4, max: 16 };
          let c = byFactor(add(ip, ip), stringFactor);
          if (name === 'containsCIDR') c = add(add(c, byFactor(ip, stringFactor)), fixed(1));
          if (str(a0)) c = add(c, byFactor(sz(a0), stringFactor));
          return { cost: withArgs(c) };
        }
        break;
      case 'validate':
        if (args.length >= 1) return { cost: withArgs(byFactor(byFactor(sz(a0), stringFactor), maxNameFormatRegexSize * regexFactor)) };
        break;
      case 'format.named': case 'sign': case 'asInteger': case 'isInteger': case 'asApproximateFloat': case 'isGreaterThan': case 'isLessThan':
      case 'compareTo': case 'add': case 'sub': case 'major': case 'minor': case 'patch':
      case 'getScheme': case 'getHostname': case 'getHost': case 'getPort': case 'getEscapedPath': case 'getQuery':
        if (name !== 'add' && name !== 'sub' || target) return { cost: withArgs(fixed(1)) };
        break;
      case 'sets.contains': case 'sets.intersects': case 'sets.equivalent':
        if (args.length === 2) {
          const c = mul(sz(a0), sz(a1));
          return { cost: withArgs(add(fixed(1), name === 'sets.equivalent' ? mul(c, fixed(2)) : c)), type: types.bool };
        }
        break;
    }
    // cel-go's standard overloads.
    switch (name) {
      case 'format':
        // No bound on the result: every use of it that depends on its size is unbounded.
        if (target && str(target)) return { cost: withArgs(byFactor(sz(target), stringFactor)) };
        break;
      case 'bytes':
        if (args.length === 1 && str(a0)) { const s = sz(a0); return { cost: withArgs(byFactor(s, stringFactor)), size: { min: s.min, max: mulN(s.max, 4) } }; }
        break;
      case 'string':
        if (args.length === 1 && a0?.type.kind === 'bytes') { const s = sz(a0); return { cost: withArgs(byFactor(s, stringFactor)), size: { min: Math.floor(s.min / 4), max: s.max } }; }
        break;
      case 'strings.quote':
        if (args.length === 1) { const s = sz(a0); return { cost: withArgs(byFactor(s, stringFactor)), size: { min: s.min + 2, max: Math.min(s.max * 2 + 2, unbounded) } }; }
        break;
      case 'startsWith': case 'endsWith':
        if (target && args.length === 1) return { cost: withArgs(byFactor(sz(a0), stringFactor)) };
        break;
      case '@in':
        if (args.length === 2 && a1?.type.kind === 'list') return { cost: withArgs(sz(a1)) };
        break;
      case 'matches':
        if (target && args.length === 1) return { cost: withArgs(mul(byFactor(add(sz(target), fixed(1)), stringFactor), byFactor(sz(a0), regexFactor))) };
        if (!target && args.length === 2) return { cost: withArgs(mul(byFactor(add(sz(a0), fixed(1)), stringFactor), byFactor(sz(a1), regexFactor))) };
        break;
      case 'contains':
        if (target && str(target) && args.length === 1) return { cost: withArgs(mul(byFactor(sz(target), stringFactor), byFactor(sz(a0), stringFactor))) };
        break;
      case '_&&_': case '_||_':
        return { cost: { min: args[0]!.cost.min, max: add(args[0]!.cost, args[1]!.cost).max } };
      case '_?_:_': {
        const size = union(sz(a1), sz(args[2]));
        const entry = a1?.entry && args[2]?.entry ? { list: a1.entry.list, key: union(a1.entry.key, args[2].entry.key), val: union(a1.entry.val, args[2].entry.val) } : undefined;
        return { cost: add(args[0]!.cost, union(a1!.cost, args[2]!.cost)), size, entry, type: a1!.type.kind === args[2]!.type.kind ? a1!.type : types.dyn };
      }
      case '_+_':
        if (args.length === 2 && ['string', 'bytes', 'list'].includes(a0!.type.kind) && a0!.type.kind === a1!.type.kind) {
          const size = add(sz(a0), sz(a1));
          const entry = a0!.entry && a1!.entry ? { list: true, key: union(a0!.entry.key, a1!.entry.key), val: union(a0!.entry.val, a1!.entry.val) } : undefined;
          if (a0!.type.kind === 'list') return { cost: withArgs(fixed(1)), size, entry };
          return { cost: withArgs(byFactor(size, stringFactor)), size, entry };
        }
        break;
      case '_<_': case '_>_': case '_<=_': case '_>=_': case '_==_': case '_!=_': {
        // Ordering is by size only for strings and bytes; equality for every type.
        if (name !== '_==_' && name !== '_!=_' && !(a0?.type.kind === 'string' || a0?.type.kind === 'bytes')) break;
        // Kubernetes' own types (IP, CIDR, quantity, URL, semver, authorizer values) compare in O(1).
        if (a0?.type.kind === 'opaque' && a1?.type.kind === 'opaque') return { cost: withArgs(fixed(1)) };
        const smallest = Math.min(sz(a0).max, sz(a1).max);
        return { cost: withArgs(byFactor({ min: smallest > 0 ? 1 : 0, max: smallest }, stringFactor)) };
      }
    }
    return { cost: withArgs(fixed(1)) };
  }
}

function replaceSize(s: Range, from: Range, to: Range): Range {
  const count: Range = { min: 0, max: 0 };
  const kept: Range = { min: 0, max: 0 };
  if (from.min === 0) { count.max = s.max < unbounded ? s.max + 1 : s.max; kept.max = s.max; }
  else if (to.max <= from.min) { count.max = 0; kept.max = s.max; }
  else count.max = Math.min(Math.ceil(s.max / from.min), unbounded);
  if (from.max === 0) { count.min = s.min < unbounded ? s.min + 1 : s.min; kept.min = s.min; }
  else if (from.max <= to.min) { count.min = 0; kept.min = s.min; }
  else count.min = Math.ceil(s.min / from.max);
  return add(mul(count, to), kept);
}

/** Names that are types or known variables outside any schema. */
function identType(name: string): Decl {
  return ['int', 'uint', 'double', 'string', 'bytes', 'bool', 'list', 'map', 'null_type', 'type'].includes(name) ? types.type : types.dyn;
}

const boolResults = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '_&&_', '_||_', '!_', '@in', '@not_strictly_false', 'matches', 'startsWith',
  'endsWith', 'contains', 'isSorted', 'isIP', 'isCIDR', 'isQuantity', 'isSemver', 'isURL', 'containsIP', 'containsCIDR', 'isUnspecified', 'isLoopback',
  'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'ip.isCanonical', 'isInteger', 'isGreaterThan', 'isLessThan', 'allowed', 'errored',
  'hasValue', 'sets.contains', 'sets.intersects', 'sets.equivalent', 'matchesName']);
const intResults = new Set(['size', 'int', 'indexOf', 'lastIndexOf', 'getFullYear', 'getMonth', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear',
  'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds', 'prefixLength', 'family', 'sign', 'asInteger', 'compareTo', 'major', 'minor', 'patch']);
const stringResults = new Set(['string', 'lowerAscii', 'upperAscii', 'substring', 'trim', 'replace', 'join', 'format', 'charAt', 'find', 'reason',
  'error', 'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'strings.quote', 'base64.encode', 'jsonpatch.escapeKey']);

/** The result type of a call where the estimator needs to know it. */
function resultType(name: string, target: Est | undefined, args: Est[]): Decl {
  if (boolResults.has(name)) return types.bool;
  if (intResults.has(name)) return types.int;
  if (stringResults.has(name)) return types.string;
  switch (name) {
    case 'uint': return types.uint;
    case 'double': case 'asApproximateFloat': return types.double;
    case 'bytes': case 'base64.decode': return types.bytes;
    case 'timestamp': return types.timestamp;
    case 'duration': return types.duration;
    case 'type': return types.type;
    case 'ip': case 'cidr': case 'masked': case 'quantity': case 'url': case 'semver': case 'authorizer': case 'path': case 'group': case 'resource':
    case 'subresource': case 'namespace': case 'name': case 'check': case 'serviceAccount': case 'format.named': case 'add': case 'sub':
      return types.opaque;
    case 'split': case 'findAll': return listOf(types.string);
    case '_[_]': {
      const c = args[0]?.type;
      return c && (c.kind === 'list' || c.kind === 'map') ? c.elem ?? types.dyn : types.dyn;
    }
    case '_?._': case '_[?_]': {
      const c = args[0]?.type;
      const inner = c?.kind === 'optional' ? c.elem : c;
      const fieldName = args[1];
      void fieldName;
      return optionalOf(inner && (inner.kind === 'list' || inner.kind === 'map') ? inner.elem ?? types.dyn : types.dyn);
    }
    case 'optional.of': case 'optional.ofNonZeroValue': return optionalOf(args[0]?.type ?? types.dyn);
    case 'value': case 'orValue': return target?.type.kind === 'optional' ? target.type.elem ?? types.dyn : types.dyn;
    case '_+_': case '_-_': case '_*_': case '_/_': case '_%_': case '-_': {
      const a = args[0]?.type, b = args[1]?.type;
      if (name === '_-_' && a?.kind === 'timestamp' && b?.kind === 'timestamp') return types.duration;
      if (a?.kind === 'duration' && b?.kind === 'timestamp') return types.timestamp;
      return a ?? types.dyn;
    }
  }
  return types.dyn;
}

/** Upstream's refusal message for a cost over its limit. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule(s), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
