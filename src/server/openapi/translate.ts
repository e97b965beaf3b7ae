// Schema translation: our declaration language (src/api/schema.ts) into OpenAPI
// v2 (Swagger) or v3 schema objects. Merge markers become our `x-<product>-…`
// extensions, and the strategic-merge keys also get their upstream names
// because kubectl's client-side apply reads only those.

import type { Schema } from '../../api/schema.js';
import { isValueStructDefault } from '../../api/valuestructs.js';
import { ext, upstreamExt } from './names.js';

export type Dialect = 'v2' | 'v3';
export type Json = Record<string, unknown>;

export function refPrefix(dialect: Dialect): string {
  return dialect === 'v2' ? '#/definitions/' : '#/components/schemas/';
}

/** Definition name of a `$ref` written by this module, or undefined. */
export function refTarget(ref: string, dialect: Dialect): string | undefined {
  const prefix = refPrefix(dialect);
  return ref.startsWith(prefix) ? ref.slice(prefix.length) : undefined;
}

/** Extensions carried by a schema whatever its shape (also beside a `$ref`). */
function markers(s: Schema): Json {
  const out: Json = {};
  if (s.listType) out[ext.listType] = s.listType;
  if (s.listMapKeys) out[ext.listMapKeys] = [...s.listMapKeys];
  if (s.mapType) out[ext.mapType] = s.mapType;
  if (s.patchMergeKey) {
    out[upstreamExt.patchMergeKey] = s.patchMergeKey;
    out[ext.patchMergeKey] = s.patchMergeKey;
  }
  if (s.patchStrategy) {
    out[upstreamExt.patchStrategy] = s.patchStrategy;
    out[ext.patchStrategy] = s.patchStrategy;
  }
  return out;
}

const sortedKeys = (o: Record<string, unknown>) => Object.keys(o).sort();

export function translateSchema(s: Schema, dialect: Dialect): Json {
  if (s.ref) return translateRef(s, dialect);
  const out: Json = {};
  if (s.description) out.description = s.description;
  if (s.intOrString) {
    // v2 has no union types: upstream spells int-or-string as a string format.
    if (dialect === 'v2') Object.assign(out, { type: 'string', format: 'int-or-string' });
    else Object.assign(out, { [upstreamExt.intOrString]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
  } else {
    if (s.type) out.type = s.type;
    if (s.format) out.format = s.format;
  }
  if (s.enum) out.enum = [...s.enum];
  // Upstream's v2 document carries no value-struct default (`{}`): its structs are references there, and v2 keeps none beside a `$ref`.
  if (s.default !== undefined && !(dialect === 'v2' && isValueStructDefault(s.default))) out.default = s.default;
  if (s.nullable) out[dialect === 'v2' ? 'x-nullable' : 'nullable'] = true;
  if (s.properties) {
    const props: Json = {};
    for (const key of sortedKeys(s.properties)) props[key] = translateSchema(s.properties[key], dialect);
    out.properties = props;
  }
  if (s.required && s.required.length > 0) out.required = [...s.required];
  if (s.items) out.items = translateSchema(s.items, dialect);
  if (s.additionalProperties) out.additionalProperties = translateSchema(s.additionalProperties, dialect);
  if (dialect === 'v3') {
    // v2 consumers (old kubectl validation) choke on these; upstream drops them from v2 too.
    if (s.preserveUnknownFields) out[upstreamExt.preserveUnknownFields] = true;
    if (s.embeddedResource) out[upstreamExt.embeddedResource] = true;
  }
  return Object.assign(out, markers(s));
}

/**
 * A reference. v2 keeps description (and markers) as siblings of `$ref`, as the
 * upstream Swagger document does. In v3 siblings of `$ref` are ignored by
 * readers, so upstream wraps the reference in a one-element `allOf`.
 */
function translateRef(s: Schema, dialect: Dialect): Json {
  const ref = { $ref: refPrefix(dialect) + s.ref!.name };
  const extra = markers(s);
  if (dialect === 'v2') {
    const out: Json = { ...ref };
    if (s.description) out.description = s.description;
    return Object.assign(out, extra);
  }
  if (!s.description && s.default === undefined && !s.nullable && Object.keys(extra).length === 0) return ref;
  const out: Json = { allOf: [ref] };
  if (s.description) out.description = s.description;
  if (s.default !== undefined) out.default = s.default;
  if (s.nullable) out.nullable = true;
  return Object.assign(out, extra);
}

/** Every definition name a translated schema refers to (walks the JSON). */
export function collectRefs(node: unknown, dialect: Dialect, into: Set<string>): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, dialect, into);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const target = refTarget(value, dialect);
        if (target) into.add(target);
      } else {
        collectRefs(value, dialect, into);
      }
    }
  }
  return into;
}
