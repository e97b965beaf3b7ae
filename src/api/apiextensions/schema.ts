// A custom resource's schema in the two forms the server needs: the
// JSONSchemaProps the validator compiles (upstream's `x-kubernetes-*`
// markers read as ours), and the catalog's `Schema`, from which decoding
// and pruning, server-side apply's type information and the OpenAPI
// documents are derived for every kind. One translation, so a custom kind
// travels the same road as a built-in one.

import { setOwn } from '../../machinery/ownkeys.js';
import { upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { t, type Schema } from '../schema.js';
import { ObjectMeta } from '../meta/v1.js';
import { type JSONSchemaProps } from '../validation/index.js';
import { markersOf } from '../validation/structural.js';

const theirs = upstreamCompat.openapiExtensionPrefix;
const ours = vocabulary.openapiExtensionPrefix;
const nested = ['items', 'not'] as const;
const nestedLists = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * The schema with upstream's marker names read as ours (the stored
 * definition keeps what was sent). Property names are data and stay as they are.
 */
export function withOurMarkers(s: JSONSchemaProps): JSONSchemaProps {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return s;
  const out: JSONSchemaProps = {};
  for (const [key, value] of Object.entries(s)) {
    const name = key.startsWith(theirs) ? ours + key.slice(theirs.length) : key;
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      const props: Record<string, JSONSchemaProps> = {};
      for (const [p, v] of Object.entries(value)) setOwn(props, p, withOurMarkers(v as JSONSchemaProps));
      out.properties = props;
    } else if ((nested as readonly string[]).includes(key) || (key === 'additionalProperties' && typeof value === 'object')) {
      setOwn(out, name, withOurMarkers(value as JSONSchemaProps));
    } else if ((nestedLists as readonly string[]).includes(key) && Array.isArray(value)) {
      setOwn(out, name, value.map((v) => withOurMarkers(v as JSONSchemaProps)));
    } else setOwn(out, name, value);
  }
  return out;
}

const types = new Set(['object', 'string', 'integer', 'number', 'boolean', 'array']);

/** One node in the catalog's language (markers already ours). */
function toSchema(s: JSONSchemaProps): Schema {
  const m = markersOf(s);
  const out: Schema = { keepsWrongTypes: true };
  if (typeof s.type === 'string' && types.has(s.type)) out.type = s.type as Schema['type'];
  if (typeof s.format === 'string') out.format = s.format;
  if (typeof s.description === 'string') out.description = s.description;
  if (Array.isArray(s.required)) out.required = s.required.filter((r): r is string => typeof r === 'string');
  if (Array.isArray(s.enum) && s.enum.every((e) => typeof e === 'string')) out.enum = s.enum as string[];
  if (s.default !== undefined) out.default = s.default;
  if (s.nullable === true) out.nullable = true;
  if (s.properties) {
    const props: Record<string, Schema> = {};
    for (const [name, p] of Object.entries(s.properties)) setOwn(props, name, toSchema(p));
    out.properties = props;
  }
  if (s.items && typeof s.items === 'object') out.items = toSchema(s.items);
  if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) out.additionalProperties = toSchema(s.additionalProperties);
  else if (s.additionalProperties === true) out.additionalProperties = { preserveUnknownFields: true, keepsWrongTypes: true };
  if (m.intOrString) { out.intOrString = true; out.format ??= 'int-or-string'; }
  if (m.preserveUnknownFields) out.preserveUnknownFields = true;
  if (m.embeddedResource) out.embeddedResource = true;
  if (m.listType === 'atomic' || m.listType === 'set' || m.listType === 'map') out.listType = m.listType;
  if (Array.isArray(m.listMapKeys)) out.listMapKeys = m.listMapKeys;
  if (m.mapType === 'atomic' || m.mapType === 'granular') out.mapType = m.mapType;
  return out;
}

/**
 * The schema of a custom kind in the catalog's language: the definition's
 * own, with apiVersion, kind and metadata as every kind has them (metadata
 * is always ObjectMeta, whatever the definition says of name and generateName).
 */
export function customKindSchema(s: JSONSchemaProps, definitionName: string): Schema {
  const root = toSchema(s);
  return {
    ...root, type: 'object', name: definitionName,
    properties: { ...root.properties, apiVersion: t.string('APIVersion defines the versioned schema of this representation of an object.'),
      kind: t.string('Kind is a string value representing the REST resource this object represents.'), metadata: { ref: ObjectMeta } },
  };
}

/** Whether a structural schema declares a default anywhere (its objects may gain fields when read under it). */
export function declaresDefaults(s: JSONSchemaProps): boolean {
  if (s.default !== undefined) return true;
  const below = [...Object.values(s.properties ?? {}), ...(s.items && !Array.isArray(s.items) ? [s.items] : []),
    ...(typeof s.additionalProperties === 'object' ? [s.additionalProperties] : [])];
  return below.some((b) => declaresDefaults(b as JSONSchemaProps));
}
