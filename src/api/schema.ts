// The schema language of kind declarations: a typed subset of OpenAPI v3
// schemas. Merge markers are typed fields here; the OpenAPI generator turns
// them into the `x-<product>-…` extensions (and the upstream names kubectl reads).

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
  /** Name of a shared definition (see `definitions`). */
  ref?: string;
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
  /** Field number of this property in the protobuf wire form (as upstream's generated.proto). */
  proto?: number;
  /**
   * Wire shape where it is not the JSON one: `time` and `microTime` are
   * {seconds, nanos} messages, `fieldsV1` and `rawExtension` a message holding
   * JSON bytes, `intOrString` the IntOrString message, `stringList` a list of
   * strings wrapped in a message of its own (a user's ExtraValue).
   */
  protoMessage?: 'time' | 'microTime' | 'fieldsV1' | 'rawExtension' | 'intOrString' | 'stringList';
}


/** Shared named schemas (ObjectMeta, ObjectReference, …), keyed by definition name. */
const definitionTable = new Map<string, Schema>();

export function define(name: string, schema: Schema): string {
  if (definitionTable.has(name)) throw new Error(`schema definition ${name} declared twice`);
  definitionTable.set(name, schema);
  return name;
}

export function definition(name: string): Schema {
  const s = definitionTable.get(name);
  if (!s) throw new Error(`unknown schema definition ${name}`);
  return s;
}

export function definitions(): ReadonlyMap<string, Schema> {
  return definitionTable;
}

/** Follows `ref` to the named definition. */
export function resolve(s: Schema): Schema {
  return s.ref ? resolve(definition(s.ref)) : s;
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
  ref: (name: string, description?: string): Schema => ({ ref: name, description }),
  array: (items: Schema, description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, description, ...extra }),
  map: (values: Schema, description?: string): Schema => ({ type: 'object', additionalProperties: values, description }),
  object: (properties: Record<string, Schema>, description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'object', properties, description, ...extra }),
  freeForm: (description?: string): Schema => ({ type: 'object', preserveUnknownFields: true, description }),
};

/** Marks a property with its protobuf field number. */
export function p(fieldNumber: number, schema: Schema): Schema {
  return { ...schema, proto: fieldNumber };
}
