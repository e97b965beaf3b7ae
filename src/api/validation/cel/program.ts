// One CEL expression, parsed, checked and planned once: the environment
// (standard functions, the Kubernetes libraries, the variables a context
// declares) and a meter that charges each function call as it runs, which is
// how the runtime cost limits are kept: @bufbuild/cel has no cost tracker of
// its own, so the meter wraps every function the planner resolves.
//
// The meter charges each call of a function or operator what upstream's cost
// tracker charges it (callcost.ts: 1, or the size-dependent cost of string,
// list and regex work). It does not charge what upstream charges per AST node
// for variable reads, field selections, constants and the logical operators
// (&&, ||, ?:) the library evaluates itself: runtime costs here are lower
// than upstream's for the same rule, never higher.

import { celEnv, isCelError, parse, plan, type CelEnv, type CelResult, type CelValue } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { RE2JS } from '@bufbuild/re2';
import { setOwn } from '../../../machinery/ownkeys.js';
import { callCost } from './callcost.js';
import { kubernetesLibraries } from './libraries.js';

/** The message upstream's CEL runtime gives when a call exceeds its cost limit. */
export const costLimitExceeded = 'operation cancelled: actual cost limit exceeded';

export interface Meter {
  cost: number;
  limit: number;
  exceeded: boolean;
}

const macros = new Set(['has', 'all', 'exists', 'exists_one', 'map', 'filter']);

const re2 = { compile: (pattern: string) => RE2JS.compile(pattern) };

/** The environment of validation rules and match conditions, with a meter in front of its functions. */
function meteredEnv(variables: readonly string[], meter: Meter): CelEnv {
  const base = celEnv({ funcs: kubernetesLibraries, re2 });
  const funcs = {
    [Symbol.iterator]: () => base.funcs[Symbol.iterator](),
    find(name: string) {
      const group = base.funcs.find(name);
      if (!group) return undefined;
      return {
        name: group.name,
        [Symbol.iterator]: () => group[Symbol.iterator](),
        call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined {
          const result = group.call(id, target, args);
          meter.cost += callCost(name, target, args, result);
          if (meter.cost > meter.limit) {
            meter.exceeded = true;
            throw new Error(costLimitExceeded);
          }
          return result;
        },
      };
    },
  };
  // plan() reads only these four members of an environment.
  return { namespace: base.namespace, registry: base.registry, funcs, variables: base.variables } as unknown as CelEnv;
}

const knownFunctions = (() => {
  const names = new Set<string>();
  for (const f of celEnv({ funcs: kubernetesLibraries }).funcs) names.add(f.name);
  return names;
})();

export interface Compiled {
  ast: Expr;
  /** Evaluates with the given variables; the meter's cost is the cost of this call. */
  eval(vars: Record<string, unknown>, limit: number): { value?: CelValue; error?: string; cost: number; exceeded: boolean };
  /** The variables the expression reads (e.g. whether a rule reads `oldSelf`). */
  reads: Set<string>;
}

/** Parses and checks `source` against the declared variables; a string is the compile error, in upstream's shape. */
export function compileExpression(source: string, variables: readonly string[]): Compiled | string {
  let ast: Expr;
  try {
    ast = parse(source).expr;
  } catch (e) {
    return `compilation failed: ERROR: ${(e as Error).message}`;
  }
  const reads = new Set<string>();
  const problem = checkReferences(ast, new Set(variables), reads);
  if (problem) return `compilation failed: ERROR: <input>: ${problem}`;
  const meter: Meter = { cost: 0, limit: Infinity, exceeded: false };
  const run = plan(meteredEnv(variables, meter), ast) as (vars: Record<string, unknown>) => CelResult;
  return {
    ast,
    reads,
    eval(vars, limit) {
      meter.cost = 0; meter.limit = limit; meter.exceeded = false;
      const result = run(vars);
      const out = { cost: meter.cost, exceeded: meter.exceeded };
      if (meter.exceeded) return { ...out, error: costLimitExceeded };
      if (isCelError(result)) return { ...out, error: result.message };
      return { ...out, value: result };
    },
  };
}

/** Every identifier is a declared variable or a comprehension's, every function one the environment has. */
function checkReferences(e: Expr, scope: Set<string>, reads: Set<string>): string | undefined {
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      if (!scope.has(k.value.name)) return `undeclared reference to '${k.value.name}' (in container '')`;
      reads.add(k.value.name);
      return undefined;
    case 'selectExpr':
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
