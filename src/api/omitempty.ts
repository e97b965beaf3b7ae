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
// Every write of a built-in kind walks its object, so each schema is read
// once into a plan (which fields may be dropped, where to look further) and
// the walk only follows plans: about a fifth of the cost of resolving the
// schema's references on every write (a Deployment: 23 µs a walk).

import { resolve, type Schema } from './schema.js';
import { isValueStructDefault } from './valuestructs.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the walk does at one value of a schema. */
interface Plan {
  /** An object's fields by name: the plan of each and whether it goes when empty (an optional list or map). */
  fields?: Map<string, { plan: Plan; dropsEmpty: 'list' | 'map' | undefined }>;
  /** Fields Go writes as `{}` when the object has none (value structs: valuestructs.ts). */
  fills?: string[];
  /** A list's items, or a map's values. */
  elements?: Plan;
}

/** A value nothing is dropped from (scalars, free-form and embedded objects). */
const leaf: Plan = {};

const plans = new WeakMap<Schema, Plan>();

function planOf(schema: Schema): Plan {
  const s = resolve(schema);
  let plan = plans.get(s);
  if (plan) return plan;
  if (s.preserveUnknownFields || s.embeddedResource) return leaf;
  plan = {};
  // Set before the fields are planned: recursive schemas (JSONSchemaProps) meet their own plan.
  plans.set(s, plan);
  if (s.type === 'array' && s.items) plan.elements = planOf(s.items);
  else if (s.properties) {
    const required = new Set(s.required ?? []);
    plan.fields = new Map(Object.entries(s.properties).map(([name, field]) => {
      const f = resolve(field);
      const kind = f.type === 'array' ? 'list' : f.type === 'object' && !f.properties && f.additionalProperties ? 'map' : undefined;
      return [name, { plan: planOf(f), dropsEmpty: required.has(name) ? undefined : kind }];
    }));
    const fills = Object.keys(s.properties).filter((name) => isValueStructDefault(s.properties![name]!.default));
    if (fills.length) plan.fills = fills;
  } else if (s.type === 'object' && s.additionalProperties) plan.elements = planOf(s.additionalProperties);
  return plan;
}

/**
 * Shapes `obj` (in place) as upstream's typed encoding writes it: removes the
 * empty maps and lists `schema` does not require, and (with `fill`) writes
 * the value structs it lacks as `{}`; answers `obj`.
 */
export function asTypedEncoding<T>(obj: T, schema: Schema, fill = true): T {
  walk(obj, planOf(schema), 0, fill);
  return obj;
}

/** Objects nest far less than this in any built-in kind; deeper values were refused when decoded. */
const maxDepth = 64;

function walk(value: unknown, plan: Plan, depth: number, fill: boolean): void {
  if (depth > maxDepth || plan === leaf) return;
  if (Array.isArray(value)) {
    if (plan.elements && plan.elements !== leaf) for (const item of value) walk(item, plan.elements, depth + 1, fill);
    return;
  }
  if (!isObject(value)) return;
  const fields = plan.fields;
  if (!fields) {
    // A map: its values may be structs or lists of their own.
    if (plan.elements && plan.elements !== leaf) for (const k of Object.keys(value)) walk(value[k], plan.elements, depth + 1, fill);
    return;
  }
  if (fill && plan.fills) for (const k of plan.fills) if (!Object.hasOwn(value, k)) value[k] = {};
  for (const k of Object.keys(value)) {
    const field = fields.get(k);
    if (!field) continue;
    const v = value[k];
    if (field.dropsEmpty === 'list' ? Array.isArray(v) && v.length === 0 : field.dropsEmpty === 'map' && isObject(v) && isEmpty(v)) delete value[k];
    else if (typeof v === 'object' && v !== null) walk(v, field.plan, depth + 1, fill);
  }
}

function isEmpty(o: Obj): boolean {
  for (const _ in o) return false;
  return true;
}
