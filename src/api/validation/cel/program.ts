// One CEL expression, parsed, checked and planned once: the environment
// (standard functions, the Kubernetes libraries, the variables a context
// declares) and the interpreter (interpreter.ts), which charges each step
// what upstream's runtime cost tracker charges, so the runtime cost limits
// stop evaluation where upstream's do.

import { celEnv, isCelError, objectType, type CelValue } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { hasOwn, setOwn } from '../../../machinery/ownkeys.js';
import { Planner, type Meter } from './interpreter.js';
import { celOfJson } from './jsonvalues.js';
import { kubernetesLibraries } from './libraries.js';
import { compileRegex } from './regex.js';
import { parseCel } from './parser.js';

/** The message upstream's CEL runtime gives when a call exceeds its cost limit. */
export const costLimitExceeded = 'operation cancelled: actual cost limit exceeded';

const macros = new Set(['has', 'all', 'exists', 'exists_one', 'map', 'filter']);

// `matches` is the libraries' own (regex.ts), replacing the standard one.
const env = celEnv({ funcs: kubernetesLibraries });
const messageType = (name: string): CelValue | undefined => {
  const desc = env.registry.getMessage(name);
  return desc ? objectType(desc) : undefined;
};

const knownFunctions = (() => {
  const names = new Set<string>();
  for (const f of env.funcs) names.add(f.name);
  return names;
})();

export interface Evaluation { value?: CelValue; error?: string; cost: number; exceeded: boolean }

export interface Compiled {
  ast: Expr;
  /** Evaluates with the given variables (JSON or CEL values); the meter's cost is the cost of this call. */
  eval(vars: Record<string, unknown>, limit: number): Evaluation;
  /** As eval, with the variables' CEL values in the order they were declared (undefined for one not given). */
  evalValues(values: readonly unknown[], limit: number): Evaluation;
  /** The variables the expression reads (e.g. whether a rule reads `oldSelf`). */
  reads: Set<string>;
}

/** Parses and checks `source` against the declared variables; a string is the compile error, in upstream's shape. */
export function compileExpression(source: string, variables: readonly string[]): Compiled | string {
  let ast: Expr;
  try {
    ast = parseCel(source);
  } catch (e) {
    return `compilation failed: ERROR: ${(e as Error).message}`;
  }
  const reads = new Set<string>();
  const problem = checkReferences(ast, new Set(variables), reads);
  if (problem) return `compilation failed: ERROR: <input>: ${problem}`;
  const badPattern = constantPatternError(ast);
  if (badPattern) return `program instantiation failed: ${badPattern}`;
  const meter: Meter = { cost: 0, limit: Infinity, exceeded: false, silent: 0 };
  const names = [...new Set(variables)];
  const run = new Planner(env.funcs, names, meter, messageType).program(ast);
  const evalValues = (values: readonly unknown[], limit: number): Evaluation => {
    meter.cost = 0; meter.limit = limit; meter.exceeded = false; meter.silent = 0;
    // A CEL error is a value (an absent field read beside a has() that excuses it, say), never a stack
    // a user sees: errors made while evaluating skip capturing one, the dearest part of making them.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    let result: unknown;
    try {
      result = run(values);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    // One shape for every answer (a spread of a shared part made each a new shape to look up).
    if (meter.exceeded) return { value: undefined, error: costLimitExceeded, cost: meter.cost, exceeded: true };
    if (isCelError(result)) return { value: undefined, error: result.message, cost: meter.cost, exceeded: false };
    return { value: result as CelValue, error: undefined, cost: meter.cost, exceeded: false };
  };
  return {
    ast,
    reads,
    evalValues,
    // The variables as CEL values, by name (a program declares a handful).
    eval: (vars, limit) => evalValues(names.map((name) => (hasOwn(vars, name) ? celOfJson(vars[name]) : undefined)), limit),
  };
}

/** `google.protobuf.Timestamp` and the like: a select chain naming a type the registry knows. */
function qualifiedTypeName(e: Expr, scope: Set<string>): boolean {
  const parts: string[] = [];
  let cur: Expr | undefined = e;
  while (cur?.exprKind.case === 'selectExpr' && !cur.exprKind.value.testOnly) { parts.unshift(cur.exprKind.value.field); cur = cur.exprKind.value.operand; }
  if (cur?.exprKind.case !== 'identExpr' || scope.has(cur.exprKind.value.name)) return false;
  return messageType([cur.exprKind.value.name, ...parts].join('.')) !== undefined;
}

const typeIdentifiers = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'optional_type']);

/** Every identifier is a declared variable or a comprehension's, every function one the environment has. */
function checkReferences(e: Expr, scope: Set<string>, reads: Set<string>): string | undefined {
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      if (!scope.has(k.value.name) && !typeIdentifiers.has(k.value.name)) return `undeclared reference to '${k.value.name}' (in container '')`;
      reads.add(k.value.name);
      return undefined;
    case 'selectExpr':
      if (qualifiedTypeName(e, scope)) return undefined;
      return k.value.operand ? checkReferences(k.value.operand, scope, reads) : undefined;
    case 'callExpr': {
      const name = k.value.function;
      const target = k.value.target?.exprKind;
      // `format.dns1123Label()` reads as a call on the identifier `format`: a namespaced function.
      if (target?.case === 'identExpr' && !scope.has(target.value.name) && knownFunctions.has(`${target.value.name}.${name}`)) {
        for (const a of k.value.args) { const p = checkReferences(a, scope, reads); if (p) return p; }
        return undefined;
      }
      if (!name.startsWith('_') && !name.startsWith('@') && !macros.has(name) && !knownFunctions.has(name) && !isBuiltinConversion(name)) {
        return `undeclared reference to '${name}' (in container '')`;
      }
      if (k.value.target) { const p = checkReferences(k.value.target, scope, reads); if (p) return p; }
      for (const a of k.value.args) { const p = checkReferences(a, scope, reads); if (p) return p; }
      return undefined;
    }
    case 'listExpr':
      for (const a of k.value.elements) { const p = checkReferences(a, scope, reads); if (p) return p; }
      return undefined;
    case 'structExpr':
      for (const en of k.value.entries) {
        if (en.keyKind.case === 'mapKey') { const p = checkReferences(en.keyKind.value, scope, reads); if (p) return p; }
        if (en.value) { const p = checkReferences(en.value, scope, reads); if (p) return p; }
      }
      return undefined;
    case 'comprehensionExpr': {
      const c = k.value;
      const inner = new Set(scope);
      for (const v of [c.iterVar, c.iterVar2, c.accuVar]) if (v) inner.add(v);
      for (const part of [c.iterRange, c.accuInit]) if (part) { const p = checkReferences(part, scope, reads); if (p) return p; }
      for (const part of [c.loopCondition, c.loopStep, c.result]) if (part) { const p = checkReferences(part, inner, reads); if (p) return p; }
      return undefined;
    }
    default:
      return undefined;
  }
}

const patternFunctions = new Set(['matches', 'find', 'findAll']);

/**
 * Why a pattern written as a constant does not compile, if one does not:
 * upstream compiles those when it builds the program (its regex
 * optimizations), so the rule or condition is refused when declared.
 */
function constantPatternError(e: Expr): string | undefined {
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      return k.value.operand ? constantPatternError(k.value.operand) : undefined;
    case 'callExpr': {
      const { function: name, target, args } = k.value;
      const pattern = patternFunctions.has(name) ? (target ? args[0] : name === 'matches' ? args[1] : undefined) : undefined;
      const c = pattern?.exprKind.case === 'constExpr' ? pattern.exprKind.value.constantKind : undefined;
      if (c?.case === 'stringValue') {
        try { compileRegex(c.value); } catch (err) { return (err as Error).message; }
      }
      for (const part of [...(target ? [target] : []), ...args]) { const p = constantPatternError(part); if (p) return p; }
      return undefined;
    }
    case 'listExpr':
      for (const a of k.value.elements) { const p = constantPatternError(a); if (p) return p; }
      return undefined;
    case 'structExpr':
      for (const en of k.value.entries) {
        for (const part of [en.keyKind.case === 'mapKey' ? en.keyKind.value : undefined, en.value]) { const p = part && constantPatternError(part); if (p) return p; }
      }
      return undefined;
    case 'comprehensionExpr':
      for (const part of [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]) { const p = part && constantPatternError(part); if (p) return p; }
      return undefined;
    default:
      return undefined;
  }
}

const conversions = new Set(['int', 'uint', 'double', 'string', 'bytes', 'bool', 'dyn', 'type', 'size', 'duration', 'timestamp', 'matches', 'contains', 'startsWith', 'endsWith', 'in']);
function isBuiltinConversion(name: string): boolean {
  return conversions.has(name) || name.startsWith('get');
}

/** The CEL form of JSON without a schema: integral numbers are CEL ints, keys stay own keys. */
export function jsonToCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(jsonToCel);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) setOwn(out, k, jsonToCel((v as Record<string, unknown>)[k]));
    return out;
  }
  return v;
}
