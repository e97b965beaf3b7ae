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
 * The remembered outcomes of a node whose rules (their parsed expressions)
 * read only fields of `self`; undefined when they read it otherwise, or read
 * the value of a field the schema does not declare as a plain scalar (its
 * CEL name escaped, an object, a list, a preserved or embedded value).
 */
export function rememberedOutcomesFor(s: JSONSchemaProps, asts: readonly Expr[]): RememberedOutcomes | undefined {
  if (s.type !== 'object') return undefined;
  const reads = fieldsRead(asts);
  if (!reads) return undefined;
  const fields: [string, Read][] = [];
  for (const [name, read] of reads) {
    const p = s.properties && hasOwn(s.properties, name) ? s.properties[name] : undefined;
    // A CEL name that is not its property's (escaped, or undeclared) is left to the rules themselves.
    if (!p || name.includes('__')) return undefined;
    if (read === 'value') {
      const m = markersOf(p);
      if (!(m.intOrString || scalarTypes.has(p.type ?? '')) || m.preserveUnknownFields || m.embeddedResource) return undefined;
    }
    fields.push([name, read]);
  }
  return new RememberedOutcomes(fields);
}

// Absent, null and present (when only presence is read) are three answers of `has` and of a read.
const absent = Symbol('absent'), isNull = Symbol('null'), present = Symbol('present');

/** Lookups after which a node whose values seldom repeat stops remembering, and for how many visits. */
const probeLookups = 1024, pauseVisits = 16 * 1024;

type Trie = Map<unknown, unknown>;

/**
 * The cost of each value (by the fields read) whose rules all passed, a
 * bounded number per node (forgotten all at once when full: a miss stays
 * cheap). Kept in a tree of maps, one level per field, keyed by the field's
 * own value: the strings of a parsed body carry their hash, a key made by
 * joining them would be hashed anew at every visit. A node whose values
 * seldom repeat (fewer than one lookup in eight answered) stops looking for
 * a while: its misses would only add to the rules' cost.
 */
export class RememberedOutcomes {
  private root: Trie = new Map();
  private kept = 0;
  private lookups = 0;
  private hits = 0;
  private pausedFor = 0;
  /** The key of the last value looked up (a node's rules never visit the node again before it is kept). */
  private readonly parts: unknown[];

  constructor(private readonly fields: readonly [string, Read][]) {
    this.parts = new Array(fields.length);
  }

  /** Whether this visit runs the rules without looking (counts the visit). */
  paused(): boolean {
    if (this.pausedFor === 0) return false;
    this.pausedFor--;
    return true;
  }

  /** The remembered cost of `v`; undefined when none is, null when `v` cannot be keyed (not an object, a read field holding a container, a negative zero). */
  get(v: unknown): number | undefined | null {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    const o = v as Record<string, unknown>;
    const { fields, parts } = this;
    for (let i = 0; i < fields.length; i++) {
      const [name, read] = fields[i]!;
      const x = hasOwn(o, name) ? o[name] : undefined;
      if (x === undefined) parts[i] = absent;
      else if (x === null) parts[i] = isNull;
      else if (read === 'presence') parts[i] = present;
      else if (typeof x === 'object' || (typeof x === 'number' && Object.is(x, -0))) return null;
      else parts[i] = x;
    }
    let level: Trie | undefined = this.root;
    for (let i = 0; i < parts.length - 1 && level; i++) level = level.get(parts[i]) as Trie | undefined;
    const cost = parts.length === 0 ? (level?.get(present) as number | undefined) : (level?.get(parts[parts.length - 1]) as number | undefined);
    if (cost !== undefined) this.hits++;
    if (++this.lookups === probeLookups) {
      if (this.hits * 8 < this.lookups) { this.pausedFor = pauseVisits; this.forget(); }
      this.lookups = this.hits = 0;
    }
    return cost;
  }

  /** Remembers `cost` for the value last looked up. */
  keep(cost: number): void {
    if (this.pausedFor > 0) return;
    if (this.kept >= rememberedOutcomes) this.forget();
    const { parts } = this;
    let level = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = level.get(parts[i]) as Trie | undefined;
      if (!next) level.set(parts[i], (next = new Map()));
      level = next;
    }
    level.set(parts.length === 0 ? present : parts[parts.length - 1], cost);
    this.kept++;
  }

  private forget(): void {
    this.root = new Map();
    this.kept = 0;
  }
}
