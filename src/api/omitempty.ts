// Empty maps and lists a built-in kind's object leaves out, as upstream's
// typed encoding does: its Go types mark them `omitempty`, so after a
// strategic merge patch that removes every annotation, or a write of
// `subsets: []`, the object holds no `annotations` and no `subsets` at all.
// And the structs it always writes: a field that is a Go value struct (a
// container's `resources`, a Deployment's `status`) reads back as `{}` when
// it was not sent, as an object created on upstream does.
// The fields upstream writes even when empty are its required ones (no
// omitempty), and those are ours too; structs are never dropped (an empty
// selector selects everything). Custom resources keep what they were sent,
// as upstream's unstructured objects do.
//
// Every write of a built-in kind walks its object (twice: without the
// structs before its managed fields are worked out, with them before it is
// validated), so each schema is read once into a plan, and the walk only
// follows plans, and only into the fields under which something may be
// dropped or filled: a container's `env` items, a ConfigMap's `data` values
// and most scalars are never visited. Nothing is copied: the object is
// shaped in place.

import { resolve, type Schema } from './schema.js';
import { isValueStructDefault } from './valuestructs.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One field of an object's plan. */
interface Field {
  plan: Plan;
  /** Whether the field goes when empty (an optional list or map). */
  dropsEmpty: 'list' | 'map' | undefined;
}

/** What the walk does at one value of a schema. */
interface Plan {
  /** An object's fields by name (all of them, while the plan is made). */
  fields?: Map<string, Field>;
  /** Fields Go writes as `{}` when the object has none (value structs: valuestructs.ts). */
  fills?: string[];
  /** A list's items, or a map's values. */
  elements?: Plan;
  /** Whether anything at or under this value may be dropped; and (`fillsUnder`) filled. */
  dropsUnder: boolean;
  fillsUnder: boolean;
  /** The fields worth a look: with `fill`, and without (those where something may be dropped). */
  withFill?: Map<string, Field>;
  withoutFill?: Map<string, Field>;
}

/** A value nothing is dropped from (scalars, free-form and embedded objects). */
const leaf: Plan = { dropsUnder: false, fillsUnder: false };

const plans = new WeakMap<Schema, Plan>();

/** The plan of a schema, with what lies under each of its values worked out. */
function planOf(schema: Schema): Plan {
  const s = resolve(schema);
  const known = plans.get(s);
  if (known) return known;
  const made: Plan[] = [];
  const root = makePlan(s, made);
  settle(made);
  return root;
}

function makePlan(schema: Schema, made: Plan[]): Plan {
  const s = resolve(schema);
  let plan = plans.get(s);
  if (plan) return plan;
  if (s.preserveUnknownFields || s.embeddedResource) return leaf;
  plan = { dropsUnder: false, fillsUnder: false };
  // Set before the fields are planned: recursive schemas (JSONSchemaProps) meet their own plan.
  plans.set(s, plan);
  made.push(plan);
  if (s.type === 'array' && s.items) plan.elements = makePlan(s.items, made);
  else if (s.properties) {
    const required = new Set(s.required ?? []);
    plan.fields = new Map(Object.entries(s.properties).map(([name, field]) => {
      const f = resolve(field);
      const kind = f.type === 'array' ? 'list' : f.type === 'object' && !f.properties && f.additionalProperties ? 'map' : undefined;
      return [name, { plan: makePlan(f, made), dropsEmpty: required.has(name) ? undefined : kind }];
    }));
    const fills = Object.keys(s.properties).filter((name) => isValueStructDefault(s.properties![name]!.default));
    if (fills.length) plan.fills = fills;
  } else if (s.type === 'object' && s.additionalProperties) plan.elements = makePlan(s.additionalProperties, made);
  return plan;
}

/**
 * What lies under each new plan, to a fixed point (recursive schemas), then
 * the fields worth a look in each mode.
 */
function settle(made: Plan[]): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const plan of made) {
      let drops = plan.dropsUnder;
      let fills = plan.fillsUnder || plan.fills !== undefined;
      if (plan.elements) {
        drops ||= plan.elements.dropsUnder;
        fills ||= plan.elements.fillsUnder;
      }
      for (const f of plan.fields?.values() ?? []) {
        drops ||= f.dropsEmpty !== undefined || f.plan.dropsUnder;
        fills ||= f.plan.fillsUnder;
      }
      if (drops !== plan.dropsUnder || fills !== plan.fillsUnder) {
        plan.dropsUnder = drops;
        plan.fillsUnder = fills;
        changed = true;
      }
    }
  }
  for (const plan of made) {
    if (!plan.fields) continue;
    const entries = [...plan.fields];
    plan.withFill = new Map(entries.filter(([, f]) => f.dropsEmpty !== undefined || f.plan.dropsUnder || f.plan.fillsUnder));
    plan.withoutFill = new Map(entries.filter(([, f]) => f.dropsEmpty !== undefined || f.plan.dropsUnder));
    delete plan.fields;
  }
}

/**
 * Shapes `obj` (in place) as upstream's typed encoding writes it: removes the
 * empty maps and lists `schema` does not require, and (with `fill`) writes
 * the value structs it lacks as `{}`; answers `obj`.
 */
export function asTypedEncoding<T>(obj: T, schema: Schema, fill = true): T {
  const plan = planOf(schema);
  if (plan.dropsUnder || (fill && plan.fillsUnder)) walk(obj, plan, 0, fill);
  return obj;
}

/** Objects nest far less than this in any built-in kind; deeper values were refused when decoded. */
const maxDepth = 64;

/** Whether the walk has anything to do under a value of `plan`. */
const worthALook = (plan: Plan, fill: boolean) => plan.dropsUnder || (fill && plan.fillsUnder);

function walk(value: unknown, plan: Plan, depth: number, fill: boolean): void {
  if (depth > maxDepth) return;
  if (Array.isArray(value)) {
    const elements = plan.elements;
    if (elements && worthALook(elements, fill)) for (const item of value) walk(item, elements, depth + 1, fill);
    return;
  }
  if (!isObject(value)) return;
  const fields = fill ? plan.withFill : plan.withoutFill;
  if (!fields) {
    // A map: its values may be structs or lists of their own.
    const elements = plan.elements;
    if (elements && worthALook(elements, fill)) for (const k of Object.keys(value)) walk(value[k], elements, depth + 1, fill);
    return;
  }
  if (fill && plan.fills) for (const k of plan.fills) if (!Object.hasOwn(value, k)) value[k] = {};
  if (fields.size === 0) return;
  // for-in, not Object.keys: no array per object, and V8 reads each value through the object's enum cache.
  for (const k in value) {
    const v = value[k];
    if (typeof v !== 'object' || v === null) continue; // scalars: nothing to drop or fill
    const field = fields.get(k);
    if (!field) continue;
    if (field.dropsEmpty === 'list' ? Array.isArray(v) && v.length === 0 : field.dropsEmpty === 'map' && isObject(v) && isEmpty(v)) delete value[k];
    else if (worthALook(field.plan, fill)) walk(v, field.plan, depth + 1, fill);
  }
}

function isEmpty(o: Obj): boolean {
  for (const _ in o) return false;
  return true;
}
