// The outcome of a node's rules remembered by what they read. A rule
// outcome is a pure function of the values it reads (CEL has no clock, no
// randomness, and validation rules no authorizer), its run-time cost too.
// Rules that read `self` only as `self.f` and `has(self.f)`, with `f` a
// declared property of a scalar type where its value is read, depend on the
// node's value only through those fields: a key made of them (presence, type
// and value; only presence where nothing more is read) stands for the whole
// value; so do a list's length and its items' fields for rules that read
// the items only through comprehensions over `self` (a filter's result only
// counted). Of the outcomes only "every rule passed, at this cost" is kept (a
// failure is made again, with its message and path); kept answers are
// bounded per node, as the validator's pattern answers are. The rules of a
// Gateway API route's path match, filters and backend (most of its hundreds
// of evaluations per object) are of this shape, and their values repeat
// across a kind's objects (path types, filter types, backend kinds) and
// across updates of one object.

import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { hasOwn } from '../../../machinery/ownkeys.js';
import type { JSONSchemaProps } from '../structural.js';
import { markersOf } from '../structural.js';

/** Outcomes kept per node, at most, and the parts of a key (the levels of maps holding one). */
const rememberedOutcomes = 512, maxKeyParts = 64;

/** How a rule reads one field of `self`: its presence only, or its value. */
type Read = 'presence' | 'value';

/**
 * The fields the expressions read, each as presence or value: of `self`
 * (`listRoot` false), or of the items of the list `self` (`listRoot`: read
 * through the variable of a comprehension over `self`, beside `self.size()`);
 * undefined when one reads `self` or an item any other way (as a whole,
 * indexed, through an optional, by a comprehension's index, or under a
 * variable named again inside).
 */
function fieldsRead(asts: readonly Expr[], listRoot: boolean): Map<string, Read> | undefined {
  const reads = new Map<string, Read>();
  const isIdent = (e: Expr | undefined, name: string) => e?.exprKind.case === 'identExpr' && e.exprKind.value.name === name;
  // `counted`: the item and accumulator variables of a comprehension whose result is only counted
  // (`self.filter(f, ...).size()`): its step may add the item to the accumulator (`accu + [f]`, under a `?:`),
  // a list that is counted and whose items are never read.
  const visit = (e: Expr | undefined, items: ReadonlySet<string>, counted?: { item: string; accu: string }): boolean => {
    if (!e) return true;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr':
        // `self` (or an item) anywhere but where the cases below allow reads all of it.
        return k.value.name !== 'self' && !items.has(k.value.name);
      case 'selectExpr': {
        const operand = k.value.operand;
        const root = operand?.exprKind.case === 'identExpr' ? operand.exprKind.value.name : undefined;
        if (root !== undefined && (listRoot ? items.has(root) : root === 'self')) {
          if (!k.value.testOnly) reads.set(k.value.field, 'value');
          else if (!reads.has(k.value.field)) reads.set(k.value.field, 'presence');
          return true;
        }
        return visit(operand, items);
      }
      case 'callExpr': {
        const { function: name, target, args } = k.value;
        // A list's size is part of its key.
        const sized = name === 'size' ? (target && args.length === 0 ? target : !target && args.length === 1 ? args[0] : undefined) : undefined;
        if (listRoot && isIdent(sized, 'self')) return true;
        if (listRoot && sized?.exprKind.case === 'comprehensionExpr' && isIdent(sized.exprKind.value.iterRange, 'self')) {
          return visit(sized, items, { item: sized.exprKind.value.iterVar, accu: sized.exprKind.value.accuVar });
        }
        if (counted && name === '_+_' && args.length === 2 && isIdent(args[0], counted.accu)) {
          const added = args[1]!.exprKind;
          if (added.case === 'listExpr' && added.value.elements.length === 1 && isIdent(added.value.elements[0], counted.item)) return true;
        }
        if (counted && name === '_?_:_') return visit(args[0], items) && visit(args[1], items, counted) && visit(args[2], items, counted);
        return visit(target, items) && args.every((a) => visit(a, items));
      }
      case 'listExpr':
        return k.value.elements.every((x) => visit(x, items));
      case 'structExpr':
        return k.value.entries.every((en) => (en.keyKind.case !== 'mapKey' || visit(en.keyKind.value, items)) && visit(en.value, items));
      case 'comprehensionExpr': {
        const c = k.value;
        for (const name of [c.iterVar, c.iterVar2, c.accuVar]) if (name && (name === 'self' || items.has(name))) return false;
        let inner = items;
        if (listRoot && isIdent(c.iterRange, 'self')) {
          if (c.iterVar2) return false;
          inner = new Set([...items, c.iterVar]);
        } else if (!visit(c.iterRange, items)) return false;
        return visit(c.accuInit, items) && visit(c.loopCondition, inner) && visit(c.loopStep, inner, counted) && visit(c.result, items);
      }
      default:
        return true;
    }
  };
  const none = new Set<string>();
  return asts.every((e) => visit(e, none)) ? reads : undefined;
}

const scalarTypes = new Set(['string', 'integer', 'number', 'boolean']);

/** The fields read, checked against the object schema `s`: read by value only when a plain scalar; undefined otherwise. */
function checkedFields(s: JSONSchemaProps | undefined, reads: Map<string, Read>): [string, Read][] | undefined {
  if (s?.type !== 'object') return undefined;
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
  return fields;
}

/**
 * The remembered outcomes of a node whose rules (their parsed expressions)
 * read only fields of `self`, or of the items of a list `self`; undefined
 * when they read it otherwise, or read the value of a field the schema does
 * not declare as a plain scalar (its CEL name escaped, an object, a list, a
 * preserved or embedded value).
 */
export function rememberedOutcomesFor(s: JSONSchemaProps, asts: readonly Expr[]): RememberedOutcomes | undefined {
  const list = s.type === 'array';
  if (!list && s.type !== 'object') return undefined;
  const reads = fieldsRead(asts, list);
  const fields = reads && checkedFields(list ? s.items : s, reads);
  return fields && new RememberedOutcomes(fields, list);
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
  private readonly parts: unknown[] = [];

  /** `list`: the node is a list, keyed by its length and its items' fields. */
  constructor(private readonly fields: readonly [string, Read][], private readonly list: boolean) {}

  /** Whether this visit runs the rules without looking (counts the visit). */
  paused(): boolean {
    if (this.pausedFor === 0) return false;
    this.pausedFor--;
    return true;
  }

  /** The remembered cost of `v`; undefined when none is, null when `v` cannot be keyed (not of its type, a read field holding a container, a negative zero). */
  get(v: unknown): number | undefined | null {
    const parts = this.parts;
    parts.length = 0;
    if (this.list) {
      if (!Array.isArray(v)) return null;
      // A long list is not remembered: each part of a key is a level of maps.
      if (v.length * this.fields.length > maxKeyParts) return null;
      parts.push(v.length);
      for (const item of v) if (!this.read(item)) return null;
    } else if (!this.read(v)) return null;
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

  /** Adds the parts of an object's key; false when it cannot be keyed. */
  private read(v: unknown): boolean {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    const o = v as Record<string, unknown>;
    for (const [name, read] of this.fields) {
      const x = hasOwn(o, name) ? o[name] : undefined;
      if (x === undefined) this.parts.push(absent);
      else if (x === null) this.parts.push(isNull);
      else if (read === 'presence') this.parts.push(present);
      else if (typeof x === 'object' || (typeof x === 'number' && Object.is(x, -0))) return false;
      else this.parts.push(x);
    }
    return true;
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
