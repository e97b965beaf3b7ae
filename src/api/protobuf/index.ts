// Protobuf bodies of built-in kinds: the envelope plus the schema-driven codec.
// Requests decode to the same JSON shape a JSON body would give, so the rest of
// the write path never knows which format the client spoke.

import { errors, isApiError } from '../../machinery/errors.js';
import { tooDeep, valueExceedsDepth } from '../../machinery/limits.js';
import { upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { p, t, type Schema } from '../schema.js';
import { DeleteOptions, ListMeta, Status } from '../meta/v1.js';
import { apiVersionOf, type KindDefinition, type KubeObject } from '../kind.js';
import { decodeMessage, encodeMessage } from './codec.js';
import { decodeEnvelope, encodeEnvelope } from './envelope.js';

export { decodeMessage, encodeMessage } from './codec.js';
export { decodeEnvelope, encodeEnvelope, envelopeMagic, hasEnvelopeMagic, type Envelope } from './envelope.js';
export { ProtobufError } from '../../machinery/protobufwire.js';

export type SchemaLookup = (apiVersion: string, kind: string) => Schema | undefined;

const protobufMediaTypes: readonly string[] = [vocabulary.protobufMediaType, upstreamCompat.protobufMediaType];

/** Our binary media type or upstream's (which the real kubectl sends); parameters are ignored. */
export function isProtobufMediaType(contentType: string): boolean {
  return protobufMediaTypes.includes(contentType.split(';')[0].trim().toLowerCase());
}

const listSchemas = new WeakMap<Schema, Schema>();
const isListSchema = new WeakSet<Schema>();

/** The wire shape of any `<Kind>List`: {metadata=1 ListMeta, items=2 repeated}. */
export function listSchemaOf(itemSchema: Schema): Schema {
  let s = listSchemas.get(itemSchema);
  if (!s) {
    s = t.object({
      apiVersion: t.string(),
      kind: t.string(),
      metadata: p(1, t.ref(ListMeta)),
      items: p(2, t.array(itemSchema)),
    });
    listSchemas.set(itemSchema, s);
    isListSchema.add(s);
  }
  return s;
}

/**
 * Decodes an enveloped protobuf body to its JSON form, with apiVersion and kind
 * from the envelope. A `<Kind>List` the lookup does not know is read as a list
 * of `<Kind>`. Every failure is a 400.
 */
export function decodeProtobufObject(body: Buffer, schemaOf: SchemaLookup): KubeObject {
  try {
    const env = decodeEnvelope(body);
    if (env.contentEncoding !== '') throw errors.badRequest(`unsupported content encoding "${env.contentEncoding}" in protobuf envelope`);
    if (env.contentType !== '' && !isProtobufMediaType(env.contentType)) {
      throw errors.badRequest(`unsupported content type "${env.contentType}" in protobuf envelope`);
    }
    if (env.kind === '') throw errors.badRequest("Object 'Kind' is missing in protobuf envelope");
    if (env.apiVersion === '') throw errors.badRequest("Object 'apiVersion' is missing in protobuf envelope");
    let schema = schemaOf(env.apiVersion, env.kind);
    if (!schema && env.kind.endsWith('List')) {
      const item = schemaOf(env.apiVersion, env.kind.slice(0, -'List'.length));
      if (item) schema = listSchemaOf(item);
    }
    if (!schema) throw errors.badRequest(`no kind "${env.kind}" is registered for version "${env.apiVersion}"`);
    const fields = decodeMessage(env.raw, schema);
    delete fields.apiVersion;
    delete fields.kind;
    const obj: KubeObject = { apiVersion: env.apiVersion, kind: env.kind, ...fields };
    // `items` of a list is not omitempty: an empty list still carries it.
    if (isListSchema.has(schema) && !Array.isArray(obj.items)) obj.items = [];
    // Messages nest only as deep as the schema, but the JSON they embed (fieldsV1) may nest further.
    if (valueExceedsDepth(obj)) throw tooDeep();
    return obj;
  } catch (e) {
    if (isApiError(e)) throw e;
    throw errors.badRequest((e as Error)?.message || 'malformed protobuf body');
  }
}

/**
 * Encodes an object in the envelope. `schema` is the kind's; an object with an
 * `items` array whose schema has no `items` field is encoded as its list.
 * Throws a plain Error when the object does not fit its schema (a server bug).
 */
export function encodeProtobufObject(obj: KubeObject, schema: Schema): Buffer {
  const s = Array.isArray(obj.items) && schema.properties?.items === undefined ? listSchemaOf(schema) : schema;
  return encodeEnvelope(obj.apiVersion ?? '', obj.kind ?? '', encodeMessage(obj, s));
}

/**
 * A lookup over the served kinds: each kind and its list in its own group
 * version, plus Status and DeleteOptions in every one of those versions and in
 * the meta group (upstream registers them everywhere).
 */
export function builtinSchemaLookup(kinds: readonly KindDefinition[]): SchemaLookup {
  const table = new Map<string, Schema>();
  const key = (apiVersion: string, kind: string) => `${apiVersion}\u0000${kind}`;
  const versions = new Set<string>(['v1', `${vocabulary.metaGroup}/v1`, `${upstreamCompat.metaGroup}/v1`]);
  for (const k of kinds) {
    const apiVersion = apiVersionOf(k);
    versions.add(apiVersion);
    table.set(key(apiVersion, k.kind), k.schema);
    table.set(key(apiVersion, k.listKind), listSchemaOf(k.schema));
  }
  for (const v of versions) {
    table.set(key(v, 'Status'), Status);
    table.set(key(v, 'DeleteOptions'), DeleteOptions);
  }
  return (apiVersion, kind) => table.get(key(apiVersion, kind));
}
