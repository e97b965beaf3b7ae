// The schema language of custom resources as it travels in JSON: an OpenAPI
// v3 schema (the structural subset upstream enforces), with the product's
// `x-plat-*` markers where upstream writes `x-kubernetes-*`. This is the data
// a CustomResourceDefinition carries; `checkSchema` refuses what upstream
// refuses, `compileSchema` turns an accepted one into closures.

import { vocabulary } from '../../machinery/vocabulary.js';

/** One CEL validation rule (`x-plat-validations` entry). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate. */
  reason?: string;
  /** A JSON path relative to the rule's node (`.spec.replicas`, `.labels['x']`). */
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps | boolean;
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  [marker: string]: unknown;
}

const x = vocabulary.openapiExtensionPrefix;

/** The marker names, spelled with the product's prefix. */
export const markers = {
  intOrString: `${x}int-or-string`,
  embeddedResource: `${x}embedded-resource`,
  preserveUnknownFields: `${x}preserve-unknown-fields`,
  listType: `${x}list-type`,
  listMapKeys: `${x}list-map-keys`,
  mapType: `${x}map-type`,
  validations: `${x}validations`,
} as const;

/** Typed access to a node's markers. */
export function markersOf(s: JSONSchemaProps) {
  return {
    intOrString: s[markers.intOrString] === true,
    embeddedResource: s[markers.embeddedResource] === true,
    preserveUnknownFields: s[markers.preserveUnknownFields] === true,
    listType: s[markers.listType] as string | undefined,
    listMapKeys: s[markers.listMapKeys] as string[] | undefined,
    mapType: s[markers.mapType] as string | undefined,
    validations: s[markers.validations] as ValidationRule[] | undefined,
  };
}

/** The properties of a node as [name, schema] pairs, own keys only. */
export function propertiesOf(s: JSONSchemaProps): [string, JSONSchemaProps][] {
  return s.properties ? Object.entries(s.properties) : [];
}
