// An established CustomResourceDefinition as a kind declaration: the same
// `KindDefinition` built-in kinds are, built from data, so routes,
// discovery, OpenAPI, the codec, managed fields and the store serve it
// unchanged. Each version's schema is compiled once here (pruning through
// the catalog's decoder, defaults, structural checks and CEL rules through
// api/validation); printer columns and selectable fields are JSONPath
// evaluated on the object; `scale` is a view answering autoscaling/v1 Scale.

import { errors } from '../../machinery/errors.js';
import { ageOf } from '../../machinery/time.js';
import { setPath } from '../../machinery/paths.js';
import { defineKind, statusSubresource, type KindDefinition, type KubeObject, type LaterConversion, type PrinterColumn, type SubresourceDeclaration, type VersionDeclaration } from '../kind.js';
import { nameColumn } from '../core/v1/common.js';
import { scales } from '../autoscaling/v1/scale.js';
import { compileSchema, loaderFor, pruneDefaults, type CompiledSchema, type JSONSchemaProps } from '../validation/index.js';
import { customKindSchema, declaresDefaults, withOurMarkers } from './schema.js';
import { findFirst, parseJsonPath, type JsonPath } from './jsonpath.js';

type Json = Record<string, any>;

/** How a version's objects are converted to and from the stored version (None: they are the same shape). */
export interface Conversion {
  toStored(obj: KubeObject): KubeObject;
  fromStored(obj: KubeObject): KubeObject;
  /** Conversions made elsewhere (a webhook), ahead of the synchronous ones. */
  later?: LaterConversion;
}

/** What the serving side says of a definition while its kind is served (a terminating one refuses creates, as upstream). */
export interface ServingState {
  terminating: boolean;
}

const sameShape: Conversion = { toStored: (o) => o, fromStored: (o) => o };

/** `stable.example.com` -> `com.example.stable`, as upstream names custom kinds' OpenAPI definitions. */
function reversed(group: string): string {
  return group.split('.').reverse().join('.');
}

function path(text: string): JsonPath {
  const parsed = parseJsonPath(text);
  if (typeof parsed === 'string') throw new Error(`bad JSONPath ${text}: ${parsed}`);
  return parsed;
}

/** A column's cell as upstream's table convertor makes it: dates as ages, typed values only of their type. */
function column(c: Json): PrinterColumn {
  const at = path(c.jsonPath);
  const type = c.type as PrinterColumn['type'];
  const value = (obj: KubeObject): unknown => {
    const v = findFirst(obj, at);
    if (v === undefined || v === null) return undefined;
    switch (type) {
      case 'date': return typeof v === 'string' ? ageOf(v) : undefined;
      case 'string': return typeof v === 'string' ? v : JSON.stringify(v);
      case 'integer': return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
      case 'number': return typeof v === 'number' ? v : undefined;
      case 'boolean': return typeof v === 'boolean' ? v : undefined;
    }
  };
  return { name: c.name, type: type === 'date' ? 'string' : type, ...(c.format ? { format: c.format } : {}), description: c.description ?? '', priority: c.priority ?? 0, value };
}

/** Upstream's columns when a version declares none. */
const ageOnly: PrinterColumn = { name: 'Age', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', value: (o) => o.metadata?.creationTimestamp };

function columnsOf(v: Json): PrinterColumn[] {
  const declared: Json[] = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [];
  return [nameColumn, ...(declared.length ? declared.map(column) : [ageOnly])];
}

function fieldSelectorsOf(v: Json): Record<string, (obj: KubeObject) => string> {
  const out: Record<string, (obj: KubeObject) => string> = Object.create(null);
  for (const f of Array.isArray(v.selectableFields) ? v.selectableFields : []) {
    const at = path(f.jsonPath);
    out[f.jsonPath.slice(1)] = (obj) => {
      const value = findFirst(obj, at);
      return value === undefined || value === null ? '' : String(value);
    };
  }
  return out;
}

/** The scale view of a custom object, by the three paths of its definition. */
function scaleView(scale: Json): SubresourceDeclaration {
  const spec = path(scale.specReplicasPath);
  const status = path(scale.statusReplicasPath);
  const selector = scale.labelSelectorPath ? path(scale.labelSelectorPath) : undefined;
  const specDotted = String(scale.specReplicasPath).slice(1);
  return {
    kind: scales,
    verbs: ['get', 'update', 'patch'],
    view: (o) => {
      const sel = selector ? findFirst(o, selector) : undefined;
      return {
        apiVersion: 'autoscaling/v1', kind: 'Scale',
        metadata: { name: o.metadata?.name, namespace: o.metadata?.namespace, uid: o.metadata?.uid, resourceVersion: o.metadata?.resourceVersion, creationTimestamp: o.metadata?.creationTimestamp },
        spec: { replicas: Number(findFirst(o, spec) ?? 0) },
        status: { replicas: Number(findFirst(o, status) ?? 0), ...(typeof sel === 'string' ? { selector: sel } : {}) },
      };
    },
    applyView: (o, view) => {
      const next = structuredClone(o);
      setPath(next, specDotted, view.spec?.replicas ?? 0);
      return next;
    },
  };
}

/** One version's compiled schema and its declaration parts. */
function versionParts(crd: KubeObject, v: Json) {
  // Defaults as upstream serves them: pruned (one stored before they were checked may carry unknown fields).
  const props = pruneDefaults(withOurMarkers(v.schema?.openAPIV3Schema ?? { type: 'object' }) as JSONSchemaProps);
  const compiled = compileSchema(props);
  const definitionName = `${reversed(crd.spec.group)}.${v.name}.${crd.status?.acceptedNames?.kind ?? crd.spec.names.kind}`;
  return {
    compiled,
    props,
    declaration: {
      name: v.name, served: v.served === true, deprecated: v.deprecated === true, customResource: true,
      ...(typeof v.deprecationWarning === 'string' ? { deprecationWarning: v.deprecationWarning } : {}),
      schema: customKindSchema(props, definitionName), definitionName, listDefinitionName: `${definitionName}List`,
      printerColumns: columnsOf(v), fieldSelectors: fieldSelectorsOf(v),
    },
  };
}

/** The stored version's schema each kind was built from, as text. */
const storedSchemas = new WeakMap<KindDefinition, string>();

/**
 * Through which revision objects may predate the defaults (see
 * KindDefinition.readDefaultsThrough): the kind served before keeps its
 * revision while the stored version's schema is unchanged; otherwise the
 * definition as this server heard of it.
 */
function readDefaultsThrough(crd: KubeObject, storedSchemaText: string, previous: KindDefinition | undefined): number {
  if (previous?.readDefaultsThrough !== undefined && storedSchemas.get(previous) === storedSchemaText) return previous.readDefaultsThrough;
  return Number(crd.metadata?.resourceVersion ?? 0) || 0;
}

/**
 * The kind an established definition declares. `conversionOf` gives each
 * non-stored version its conversions (None: same shape; Webhook: see
 * apiserver/customresources.ts).
 */
export function customKindOf(crd: KubeObject, conversionOf: (version: string) => Conversion = () => sameShape, state: ServingState = { terminating: false },
  previous?: KindDefinition): KindDefinition {
  const spec: Json = crd.spec;
  const names: Json = crd.status?.acceptedNames?.kind ? crd.status.acceptedNames : spec.names;
  const versions: Json[] = spec.versions;
  const storage = versions.find((v) => v.storage === true)!;
  const stored = versionParts(crd, storage);
  const subs: Json = storage.subresources ?? {};
  const subresources: Record<string, SubresourceDeclaration> = {};
  if (subs.status) subresources.status = statusSubresource;
  if (subs.scale) subresources.scale = scaleView(subs.scale);
  const otherProps: JSONSchemaProps[] = [];
  const others = versions.filter((v) => v !== storage).map((v): VersionDeclaration => {
    const { compiled, declaration, props } = versionParts(crd, v);
    otherProps.push(props);
    const conversion = conversionOf(v.name);
    return {
      ...declaration, toStored: conversion.toStored, fromStored: conversion.fromStored,
      // As upstream, an object sent at this version is defaulted by this version's schema when decoded, so its rules see the defaults.
      validate: (obj) => { compiled.applyDefaults(obj); return compiled.validate(obj); },
      ...(conversion.later ? { convertsLater: conversion.later } : {}),
    };
  });
  const rules: CompiledSchema = stored.compiled;
  const storedSchemaText = JSON.stringify(stored.props);
  const { served, deprecated, deprecationWarning, customResource, schema, definitionName, listDefinitionName, printerColumns, fieldSelectors } = stored.declaration;
  const kind = defineKind({
    group: spec.group, version: storage.name, kind: names.kind, listKind: names.listKind ?? `${names.kind}List`, plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(), shortNames: names.shortNames ?? [], categories: names.categories ?? [],
    scope: spec.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
    schema, definitionName, listDefinitionName, printerColumns, fieldSelectors,
    storedVersion: { served, deprecated, customResource, ...(deprecationWarning ? { deprecationWarning } : {}) },
    otherVersions: others,
    subresources,
    strategicMerge: false,
    tracksGeneration: true,
    // As upstream, objects read are defaulted by the schema served now: objects written before this definition
    // (this server heard of it at the definition's resourceVersion) are defaulted again when read.
    ...(declaresDefaults(stored.props) ? { readDefaultsThrough: readDefaultsThrough(crd, storedSchemaText, previous) } : {}),
    strategy: {
      // The schemas' rules and patterns compile when they first run; a write loads CEL and RE2 first, if they use them.
      load: loaderFor([stored.props, ...otherProps]),
      prepareForCreate: () => {
        if (state.terminating) throw errors.verbNotAllowed({ group: spec.group, resource: names.plural }, 'create not allowed while custom resource definition is terminating');
      },
      defaults: (obj) => rules.applyDefaults(obj),
      validate: (obj) => rules.validate(obj),
      validateUpdate: (obj, old) => rules.validateUpdate(obj, old),
    },
  });
  storedSchemas.set(kind, storedSchemaText);
  return kind;
}
