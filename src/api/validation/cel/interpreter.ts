// Evaluates a parsed CEL expression, charging what upstream's runtime cost
// tracker charges (cel-go's interpreter with the optimizations Kubernetes
// turns on), so the per-call and per-request budgets stop a rule where
// upstream would stop it:
//   - a variable read costs 1, and each field selection or index after it 1
//     (an attribute and its qualifiers); a selection on a computed value
//     costs 1 more (the value becomes an attribute);
//   - a presence test (`has`) costs nothing beyond its operand;
//   - a call costs what callcost.ts says, after its arguments and before it
//     runs (so a call the budget cannot pay for builds nothing);
//   - &&, || and ?: cost nothing themselves; a ?: branch that is a plain
//     variable or field path is read without charge;
//   - a list literal costs 10, a map literal 30, beside their elements,
//     unless every element is a constant (then it is built once, as upstream's
//     optimizer does); so is a type conversion of a constant, and `x in
//     [constants]` costs only its left side;
//   - a comprehension charges its range, then its condition and step per
//     element, then its result.
// The expression is planned once into a tree of closures, one per node,
// each made for its node's operator and operand count: evaluation never
// looks at a node's kind or resolves a name, variables are read from
// numbered slots, and the calls rules make most (==, !=, the orderings, !,
// contains, startsWith, endsWith on strings and ints; two-operand && and
// ||) are functions of their own, so each gets its own optimised code.
// The functions themselves (operators, conversions, the standard library
// and ours) are @bufbuild/cel's, called through its function registry
// (dispatch.ts: the primitive cases of the standard operators answered
// directly, the overload remembered per call site). It also gives the optional values their
// behaviour: `.?f` and `[?k]` make optionals, selecting into an optional
// stays optional, and list and map literals drop their absent optional
// entries. `==`, `!=` and `+` with a set or list-map on the left follow
// listtypes.ts, with plain lists on both sides append.ts; `type()` of an
// optional is `optional_type`.

import { celError, celList, celMap, CelScalar, celUint, isCelError, isCelList, isCelMap, isCelUint, listType, mapType, objectType, type CelValue } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { callCostOf } from './callcost.js';
import { directCall, siteCall, type Overloads } from './dispatch.js';
import { indexValue, noSuchOverload, selectField } from './access.js';
import { JsonList } from './jsonvalues.js';
import { optionalNone, optionalOf, optionalValue } from './optional.js';
import { listKindOf, typedListAdd, typedListEquals } from './listtypes.js';
import { appendLists } from './append.js';

export interface Meter {
  cost: number;
  limit: number;
  exceeded: boolean;
  /** Above zero while reading what upstream reads without observing it. */
  silent: number;
}

/** Thrown through the evaluation when the meter passes its limit. */
class CostLimitReached extends Error {}

function charge(meter: Meter, n: number): void {
  if (meter.silent > 0 || n === 0) return;
  meter.cost += n;
  if (meter.cost > meter.limit) {
    meter.exceeded = true;
    throw new CostLimitReached();
  }
}

/** What is left to spend (all of it while the meter is silent). */
function headroom(meter: Meter): number {
  return meter.silent > 0 ? Infinity : Math.max(0, meter.limit - meter.cost);
}

/**
 * The variables of one evaluation, each in its slot: the program's first,
 * in the order it declares them, then each comprehension's (its
 * accumulator and loop variables), numbered when the plan is made, so a
 * read is an index, never a search by name.
 */
type Slots = unknown[];

type Run = (s: Slots) => unknown;

/** Which slot each name in scope reads. */
type Locals = ReadonlyMap<string, number>;

interface Planned {
  run: Run;
  /** Set when the node is a constant (built once at planning). */
  constant?: { value: unknown };
  /** A variable read with field selections and indexes after it: what cel-go calls an attribute. */
  attribute?: boolean;
}

/** The functions a plan calls, as @bufbuild/cel's environment resolves them. */
export interface FunctionRegistry {
  find(name: string): Overloads | undefined;
}

const typeNames: Record<string, CelValue> = {
  int: CelScalar.INT, uint: CelScalar.UINT, double: CelScalar.DOUBLE, bool: CelScalar.BOOL, string: CelScalar.STRING,
  bytes: CelScalar.BYTES, null_type: CelScalar.NULL, type: CelScalar.TYPE,
  list: listType(CelScalar.DYN), map: mapType(CelScalar.DYN, CelScalar.DYN),
  // cel-go's type of every optional, whatever it holds (`type(optional.of(1)) == optional_type`).
  optional_type: objectType('optional_type'),
};
const conversions = new Set(['bool', 'bytes', 'double', 'duration', 'dyn', 'int', 'string', 'timestamp', 'type', 'uint']);

export class Planner {
  /** Slots numbered so far: the program's variables, then every comprehension's. */
  private slotCount: number;

  constructor(private readonly funcs: FunctionRegistry, private readonly variables: readonly string[], private readonly meter: Meter,
    private readonly messageType: (name: string) => CelValue | undefined) {
    this.slotCount = variables.length;
  }

  /**
   * Evaluates with `values`, the CEL values of the variables in the order
   * they were declared (undefined for one not given); throws nothing but
   * returns an error value, or `exceeded` set on the meter.
   */
  program(e: Expr): (values: readonly unknown[]) => unknown {
    const root = this.plan(e, new Map(this.variables.map((name, i) => [name, i]))).run;
    const size = this.slotCount, declared = this.variables.length;
    return (values) => {
      // Without a comprehension nothing is written to a slot: the values are read where they are.
      let slots = values as Slots;
      if (size > declared) {
        slots = new Array(size);
        for (let i = 0; i < declared; i++) slots[i] = values[i];
      }
      try {
        return root(slots);
      } catch (err) {
        if (err instanceof CostLimitReached) return celError('operation cancelled: actual cost limit exceeded', Number(e.id));
        return celError(String((err as Error)?.message ?? err), Number(e.id));
      }
    };
  }

  private plan(e: Expr, locals: Locals): Planned {
    const id = Number(e.id);
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind;
        const value = c.case === 'nullValue' ? null : c.case === 'uint64Value' ? celUint(c.value) : c.value;
        return { run: () => value, constant: { value } };
      }
      case 'identExpr':
        return this.planIdent(id, k.value.name, locals);
      case 'selectExpr': {
        const qualified = this.qualifiedType(e, locals);
        if (qualified) return { run: () => qualified, constant: { value: qualified } };
        return this.planSelect(id, this.plan(k.value.operand!, locals), k.value.field, k.value.testOnly);
      }
      case 'callExpr':
        return this.planCall(id, k.value.function, k.value.target, k.value.args, locals);
      case 'listExpr':
        return this.planList(id, k.value.elements.map((x) => this.plan(x, locals)), new Set(k.value.optionalIndices));
      case 'structExpr': {
        if (k.value.messageName) return { run: () => celError(`unknown type: ${k.value.messageName}`, id) };
        const entries = k.value.entries.map((en) => ({
          key: en.keyKind.case === 'mapKey' ? this.plan(en.keyKind.value, locals) : { run: () => celError('invalid map entry', id) },
          value: this.plan(en.value!, locals),
          optional: en.optionalEntry,
        }));
        return this.planMap(id, entries);
      }
      case 'comprehensionExpr':
        return this.planFold(id, k.value, locals);
      default:
        return { run: () => celError('invalid expression', id) };
    }
  }

  private planIdent(id: number, name: string, locals: Locals): Planned {
    const meter = this.meter;
    const slot = locals.get(name);
    if (slot === undefined) {
      const type = typeNames[name] ?? this.messageType(name);
      if (type !== undefined) return { run: () => type, constant: { value: type } };
      return { run: () => celError(`undeclared reference to '${name}'`, id) };
    }
    return {
      attribute: true,
      run: (s) => {
        charge(meter, 1);
        const v = s[slot];
        return v === undefined ? celError(`undeclared reference to '${name}'`, id) : v;
      },
    };
  }

  /** `google.protobuf.Duration` and the like: a select chain naming a type rather than reading a variable. */
  private qualifiedType(e: Expr, locals: Locals): CelValue | undefined {
    const parts: string[] = [];
    let cur: Expr | undefined = e;
    while (cur?.exprKind.case === 'selectExpr' && !cur.exprKind.value.testOnly) { parts.unshift(cur.exprKind.value.field); cur = cur.exprKind.value.operand; }
    if (cur?.exprKind.case !== 'identExpr') return undefined;
    const root = cur.exprKind.value.name;
    if (locals.has(root)) return undefined;
    return this.messageType([root, ...parts].join('.'));
  }

  private planSelect(id: number, operand: Planned, field: string, testOnly: boolean): Planned {
    const meter = this.meter;
    const run = operand.run;
    if (testOnly) {
      return {
        run: (s) => {
          const o = run(s);
          if (isCelError(o)) return o;
          const opt = optionalValue(o);
          if (opt === null) return false;
          const base = opt === undefined ? o : opt.value;
          if (!isCelMap(base)) return noSuchOverload(id);
          return base.has(field);
        },
      };
    }
    // A selection on a computed value makes it an attribute first.
    const cost = operand.attribute ? 1 : 2;
    return {
      attribute: true,
      run: (s) => {
        const o = run(s);
        if (isCelError(o)) return o;
        charge(meter, cost);
        return selectField(id, o, field);
      },
    };
  }

  private planCall(id: number, name: string, targetExpr: Expr | undefined, argExprs: Expr[], locals: Locals): Planned {
    const meter = this.meter;
    // `format.dns1123Label()`, `sets.contains(a, b)`: a namespaced function, not a method on a variable.
    const t = targetExpr?.exprKind;
    if (t?.case === 'identExpr' && !locals.has(t.value.name) && this.funcs.find(`${t.value.name}.${name}`)) {
      return this.planFunction(id, `${t.value.name}.${name}`, undefined, argExprs.map((a) => this.plan(a, locals)));
    }
    const target = targetExpr ? this.plan(targetExpr, locals) : undefined;
    const args = argExprs.map((a) => this.plan(a, locals));
    switch (name) {
      case '_&&_': case '_||_':
        return this.planLogic(id, name === '_&&_', args);
      case '_?_:_':
        return this.planConditional(id, args[0]!, args[1]!, args[2]!);
      case '@not_strictly_false': {
        const arg = args[0]!.run;
        return { run: (s) => { const v = arg(s); charge(meter, 1); return v !== false; } };
      }
      case '_[_]': case '_[?_]':
        return this.planIndex(id, args[0]!, args[1]!, name === '_[?_]');
      case '_?._': {
        const field = args[1]!.constant?.value;
        if (typeof field !== 'string') return { run: () => celError('invalid optional field selection', id) };
        return this.planOptionalSelect(id, args[0]!, field);
      }
      case 'or': case 'orValue':
        if (target && args.length === 1) return this.planOptionalOr(id, name, target, args[0]!);
        break;
      case '@in':
        if (args[1]!.constant && isCelList(args[1]!.constant.value)) return this.planMembership(id, args[0]!, args[1]!.constant.value);
        break;
    }
    const planned = this.planFunction(id, name, target, args);
    // As upstream's optimizer: a type conversion of a constant is computed once.
    if (!target && args.length === 1 && args[0]!.constant && conversions.has(name)) {
      const value = this.fold(planned.run);
      if (value !== undefined) return { run: () => value, constant: { value } };
    }
    return planned;
  }

  private fold(run: Run): unknown {
    const meter = this.meter;
    meter.silent++;
    try {
      const v = run([]);
      return isCelError(v) ? undefined : v;
    } catch {
      return undefined;
    } finally {
      meter.silent--;
    }
  }

  private planFunction(id: number, name: string, target: Planned | undefined, args: Planned[]): Planned {
    const meter = this.meter;
    const fn = this.funcs.find(name);
    const call = fn ? siteCall(fn, args.length) : undefined;
    const direct = fn ? directCall(name, target !== undefined, args.length) : undefined;
    const costOf = callCostOf(name);
    const runs = [...(target ? [target.run] : []), ...args.map((a) => a.run)];
    const hasTarget = target !== undefined;
    // Upstream evaluates both operands of a unary or binary call before it
    // looks for errors, and charges the call either way; longer calls stop
    // at the first error, uncharged.
    const strictPair = runs.length <= 2;
    const listOperator = !hasTarget && (name === '_==_' || name === '_!=_' || name === '_+_');
    const typeOf = !hasTarget && name === 'type' && args.length === 1;
    const finish = (t: CelValue | undefined, rest: CelValue[], error: unknown): unknown => {
      // Charged from the operands before the call runs: a result the budget cannot pay for is never built.
      const a0 = hasTarget ? t : rest[0], a1 = hasTarget ? rest[0] : rest[1], a2 = hasTarget ? rest[1] : rest[2], a3 = hasTarget ? rest[2] : rest[3];
      const cost = costOf(a0, a1, a2, a3, hasTarget, headroom(meter));
      if (error !== undefined) {
        charge(meter, cost);
        return error;
      }
      if (!call) return celError(`unbound function: ${name}`, id);
      charge(meter, cost);
      const result = (listOperator ? this.typedListCall(id, name, rest) : undefined)
        ?? (typeOf && optionalValue(rest[0]) !== undefined ? typeNames.optional_type : undefined)
        ?? call(id, t, rest);
      return result === undefined ? noSuchOverload(id) : result;
    };
    // One operand and two, the usual calls, without the general loop.
    // A primitive answer (direct) is charged as the call and made without an array of arguments.
    if (runs.length === 1) {
      const r0 = runs[0]!;
      if (!hasTarget && name === '!_') {
        return {
          run: (s) => {
            const v = r0(s) as CelValue;
            if (typeof v === 'boolean') { charge(meter, costOf(v, undefined, undefined, undefined, false, 0)); return !v; }
            return finish(undefined, [v], isCelError(v) ? v : undefined);
          },
        };
      }
      return {
        run: (s) => {
          const v = r0(s) as CelValue;
          if (direct) {
            const d = direct(v, undefined);
            if (d !== undefined) { charge(meter, costOf(v, undefined, undefined, undefined, hasTarget, headroom(meter))); return d; }
          }
          return hasTarget ? finish(v, [], isCelError(v) ? v : undefined) : finish(undefined, [v], isCelError(v) ? v : undefined);
        },
      };
    }
    if (runs.length === 2) {
      const r0 = runs[0]!, r1 = runs[1]!;
      const general = (v0: CelValue, v1: CelValue): unknown => {
        if (direct) {
          const d = direct(v0, v1);
          if (d !== undefined) { charge(meter, costOf(v0, v1, undefined, undefined, hasTarget, headroom(meter))); return d; }
        }
        const error = isCelError(v0) ? v0 : isCelError(v1) ? v1 : undefined;
        return hasTarget ? finish(v0, [v1], error) : finish(undefined, [v0, v1], error);
      };
      // The commonest calls of validation rules, each its own function (so each its own optimised code): strings and ints compared
      // in place, charged by the same rule as the general road; any other operands take that road.
      if (!hasTarget && (name === '_==_' || name === '_!=_')) {
        const same = name === '_==_';
        return {
          run: (s) => {
            const v0 = r0(s) as CelValue, v1 = r1(s) as CelValue;
            if ((typeof v0 === 'string' && typeof v1 === 'string') || (typeof v0 === 'bigint' && typeof v1 === 'bigint')) {
              charge(meter, costOf(v0, v1, undefined, undefined, false, 0));
              return (v0 === v1) === same;
            }
            return general(v0, v1);
          },
        };
      }
      if (hasTarget && (name === 'contains' || name === 'startsWith' || name === 'endsWith')) {
        const test = name === 'contains' ? (t: string, a: string) => t.includes(a) : name === 'startsWith' ? (t: string, a: string) => t.startsWith(a)
          : (t: string, a: string) => t.endsWith(a);
        return {
          run: (s) => {
            const v0 = r0(s) as CelValue, v1 = r1(s) as CelValue;
            if (typeof v0 === 'string' && typeof v1 === 'string') {
              charge(meter, costOf(v0, v1, undefined, undefined, true, 0));
              return test(v0, v1);
            }
            return general(v0, v1);
          },
        };
      }
      if (!hasTarget && (name === '_<_' || name === '_<=_' || name === '_>_' || name === '_>=_')) {
        const compare = name === '_<_' ? (a: bigint, b: bigint) => a < b : name === '_<=_' ? (a: bigint, b: bigint) => a <= b
          : name === '_>_' ? (a: bigint, b: bigint) => a > b : (a: bigint, b: bigint) => a >= b;
        return {
          run: (s) => {
            const v0 = r0(s) as CelValue, v1 = r1(s) as CelValue;
            if (typeof v0 === 'bigint' && typeof v1 === 'bigint') {
              charge(meter, costOf(v0, v1, undefined, undefined, false, 0));
              return compare(v0, v1);
            }
            return general(v0, v1);
          },
        };
      }
      return {
        run: (s) => {
          const v0 = r0(s) as CelValue, v1 = r1(s) as CelValue;
          if (direct) {
            const d = direct(v0, v1);
            if (d !== undefined) { charge(meter, costOf(v0, v1, undefined, undefined, hasTarget, headroom(meter))); return d; }
          }
          const error = isCelError(v0) ? v0 : isCelError(v1) ? v1 : undefined;
          return hasTarget ? finish(v0, [v1], error) : finish(undefined, [v0, v1], error);
        },
      };
    }
    return {
      run: (s) => {
        const vals: unknown[] = [];
        let error: unknown;
        for (const r of runs) {
          const v = r(s);
          if (isCelError(v)) {
            error ??= v;
            if (!strictPair) return v;
          }
          vals.push(v);
        }
        const t = hasTarget ? (vals[0] as CelValue) : undefined;
        return finish(t, (hasTarget ? vals.slice(1) : vals) as CelValue[], error);
      },
    };
  }

  /** `==`, `!=` and `+` with a set or list-map on the left (listtypes.ts), `+` of plain lists (append.ts); undefined for any other operands. */
  private typedListCall(id: number, name: string, args: CelValue[]): unknown {
    const [left, right] = args;
    const kind = listKindOf(left);
    if (!kind && name === '_+_' && isCelList(left) && isCelList(right)) return appendLists(left, right);
    if (!kind || !isCelList(right)) return undefined;
    const eq = this.funcs.find('_==_')!;
    const equal = (a: unknown, b: unknown) => eq.call(id, undefined, [a as CelValue, b as CelValue]) === true;
    if (name === '_+_') return typedListAdd(left as never, kind, right, equal);
    const same = typedListEquals(left as never, kind, right, equal);
    return name === '_==_' ? same : !same;
  }

  /** && and ||: short-circuit in order, an error absorbed by a deciding operand on either side, as CEL's commutative logic. */
  private planLogic(id: number, and: boolean, args: Planned[]): Planned {
    const runs = args.map((a) => a.run);
    if (runs.length === 2) {
      // The parser's form: two operands, without a loop.
      const r0 = runs[0]!, r1 = runs[1]!;
      return {
        run: (s) => {
          const v0 = r0(s);
          if (v0 === !and) return !and;
          const v1 = r1(s);
          if (v1 === !and) return !and;
          if (v0 === and) return v1 === and ? and : isCelError(v1) ? v1 : celError(`no such overload`, id);
          return isCelError(v0) ? v0 : celError(`no such overload`, id);
        },
      };
    }
    return {
      run: (s) => {
        let error: unknown;
        for (const r of runs) {
          const v = r(s);
          if (v === !and) return !and;
          if (v === and) continue;
          error ??= isCelError(v) ? v : celError(`no such overload`, id);
        }
        return error ?? and;
      },
    };
  }

  private planConditional(id: number, cond: Planned, yes: Planned, no: Planned): Planned {
    const meter = this.meter;
    // Upstream resolves a branch that is an attribute without observing it.
    const branch = (p: Planned): Run => (p.attribute ? (s) => { meter.silent++; try { return p.run(s); } finally { meter.silent--; } } : p.run);
    const runCond = cond.run, runYes = branch(yes), runNo = branch(no);
    return {
      run: (s) => {
        const c = runCond(s);
        if (isCelError(c)) return c;
        if (typeof c !== 'boolean') return noSuchOverload(id);
        return c ? runYes(s) : runNo(s);
      },
    };
  }

  private planIndex(id: number, operand: Planned, key: Planned, optional: boolean): Planned {
    const meter = this.meter;
    const runOperand = operand.run;
    // A key that is itself a variable or field path is read as part of the qualifier.
    const runKey = key.attribute ? (s: Slots) => { meter.silent++; try { return key.run(s); } finally { meter.silent--; } } : key.run;
    const cost = operand.attribute ? 1 : 2;
    return {
      attribute: true,
      run: (s) => {
        const o = runOperand(s);
        if (isCelError(o)) return o;
        const k = runKey(s);
        if (isCelError(k)) return k;
        charge(meter, cost);
        return indexValue(id, o, k, optional);
      },
    };
  }

  private planOptionalSelect(id: number, operand: Planned, field: string): Planned {
    const meter = this.meter;
    const run = operand.run;
    const cost = operand.attribute ? 1 : 2;
    return {
      attribute: true,
      run: (s) => {
        const o = run(s);
        if (isCelError(o)) return o;
        const inner = optionalValue(o);
        if (inner === null) return optionalNone();
        const base = inner === undefined ? o : inner.value;
        if (!isCelMap(base)) return noSuchOverload(id);
        const v = base.get(field);
        // Upstream observes the optional qualifier only when it finds the field.
        if (v === undefined) return optionalNone();
        charge(meter, cost);
        return optionalOf(v);
      },
    };
  }

  /** `a.or(b)`, `a.orValue(v)`: the right side only when the optional `a` is empty, and no cost of their own, as upstream. */
  private planOptionalOr(id: number, name: string, target: Planned, arg: Planned): Planned {
    const runTarget = target.run, runArg = arg.run;
    return {
      run: (s) => {
        const t = runTarget(s);
        if (isCelError(t)) return t;
        const o = optionalValue(t);
        if (o === undefined) return noSuchOverload(id);
        if (o !== null) return name === 'or' ? t : o.value;
        const other = runArg(s);
        if (name === 'or' && !isCelError(other) && optionalValue(other) === undefined) return noSuchOverload(id);
        return other;
      },
    };
  }

  /** `x in [constants]`: a set lookup, charged only for `x`. */
  private planMembership(id: number, lhs: Planned, list: Iterable<unknown>): Planned {
    const inFn = this.funcs.find('@in');
    const runLhs = lhs.run;
    const values = list as CelValue;
    // A list of strings (or of booleans) holds a value of that type exactly when a set of them does; anything else asks the library.
    const items = [...list];
    const kind = items.length ? typeof items[0] : undefined;
    const set = (kind === 'string' || kind === 'boolean') && items.every((x) => typeof x === kind) ? new Set(items) : undefined;
    return {
      run: (s) => {
        const v = runLhs(s);
        if (isCelError(v)) return v;
        if (set && typeof v === kind) return set.has(v);
        return inFn?.call(id, undefined, [v as CelValue, values]) ?? noSuchOverload(id);
      },
    };
  }

  private planList(id: number, elements: Planned[], optional: ReadonlySet<number>): Planned {
    const meter = this.meter;
    const build = (vals: unknown[]): unknown => {
      const out: unknown[] = [];
      for (let i = 0; i < vals.length; i++) {
        const v = vals[i];
        if (!optional.has(i)) { out.push(v); continue; }
        const o = optionalValue(v);
        if (o === undefined) return celError(`cannot initialize optional entry from non-optional value`, id);
        if (o !== null) out.push(o.value);
      }
      return celList(out as CelValue[]);
    };
    if (elements.every((e) => e.constant)) {
      const value = build(elements.map((e) => e.constant!.value));
      return { run: () => value, constant: { value } };
    }
    const runs = elements.map((e) => e.run);
    return {
      run: (s) => {
        const vals: unknown[] = [];
        for (const r of runs) {
          const v = r(s);
          if (isCelError(v)) return v;
          vals.push(v);
        }
        charge(meter, 10);
        return build(vals);
      },
    };
  }

  private planMap(id: number, entries: { key: Planned; value: Planned; optional: boolean }[]): Planned {
    const meter = this.meter;
    const build = (pairs: [unknown, unknown, boolean][]): unknown => {
      const m = new Map<unknown, unknown>();
      for (const [k, v, opt] of pairs) {
        if (!(typeof k === 'string' || typeof k === 'bigint' || typeof k === 'boolean' || isCelUint(k))) return celError('unsupported key type', id);
        const key = k;
        if (m.has(key)) return celError(`map key conflict: ${String(key)}`, id);
        if (!opt) { m.set(key, v); continue; }
        const o = optionalValue(v);
        if (o === undefined) return celError(`cannot initialize optional entry from non-optional value`, id);
        if (o !== null) m.set(key, o.value);
      }
      return celMap(m as Map<string, never>);
    };
    if (entries.every((e) => e.key.constant && e.value.constant)) {
      const value = build(entries.map((e) => [e.key.constant!.value, e.value.constant!.value, e.optional]));
      return { run: () => value, constant: { value } };
    }
    return {
      run: (s) => {
        const pairs: [unknown, unknown, boolean][] = [];
        for (const e of entries) {
          const k = e.key.run(s);
          if (isCelError(k)) return k;
          const v = e.value.run(s);
          if (isCelError(v)) return v;
          pairs.push([k, v, e.optional]);
        }
        charge(meter, 30);
        return build(pairs);
      },
    };
  }

  private planFold(id: number, c: Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'], locals: Locals): Planned {
    const range = this.plan(c.iterRange!, locals).run;
    const init = this.plan(c.accuInit!, locals).run;
    // The accumulator and loop variables take slots of their own, shadowing outer names.
    const inner = new Map(locals);
    const accuSlot = this.slotCount++, firstSlot = this.slotCount++, secondSlot = c.iterVar2 ? this.slotCount++ : -1;
    inner.set(c.accuVar, accuSlot);
    inner.set(c.iterVar, firstSlot);
    if (c.iterVar2) inner.set(c.iterVar2, secondSlot);
    const cond = this.plan(c.loopCondition!, inner).run;
    const step = this.plan(c.loopStep!, inner).run;
    // The result reads the accumulator; the loop variables are out of scope there.
    const result = this.plan(c.result!, new Map(locals).set(c.accuVar, accuSlot)).run;
    const two = secondSlot >= 0;
    return {
      run: (s) => {
        const r = range(s);
        if (isCelError(r)) return r;
        const list = isCelList(r);
        if (!list && !isCelMap(r)) return celError(`type mismatch: iterable vs ${typeof r}`, id);
        const accu = init(s);
        if (isCelError(accu)) return accu;
        s[accuSlot] = accu;
        // One variable: a list's elements, a map's keys; two: index (or key) and element (or value).
        let stop: unknown = true;
        if (r instanceof JsonList) {
          // The JSON list of a rule's data, read by index (its iterator is a generator).
          for (let i = 0, n = r.size; i < n; i++) {
            if (two) { s[firstSlot] = BigInt(i); s[secondSlot] = r.get(i); } else s[firstSlot] = r.get(i);
            const ok = cond(s);
            if (ok !== true) { stop = ok; break; }
            s[accuSlot] = step(s);
          }
        } else if (list) {
          let i = 0;
          for (const v of r) {
            if (two) { s[firstSlot] = BigInt(i++); s[secondSlot] = v; } else s[firstSlot] = v;
            const ok = cond(s);
            if (ok !== true) { stop = ok; break; }
            s[accuSlot] = step(s);
          }
        } else {
          for (const k of [...r.keys()]) {
            s[firstSlot] = k;
            if (two) s[secondSlot] = r.get(k as string);
            const ok = cond(s);
            if (ok !== true) { stop = ok; break; }
            s[accuSlot] = step(s);
          }
        }
        if (isCelError(stop)) return stop;
        return result(s);
      },
    };
  }
}
