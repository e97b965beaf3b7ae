// The schema language of kind declarations: a typed subset of OpenAPI v3
// schemas. Merge markers are typed fields here; the OpenAPI generator turns
// them into the `x-<product>-…` extensions (and the upstream names kubectl reads).

import { valueStructFieldsOf } from './valuestructs.js';

export type ListType = 'atomic' | 'set' | 'map';
export type MapType = 'atomic' | 'granular';

export interface Schema {
  type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array';
  /** byte (base64), date-time, int32, int64, int-or-string. */
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema;
  /** The shared named schema this one stands for (ObjectMeta, ObjectReference, ...). */
  ref?: Schema;
  /** Definition name of a named schema (made by `define`), e.g. `io.plat.api.core.v1.Namespace`. */
  name?: string;
  enum?: string[];
  default?: unknown;
  /** Accepts an integer or a string. */
  intOrString?: boolean;
  /** Keeps fields the schema does not name (free-form objects). */
  preserveUnknownFields?: boolean;
  /** An embedded object with apiVersion/kind/metadata of its own. */
  embeddedResource?: boolean;
  listType?: ListType;
  listMapKeys?: string[];
  mapType?: MapType;
  /** Strategic merge: key of list items and the strategy (`merge`, `retainKeys`, `merge,retainKeys`). */
  patchMergeKey?: string;
  patchStrategy?: string;
  nullable?: boolean;
  /**
   * A value of another JSON type than `type` is kept as sent, for the schema
   * validator to report with its 422 (custom resources, which upstream
   * decodes untyped); a typed decoder's 400 is for built-in kinds.
   */
  keepsWrongTypes?: boolean;
  /** Field number of this property in the protobuf wire form (as upstream's generated.proto). */
  proto?: number;
  /**
   * Whether the protobuf form writes the field when empty, where upstream's Go
   * type decides it otherwise than its JSON type would suggest (see
   * api/protobuf/presence.ts): `always` for a value field, `whenSet` for a pointer.
   */
  protoPresence?: 'always' | 'whenSet';
  /**
   * Wire shape where it is not the JSON one: `time` and `microTime` are
   * {seconds, nanos} messages, `fieldsV1` and `rawExtension` a message holding
   * JSON bytes, `intOrString` the IntOrString message, `stringList` a list of
   * strings wrapped in a message of its own (a user's ExtraValue), `quantity`
   * a resource Quantity ({string}: its canonical text; JSON also takes a number).
   */
  protoMessage?: 'time' | 'microTime' | 'fieldsV1' | 'rawExtension' | 'intOrString' | 'stringList' | 'quantity';
  /**
   * Go structs embedded in this object: their fields are this object's in
   * JSON, but travel as one nested message at `proto` on the wire (a Volume's
   * VolumeSource, a Probe's ProbeHandler). Their properties carry the embedded
   * message's field numbers and are left out of this message's own fields.
   */
  protoInline?: { proto: number; schema: Schema }[];
}


/**
 * Names a schema, so that documents share it as one definition and others
 * refer to it with `t.ref`. Nothing is registered anywhere: a named schema
 * travels with whatever uses it, so kinds added at run time bring their own.
 */
export function define(name: string, schema: Schema): Schema {
  return { ...withValueStructDefaults(name, schema), name };
}

/** A field's schema with the default `{}`; a named schema itself stays as it is (the default sits on a reference to it). */
const defaulted = (s: Schema): Schema => (s.name ? { ref: s, description: s.description, default: {} } : { ...s, default: {} });

/** `schema` with `default: {}` on the fields Go writes as value structs (see valuestructs.ts). */
function withValueStructDefaults(name: string, schema: Schema): Schema {
  const fields = valueStructFieldsOf(name);
  if (!fields || !schema.properties) return schema;
  const properties = { ...schema.properties };
  for (const entry of fields) {
    const field = entry.replace(/\[\]$|\{\}$/, '');
    const p = properties[field];
    if (!p) continue;
    if (entry.endsWith('[]')) {
      if (p.items) properties[field] = { ...p, items: defaulted(p.items) };
    } else if (entry.endsWith('{}')) {
      if (p.additionalProperties) properties[field] = { ...p, additionalProperties: defaulted(p.additionalProperties) };
    } else {
      properties[field] = defaulted(p);
    }
  }
  return { ...schema, properties };
}

/** Follows `ref` to the named schema. */
export function resolve(s: Schema): Schema {
  return s.ref ? resolve(s.ref) : s;
}

/** Every named schema reachable from `roots` (through refs, properties, items and map values), by name. */
export function namedSchemas(roots: Iterable<Schema>): Map<string, Schema> {
  const found = new Map<string, Schema>();
  const seen = new Set<Schema>();
  const stack = [...roots];
  while (stack.length) {
    const s = stack.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (s.name && !found.has(s.name)) found.set(s.name, s);
    if (s.ref) stack.push(s.ref);
    if (s.items) stack.push(s.items);
    if (s.additionalProperties) stack.push(s.additionalProperties);
    if (s.properties) stack.push(...Object.values(s.properties));
  }
  return found;
}

// Builders: short names keep declarations readable.
export const t = {
  string: (description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'string', description, ...extra }),
  bytes: (description?: string): Schema => ({ type: 'string', format: 'byte', description }),
  time: (description?: string): Schema => ({ type: 'string', format: 'date-time', description }),
  int32: (description?: string): Schema => ({ type: 'integer', format: 'int32', description }),
  int64: (description?: string): Schema => ({ type: 'integer', format: 'int64', description }),
  bool: (description?: string): Schema => ({ type: 'boolean', description }),
  intOrString: (description?: string): Schema => ({ intOrString: true, format: 'int-or-string', description }),
  ref: (target: Schema, description?: string): Schema => ({ ref: target, description }),
  array: (items: Schema, description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, description, ...extra }),
  map: (values: Schema, description?: string): Schema => ({ type: 'object', additionalProperties: values, description }),
  object: (properties: Record<string, Schema>, description?: string, extra: Partial<Schema> = {}): Schema =>
    ({ type: 'object', properties: withZeroDefaults(properties, extra.required), description, ...extra }),
  freeForm: (description?: string): Schema => ({ type: 'object', preserveUnknownFields: true, description }),
};

/** The zero value of a scalar JSON type, as Go's would be. */
const zeroValues: Partial<Record<NonNullable<Schema['type']>, unknown>> = { string: '', integer: 0, number: 0, boolean: false };

/**
 * Upstream's published OpenAPI gives every required (not omitempty) scalar
 * field its Go zero value as default, and server-side apply reads list-map
 * keys through it (an item that omits such a key has it as ""/0). Our
 * required fields are upstream's, so the same default follows from them;
 * a field that declares its own default (protocol: TCP) keeps it.
 */
function withZeroDefaults(properties: Record<string, Schema>, required: string[] | undefined): Record<string, Schema> {
  if (!required?.length) return properties;
  let out = properties;
  for (const name of required) {
    const field = properties[name];
    if (!field || field.default !== undefined || field.ref || field.intOrString || field.format === 'byte' || field.format === 'date-time') continue;
    const zero = field.type === undefined ? undefined : zeroValues[field.type];
    if (zero === undefined) continue;
    if (out === properties) out = { ...properties };
    out[name] = { ...field, default: zero };
  }
  return out;
}

/** Marks a property with its protobuf field number (and, where the default rule does not hold, its presence). */
export function p(fieldNumber: number, schema: Schema, protoPresence?: Schema['protoPresence']): Schema {
  return protoPresence ? { ...schema, proto: fieldNumber, protoPresence } : { ...schema, proto: fieldNumber };
}
