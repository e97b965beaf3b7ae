// The outcome of a node's rules remembered by what they read. A rule
// outcome is a pure function of the values it reads (CEL has no clock, no
// randomness, and validation rules no authorizer), its run-time cost too.
// Rules that read `self` only as `self.f` and `has(self.f)`, with `f` a
// declared property of a scalar type where its value is read, depend on the
// node's value only through those fields: a key made of them (presence, type
// and value; only presence where nothing more is read) stands for the whole
// value. Of the outcomes only "every rule passed, at this cost" is kept (a
// failure is made again, with its message and path); kept answers are
// bounded per node, as the validator's pattern answers are. The rules of a
// Gateway API route's path match, filter and backend (most of its hundreds
// of evaluations per object) are of this shape, and their values repeat
// across a kind's objects (path types, filter types, backend kinds) and
// across updates of one object.

import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { hasOwn } from '../../../machinery/ownkeys.js';
import type { JSONSchemaProps } from '../structural.js';
import { markersOf } from '../structural.js';

/** Outcomes kept per node, at most. */
const rememberedOutcomes = 512;

/** How a rule reads one field of `self`: its presence only, or its value. */
type Read = 'presence' | 'value';

/**
 * The fields of `self` the expressions read, each as presence or value;
 * undefined when one reads `self` any other way (as a whole, indexed,
 * through an optional, inside a comprehension that names a variable `self`).
 */
function fieldsRead(asts: readonly Expr[]): Map<string, Read> | undefined {
  const reads = new Map<string, Read>();
  const visit = (e: Expr | undefined): boolean => {
    if (!e) return true;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr':
        // `self` anywhere but directly under a field selection reads all of it.
        return k.value.name !== 'self';
      case 'selectExpr': {
        const operand = k.value.operand;
        if (operand?.exprKind.case === 'identExpr' && operand.exprKind.value.name === 'self') {
          if (!k.value.testOnly) reads.set(k.value.field, 'value');
          else if (!reads.has(k.value.field)) reads.set(k.value.field, 'presence');
          return true;
        }
        return visit(operand);
      }
      case 'callExpr':
        return visit(k.value.target) && k.value.args.every(visit);
      case 'listExpr':
        return k.value.elements.every(visit);
      case 'structExpr':
        return k.value.entries.every((en) => (en.keyKind.case !== 'mapKey' || visit(en.keyKind.value)) && visit(en.value));
      case 'comprehensionExpr': {
        const c = k.value;
        if (c.iterVar === 'self' || c.iterVar2 === 'self' || c.accuVar === 'self') return false;
        return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].every(visit);
      }
      default:
        return true;
    }
  };
  return asts.every(visit) ? reads : undefined;
}

const scalarTypes = new Set(['string', 'integer', 'number', 'boolean']);

/**
 * Makes the key of a value from the fields the rules read; undefined when
 * this value cannot be keyed (not an object, a field read holding a list or
 * an object, a negative zero).
 */
export type OutcomeKey = (v: unknown) => string | undefined;

/**
 * The key maker for a node whose rules (their parsed expressions) read only
 * fields of `self`; undefined when they read it otherwise, or read a value
 * of a field the schema does not declare as a plain scalar (its CEL name
 * escaped, an object, a list, a preserved or embedded value).
 */
export function outcomeKeyFor(s: JSONSchemaProps, asts: readonly Expr[]): OutcomeKey | undefined {
  if (s.type !== 'object') return undefined;
  const reads = fieldsRead(asts);
  if (!reads) return undefined;
  const fields: [string, Read][] = [];
  for (const [name, read] of [...reads].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = s.properties && hasOwn(s.properties, name) ? s.properties[name] : undefined;
    // A CEL name that is not its property's (escaped, or undeclared) is left to the rules themselves.
    if (!p || name.includes('__')) return undefined;
    if (read === 'value') {
      const m = markersOf(p);
      if (!(m.intOrString || scalarTypes.has(p.type ?? '')) || m.preserveUnknownFields || m.embeddedResource) return undefined;
    }
    fields.push([name, read]);
  }
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const o = v as Record<string, unknown>;
    let key = '';
    for (const [name, read] of fields) {
      const x = hasOwn(o, name) ? o[name] : undefined;
      // Absent, null and present are three answers of `has` and of a read.
      if (x === undefined) { key += '\u0001'; continue; }
      if (x === null) { key += '\u0002'; continue; }
      if (read === 'presence') { key += '\u0003'; continue; }
      switch (typeof x) {
        case 'string': key += `s${x.length}:${x}`; break;
        case 'number': if (Object.is(x, -0)) return undefined; key += `n${x};`; break;
        case 'bigint': key += `i${x};`; break;
        case 'boolean': key += x ? 't' : 'f'; break;
        default: return undefined;
      }
    }
    return key;
  };
}

/** Lookups after which a node whose values seldom repeat stops remembering, and for how many visits. */
const probeLookups = 1024, pauseVisits = 16 * 1024;

/**
 * The cost of each key whose rules all passed, a bounded number per node
 * (forgotten all at once when full: a miss stays cheap). A node whose
 * values seldom repeat (fewer than one lookup in eight answered) stops
 * looking for a while: its misses would only add the key to the rules' cost.
 */
export class RememberedCosts {
  private readonly costs = new Map<string, number>();
  private lookups = 0;
  private hits = 0;
  private pausedFor = 0;

  /** Whether this visit runs the rules without looking (counts the visit). */
  paused(): boolean {
    if (this.pausedFor === 0) return false;
    this.pausedFor--;
    return true;
  }

  get(key: string): number | undefined {
    const cost = this.costs.get(key);
    if (cost !== undefined) this.hits++;
    if (++this.lookups === probeLookups) {
      if (this.hits * 8 < this.lookups) { this.pausedFor = pauseVisits; this.costs.clear(); }
      this.lookups = this.hits = 0;
    }
    return cost;
  }

  set(key: string, cost: number): void {
    if (this.pausedFor > 0) return;
    if (this.costs.size >= rememberedOutcomes) this.costs.clear();
    this.costs.set(key, cost);
  }
}
