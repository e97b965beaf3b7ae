// CustomResourceDefinition (apiextensions v1), as upstream: its schema, its
// defaults (singular and listKind from the kind, conversion None), the
// storage version recorded in status.storedVersions, and upstream's
// validation of a definition (names and group, exactly one storage version,
// a structural schema for every version with its defaults pruned, valid and
// passing their rules, sub-resource paths, printer columns and selectable
// fields in the JSONPath subset, a webhook's client configuration, the
// approval annotation of protected groups: ../approval.ts). Names a
// built-in holds are refused by the serving side (apiserver/customresources.ts),
// which knows the registry. The definition's openAPIV3Schema is kept as sent
// (`x-kubernetes-*` markers included); api/apiextensions/customkind.ts turns
// an established definition into a kind.

import { definitionPrefix, upstreamCompat, vocabulary } from '../../../machinery/vocabulary.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { rfc3339Now } from '../../../machinery/time.js';
import { checkName, isDns1035Label, isDns1123Subdomain } from '../../../machinery/validation.js';
import { define, t } from '../../schema.js';
import { defineKind, statusSubresource, type KubeObject } from '../../kind.js';
import { kindSchema, nameColumn } from '../../core/v1/common.js';
import { validateWebhookUrl } from '../../admissionregistration/v1/webhooks.js';
import { checkSchema, hasUnprunedDefaults, loaderFor } from '../../validation/index.js';
import { withOurMarkers } from '../schema.js';
import { parseJsonPath } from '../jsonpath.js';
import { validateApproval } from '../approval.js';

export const apiextensionsGroup = vocabulary.apiextensionsGroup;
const definition = (name: string) => `${definitionPrefix}.api.apiextensions.v1.${name}`;
type Json = Record<string, any>;

/** The finalizer that removes every custom object before its definition goes. */
export const cleanupFinalizer = `customresourcecleanup.${apiextensionsGroup}`;

const strings = (description: string) => t.array(t.string(), description, { listType: 'atomic' });

const Names = define(definition('CustomResourceDefinitionNames'), t.object({
  plural: t.string('Plural name of the resource, served at /apis/<group>/<version>/.../<plural>; lowercase.'),
  singular: t.string('Singular name; the kind in lowercase when empty.'),
  shortNames: strings('Short names kubectl accepts for the resource.'),
  kind: t.string('The kind of the objects, CamelCase.'),
  listKind: t.string('The kind of lists of objects; <kind>List when empty.'),
  categories: strings('Groups of resources this one belongs to (`all`), for `kubectl get <category>`.'),
}, 'The names the resource and its kind are served under.'));

const Column = define(definition('CustomResourceColumnDefinition'), t.object({
  name: t.string('Header of the column.'), type: t.string('integer, number, string, boolean or date.'), format: t.string('Format of the values.'),
  description: t.string('What the column shows.'), priority: t.int32('0: always shown; more: only with -o wide.'),
  jsonPath: t.string('Simple JSONPath evaluated on each object to produce the value of the column.'),
}, 'A column of the table kubectl prints.', { required: ['name', 'type', 'jsonPath'] }));

const Scale = define(definition('CustomResourceSubresourceScale'), t.object({
  specReplicasPath: t.string('JSON path under .spec of the desired replicas.'),
  statusReplicasPath: t.string('JSON path under .status of the observed replicas.'),
  labelSelectorPath: t.string('JSON path under .spec or .status of the label selector, as a string.'),
}, 'How the scale sub-resource reads and writes the object.'));

const Version = define(definition('CustomResourceDefinitionVersion'), t.object({
  name: t.string('Version name, served at /apis/<group>/<name>/...'),
  served: t.bool('Whether the version is served.'),
  storage: t.bool('Whether objects are stored in this version; exactly one version stores.'),
  deprecated: t.bool('Whether answers at this version warn that it is deprecated.'),
  deprecationWarning: t.string('The warning sent instead of the default one.'),
  schema: t.object({ openAPIV3Schema: t.freeForm('The structural OpenAPI v3 schema of objects at this version.') }, 'Validation, pruning and defaulting of this version.'),
  subresources: t.object({ status: t.freeForm('Serve /status.'), scale: t.ref(Scale, 'Serve /scale.') }, 'Sub-resources served at this version.'),
  additionalPrinterColumns: t.array(t.ref(Column), 'Table columns; Age when empty.', { listType: 'atomic' }),
  selectableFields: t.array(t.object({ jsonPath: t.string('Path of a field usable in field selectors.') }), 'Fields usable in field selectors.', { listType: 'atomic' }),
}, 'One version of the resource.', { required: ['name', 'served', 'storage'] }));

const Conversion = define(definition('CustomResourceConversion'), t.object({
  strategy: t.string('None (only apiVersion changes) or Webhook.'),
  webhook: t.object({
    clientConfig: t.object({
      url: t.string('https URL of the webhook.'),
      service: t.object({ namespace: t.string(), name: t.string(), path: t.string(), port: t.int32() }, 'The service serving the webhook.'),
      caBundle: t.bytes('PEM CA bundle verifying the webhook\'s certificate.'),
    }, 'How to reach the webhook.'),
    conversionReviewVersions: strings('ConversionReview versions the webhook accepts, in order of preference.'),
  }, 'The conversion webhook.'),
}, 'How objects convert between versions.'));

const Condition = define(definition('CustomResourceDefinitionCondition'), t.object({
  // Upstream's Go fields are not omitempty, so its OpenAPI gives both "" (the list-map key of status.conditions).
  type: t.string('Established, NamesAccepted, NonStructuralSchema, Terminating, KubernetesAPIApprovalPolicyConformant.', { default: '' }),
  status: t.string('True, False or Unknown.', { default: '' }),
  lastTransitionTime: t.time('When the status last changed.'), reason: t.string('Machine-readable reason.'), message: t.string('Human-readable detail.'),
}, 'A condition of a definition.'));

const schema = define(definition('CustomResourceDefinition'), kindSchema('Defines a custom resource served by this server.', {
  spec: t.object({
    group: t.string('API group of the resource.'),
    names: t.ref(Names, 'Names of the resource and its kind.'),
    scope: t.string('Cluster or Namespaced.'),
    versions: t.array(t.ref(Version), 'Versions served; exactly one stores.', { listType: 'atomic' }),
    conversion: t.ref(Conversion, 'How objects convert between versions.'),
    preserveUnknownFields: t.bool('Must be false: pruning follows the schema.'),
  }, 'The resource a definition declares.', { required: ['group', 'names', 'scope', 'versions'] }),
  status: t.object({
    conditions: t.array(t.ref(Condition), 'Conditions of the definition.', { listType: 'map', listMapKeys: ['type'] }),
    acceptedNames: t.ref(Names, 'The names actually served (may lag spec.names while they conflict).'),
    storedVersions: strings('Every version objects have ever been stored in.'),
  }, 'What the server made of the definition.'),
}));

/** Upstream's defaults of a definition. */
function defaults(crd: KubeObject): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return;
  const names = spec.names;
  if (names && typeof names === 'object' && typeof names.kind === 'string' && names.kind) {
    names.singular ||= names.kind.toLowerCase();
    names.listKind ||= `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  if (spec.conversion.strategy === 'Webhook' && spec.conversion.webhook?.clientConfig?.service) spec.conversion.webhook.clientConfig.service.port ??= 443;
  for (const v of Array.isArray(spec.versions) ? spec.versions : []) {
    if (v && typeof v === 'object' && Array.isArray(v.additionalPrinterColumns)) for (const c of v.additionalPrinterColumns) if (c && typeof c === 'object') c.priority ??= 0;
  }
}

/** The storage version joins status.storedVersions (upstream's strategy, on create and update). */
function recordStorageVersion(crd: KubeObject): void {
  const storage = (crd.spec?.versions ?? []).find((v: Json) => v?.storage === true)?.name;
  if (typeof storage !== 'string') return;
  crd.status ??= {};
  const stored: string[] = Array.isArray(crd.status.storedVersions) ? crd.status.storedVersions : [];
  if (!stored.includes(storage)) crd.status.storedVersions = [...stored, storage];
}

function dns1035(field: string, value: unknown, prefix = ''): FieldError[] {
  if (typeof value !== 'string' || !value) return [];
  const errs = isDns1035Label(prefix ? value.toLowerCase() : value);
  return errs.length ? [fieldErrors.invalid(field, value, prefix + errs.join(','))] : [];
}

function validateNames(names: Json, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const mixed = 'may have mixed case, but should otherwise match: ';
  errs.push(...dns1035(`${field}.plural`, names.plural), ...dns1035(`${field}.singular`, names.singular));
  errs.push(...dns1035(`${field}.kind`, names.kind, mixed), ...dns1035(`${field}.listKind`, names.listKind, mixed));
  (Array.isArray(names.shortNames) ? names.shortNames : []).forEach((s: unknown, i: number) => errs.push(...dns1035(`${field}.shortNames[${i}]`, s)));
  if (names.kind && names.kind === names.listKind) errs.push(fieldErrors.invalid(`${field}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (Array.isArray(names.categories) ? names.categories : []).forEach((s: unknown, i: number) => errs.push(...dns1035(`${field}.categories[${i}]`, s)));
  return errs;
}

function validateScale(scale: Json, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const path = (name: string, under: string[], required: boolean) => {
    const v = scale[name];
    if (v === undefined || v === '') {
      if (required) errs.push(fieldErrors.required(`${field}.${name}`, ''));
      return;
    }
    if (typeof v !== 'string' || typeof parseJsonPath(v) === 'string' || !under.some((u) => v.startsWith(`${u}.`))) {
      errs.push(fieldErrors.invalid(`${field}.${name}`, v, `should be a json path under ${under.join(' or ')}`));
    }
  };
  path('specReplicasPath', ['.spec'], true);
  path('statusReplicasPath', ['.status'], true);
  path('labelSelectorPath', ['.spec', '.status'], false);
  return errs;
}

const columnTypes = ['integer', 'number', 'string', 'boolean', 'date'];

/** Errors about a schema written with upstream's marker names name the markers as it wrote them. */
function inTheirWords(schemaProps: unknown, errs: FieldError[]): FieldError[] {
  const theirs = upstreamCompat.openapiExtensionPrefix;
  const ours = vocabulary.openapiExtensionPrefix;
  if (!errs.length || !JSON.stringify(schemaProps).includes(`"${theirs}`)) return errs;
  const say = (text: string) => text.split(ours).join(theirs);
  return errs.map((e) => new FieldError(e.type, say(e.field), say(e.detail), e.badValue, e.hasValue));
}

function validateVersion(v: Json, field: string, prunedDefaults: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const schemaProps = v.schema?.openAPIV3Schema;
  if (schemaProps === undefined || schemaProps === null) errs.push(fieldErrors.required(`${field}.schema.openAPIV3Schema`, 'schemas are required'));
  else if (typeof schemaProps !== 'object' || Array.isArray(schemaProps)) errs.push(fieldErrors.invalid(`${field}.schema.openAPIV3Schema`, schemaProps, 'must be an object'));
  else errs.push(...inTheirWords(schemaProps, checkSchema(withOurMarkers(schemaProps), `${field}.schema.openAPIV3Schema`, { prunedDefaults })));
  if (v.subresources?.scale) errs.push(...validateScale(v.subresources.scale, `${field}.subresources.scale`));
  (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : []).forEach((c: Json, i: number) => {
    const at = `${field}.additionalPrinterColumns[${i}]`;
    if (!c.name) errs.push(fieldErrors.required(`${at}.name`, ''));
    if (!c.type) errs.push(fieldErrors.required(`${at}.type`, ''));
    else if (!columnTypes.includes(c.type)) errs.push(fieldErrors.notSupported(`${at}.type`, c.type, columnTypes));
    // Upstream's validateSimpleJSONPath; the path must also parse, or the kind could not be served.
    if (!c.jsonPath) errs.push(fieldErrors.required(`${at}.jsonPath`, ''));
    else if (typeof c.jsonPath !== 'string' || c.jsonPath[0] !== '.') errs.push(fieldErrors.invalid(`${at}.jsonPath`, c.jsonPath, 'must be a simple json path starting with .'));
    else if (typeof parseJsonPath(c.jsonPath) === 'string') errs.push(fieldErrors.invalid(`${at}.jsonPath`, c.jsonPath, `must be a valid JSONPath: ${parseJsonPath(c.jsonPath) as string}`));
  });
  (Array.isArray(v.selectableFields) ? v.selectableFields : []).forEach((f: Json, i: number) => {
    const at = `${field}.selectableFields[${i}].jsonPath`;
    if (!f?.jsonPath) errs.push(fieldErrors.required(at, ''));
    else if (typeof f.jsonPath !== 'string' || typeof parseJsonPath(f.jsonPath) === 'string') errs.push(fieldErrors.invalid(at, f.jsonPath, 'must be a simple json path'));
  });
  return errs;
}

function validateConversion(c: Json | undefined, field: string): FieldError[] {
  if (!c) return [];
  const strategies = ['None', 'Webhook'];
  if (!strategies.includes(c.strategy)) return [fieldErrors.notSupported(`${field}.strategy`, c.strategy, strategies)];
  if (c.strategy === 'None') return c.webhook ? [fieldErrors.forbidden(`${field}.webhook`, 'should not be set when strategy is not set to Webhook')] : [];
  const errs: FieldError[] = [];
  const hook = c.webhook;
  if (!hook) return [fieldErrors.required(`${field}.webhook`, 'required when strategy is set to Webhook')];
  const reviews: unknown[] = Array.isArray(hook.conversionReviewVersions) ? hook.conversionReviewVersions : [];
  if (!reviews.length) errs.push(fieldErrors.required(`${field}.webhook.conversionReviewVersions`, 'must contain at least one version'));
  else if (!reviews.some((r) => r === 'v1' || r === 'v1beta1')) {
    errs.push(fieldErrors.invalid(`${field}.webhook.conversionReviewVersions`, reviews, 'must include at least one of v1, v1beta1'));
  }
  const cc = hook.clientConfig ?? {};
  if (!!cc.url === !!cc.service) errs.push(fieldErrors.required(`${field}.webhook.clientConfig`, 'exactly one of url or service is required'));
  if (typeof cc.url === 'string' && cc.url) errs.push(...validateWebhookUrl(`${field}.webhook.clientConfig.url`, cc.url));
  return errs;
}

function validateSpec(spec: Json, prunedDefaults: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec.group) errs.push(fieldErrors.required('spec.group', ''));
  else {
    const bad = isDns1123Subdomain(spec.group);
    if (bad.length) errs.push(fieldErrors.invalid('spec.group', spec.group, bad.join(',')));
    else if (spec.group.split('.').length < 2) errs.push(fieldErrors.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(fieldErrors.required('spec.scope', ''));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(fieldErrors.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  const versions: Json[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (!versions.length) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    errs.push(...checkName(isDns1035Label, `spec.versions[${i}].name`, String(v.name ?? '')).map((e) => (v.name ? e : fieldErrors.required(`spec.versions[${i}].name`, ''))).slice(0, 1));
  });
  if (!unique) errs.push(fieldErrors.invalid('spec.versions', versions.map((v) => v.name), 'must contain unique version names'));
  if (versions.length && versions.filter((v) => v.storage === true).length !== 1) {
    errs.push(fieldErrors.invalid('spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
  }
  const names: Json = spec.names ?? {};
  for (const n of ['plural', 'singular', 'kind', 'listKind']) if (!names[n]) errs.push(fieldErrors.required(`spec.names.${n}`, ''));
  errs.push(...validateNames(names, 'spec.names'));
  versions.forEach((v, i) => errs.push(...validateVersion(v, `spec.versions[${i}]`, prunedDefaults)));
  errs.push(...validateConversion(spec.conversion, 'spec.conversion'));
  if (spec.preserveUnknownFields === true) {
    errs.push(fieldErrors.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  return errs;
}

function validate(crd: KubeObject, old?: KubeObject): FieldError[] {
  const spec: Json = crd.spec ?? {};
  const errs: FieldError[] = [];
  const want = `${spec.names?.plural}.${spec.group}`;
  if (crd.metadata?.name && crd.metadata.name !== want) errs.push(fieldErrors.invalid('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  errs.push(...validateSpec(spec, old === undefined || requirePrunedDefaults(old.spec ?? {})));
  // Old's annotations (even absent) make this an update: only a change of approval is checked then.
  errs.push(...validateApproval(spec.group, crd.metadata?.annotations, old === undefined ? undefined : (old.metadata?.annotations ?? {})));
  return errs;
}

/**
 * Upstream's requirePrunedDefaults: an update must keep defaults pruned
 * unless the definition it replaces already had one with unknown fields (a
 * definition stored before defaults were checked stays writable).
 */
function requirePrunedDefaults(was: Json): boolean {
  const versions: Json[] = Array.isArray(was.versions) ? was.versions : [];
  return !versions.some((v) => {
    const props = v?.schema?.openAPIV3Schema;
    return typeof props === 'object' && props !== null && !Array.isArray(props) && hasUnprunedDefaults(withOurMarkers(props));
  });
}

function established(crd: KubeObject): boolean {
  return (crd.status?.conditions ?? []).some((c: Json) => c.type === 'Established' && c.status === 'True');
}

function immutable(field: string, now: unknown, before: unknown): FieldError[] {
  return now === before ? [] : [fieldErrors.invalid(field, now, 'field is immutable')];
}

function validateUpdate(crd: KubeObject, old: KubeObject): FieldError[] {
  const errs = validate(crd, old);
  const spec: Json = crd.spec ?? {};
  const was: Json = old.spec ?? {};
  if (established(old)) {
    errs.push(...immutable('spec.scope', spec.scope, was.scope), ...immutable('spec.names.kind', spec.names?.kind, was.names?.kind));
  }
  errs.push(...immutable('spec.group', spec.group, was.group), ...immutable('spec.names.plural', spec.names?.plural, was.names?.plural));
  const versions = new Set((spec.versions ?? []).map((v: Json) => v.name));
  (crd.status?.storedVersions ?? []).forEach((v: string, i: number) => {
    if (!versions.has(v)) errs.push(fieldErrors.invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  });
  return errs;
}

/** Loads what checking the definition's schemas needs: CEL for their rules, RE2 for their patterns. */
function loadForSchemas(crd: KubeObject): Promise<void> | undefined {
  const versions: unknown[] = Array.isArray(crd.spec?.versions) ? crd.spec.versions : [];
  const schemas = versions.map((v) => (v as Json)?.schema?.openAPIV3Schema).filter((s) => typeof s === 'object' && s !== null && !Array.isArray(s));
  return loaderFor(schemas.map((s) => withOurMarkers(s)))?.();
}

export const customResourceDefinitions = defineKind({
  group: apiextensionsGroup, version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', scope: 'Cluster',
  shortNames: ['crd', 'crds'], categories: ['api-extensions'],
  schema,
  tracksGeneration: true,
  strategicMerge: false,
  // A status write is checked for its accepted names only (upstream's status strategy): the schemas are not checked again.
  subresources: { status: { ...statusSubresource, validateUpdate: (crd) => validateNames(crd.status?.acceptedNames ?? {}, 'status.acceptedNames') } },
  strategy: {
    defaults,
    prepareForCreate: (crd) => { delete crd.status; recordStorageVersion(crd); },
    prepareForUpdate: (crd) => recordStorageVersion(crd),
    load: loadForSchemas,
    validate,
    validateUpdate,
    // The first DELETE holds the definition with the cleanup finalizer, as upstream's storage does.
    holdsDeletion: (crd) => !crd.metadata?.deletionTimestamp,
    markDeleting: (crd) => {
      const finalizers: string[] = crd.metadata!.finalizers ?? [];
      if (!finalizers.includes(cleanupFinalizer)) crd.metadata!.finalizers = [...finalizers, cleanupFinalizer];
      const conditions = (crd.status?.conditions ?? []).filter((c: Json) => c.type !== 'Terminating');
      crd.status = { ...crd.status, conditions: [...conditions, { type: 'Terminating', status: 'True', lastTransitionTime: rfc3339Now(), reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }] };
    },
  },
  printerColumns: [nameColumn, { name: 'Created At', type: 'date', description: 'When the definition was created.', value: (o) => o.metadata?.creationTimestamp }],
});
