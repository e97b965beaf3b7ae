// What MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// share: the schemas of a webhook's parts, its defaults and upstream's
// validation of it (fully qualified unique names, an https URL without user
// information, fragment or query, or a service reference, rules with their
// wildcard forms, side effects and review versions required, timeout 1 to 30).

import { vocabulary, definitionPrefix } from '../../../machinery/vocabulary.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1035Label, isDns1123Subdomain, isQualifiedName } from '../../../machinery/validation.js';
import { cel, loadCel, matchConditionVariables } from '../../validation/index.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { define, p, t, type Schema } from '../../schema.js';
import { LabelSelector } from '../../meta/v1.js';
import { ageColumn, nameColumn } from '../../core/v1/common.js';
import type { KubeObject, PrinterColumn } from '../../kind.js';

export const group = vocabulary.admissionRegistrationGroup;
export const definition = (name: string) => `${definitionPrefix}.api.admissionregistration.v1.${name}`;

/** AdmissionReview versions this server sends, in its order of preference. */
export const admissionReviewVersions = ['v1', 'v1beta1'] as const;

const ServiceReference = define(definition('ServiceReference'), t.object({
  namespace: p(1, t.string('Namespace of the service.')),
  name: p(2, t.string('Name of the service.')),
  path: p(3, t.string('URL path calls are sent to; / when empty.')),
  port: p(4, t.int32('Port of the service, 1 to 65535; default 443.')),
}, 'A reference to a service that serves the webhook; its certificate must be valid for <name>.<namespace>.svc.', { required: ['namespace', 'name'] }));

const WebhookClientConfig = define(definition('WebhookClientConfig'), t.object({
  url: p(3, t.string('https URL of the webhook, without user information, fragment or query. Exactly one of url and service.')),
  service: p(1, t.ref(ServiceReference, 'The service that serves the webhook. Exactly one of url and service.')),
  caBundle: p(2, t.bytes('PEM bundle of CAs that verify the webhook\'s serving certificate; the system\'s roots when empty.')),
}, 'How to reach a webhook over TLS.'));

// The rule is embedded in RuleWithOperations: its fields sit beside `operations` in JSON.
const RuleWithOperations = define(definition('RuleWithOperations'), t.object({
  operations: t.array(t.string(), 'CREATE, UPDATE, DELETE, CONNECT, or * for all (alone).', { listType: 'atomic' }),
  apiGroups: t.array(t.string(), 'API groups; "" is the core group, * all (alone).', { listType: 'atomic' }),
  apiVersions: t.array(t.string(), 'API versions; * for all (alone).', { listType: 'atomic' }),
  resources: t.array(t.string(), 'Resources: `pods`, `pods/status`, `pods/*`, `*/status`, `*` (all resources, no sub-resources) or `*/*` (everything).', { listType: 'atomic' }),
  scope: t.string('Cluster, Namespaced or * (default).'),
}, 'The operations and resources a webhook cares about; a request matches when every part matches.'));

export const MatchCondition = define(definition('MatchCondition'), t.object({
  name: p(1, t.string('Identifies the condition (a qualified name), unique among the webhook\'s conditions.')),
  expression: p(2, t.string('CEL expression over object, oldObject and request; must evaluate to bool.')),
}, 'A condition a request must meet for the webhook to be called.', { required: ['name', 'expression'] }));

/** Protobuf field numbers that differ between the two webhook messages, as upstream's generated.proto. */
export interface WebhookFieldNumbers { objectSelector: number; matchConditions: number }

/** The fields every webhook has; `extra` adds the kind's own (reinvocationPolicy for mutating ones). */
export function webhookSchema(name: string, description: string, extra: Record<string, Schema>, numbers: WebhookFieldNumbers): Schema {
  return define(definition(name), t.object({
    name: p(1, t.string('Fully qualified name of the webhook (at least three DNS segments), unique in its configuration.')),
    clientConfig: p(2, t.ref(WebhookClientConfig, 'How to call the webhook.')),
    rules: p(3, t.array(t.ref(RuleWithOperations), 'The operations and resources the webhook is called for; any one rule matching suffices.', { listType: 'atomic' })),
    failurePolicy: p(4, t.string('Fail (default) or Ignore: what a call that fails (timeout, connection, bad answer) does to the request.')),
    matchPolicy: p(9, t.string('Exact, or Equivalent (default): also call for the same resource reached through another group or version.')),
    namespaceSelector: p(5, t.ref(LabelSelector, 'Calls only for objects in namespaces with matching labels (a Namespace object: its own labels); empty selects all.')),
    objectSelector: p(numbers.objectSelector, t.ref(LabelSelector, 'Calls only when the object or the old object has matching labels; empty selects all.')),
    sideEffects: p(6, t.string('None or NoneOnDryRun: whether calls change anything beside the request (required).')),
    timeoutSeconds: p(7, t.int32('Seconds a call may take, 1 to 30; default 10.')),
    admissionReviewVersions: p(8, t.array(t.string(), 'AdmissionReview versions the webhook accepts, preferred first; the first one this server supports (v1, v1beta1) is sent (required).', { listType: 'atomic' })),
    matchConditions: p(numbers.matchConditions, t.array(t.ref(MatchCondition), 'At most 64 CEL conditions, all of which must hold for the webhook to be called (any false skips it; an error follows failurePolicy).',
      { patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'] })),
    ...extra,
  }, description, { required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'] }));
}

/** The `webhooks` list of a configuration, merged by name. */
export function webhooksField(webhook: Schema, description: string): Schema {
  return p(2, t.array(t.ref(webhook), description, { patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'] }));
}

type Json = Record<string, any>;

function hooksOf(config: KubeObject): Json[] {
  return Array.isArray(config.webhooks) ? config.webhooks.filter((h: unknown) => typeof h === 'object' && h !== null) : [];
}

/** v1 defaults; a service port of 443 (its path stays empty and means /, as upstream). */
export function defaultWebhooks(config: KubeObject, mutating: boolean): void {
  for (const hook of hooksOf(config)) {
    hook.failurePolicy ??= 'Fail';
    hook.matchPolicy ??= 'Equivalent';
    hook.namespaceSelector ??= {};
    hook.objectSelector ??= {};
    hook.timeoutSeconds ??= 10;
    if (mutating) hook.reinvocationPolicy ??= 'Never';
    for (const rule of Array.isArray(hook.rules) ? hook.rules : []) if (rule && typeof rule === 'object') rule.scope ??= '*';
    const service = hook.clientConfig?.service;
    if (service && typeof service === 'object') service.port ??= 443;
  }
}

const failurePolicies = ['Fail', 'Ignore'];
const matchPolicies = ['Equivalent', 'Exact'];
const noSideEffects = ['None', 'NoneOnDryRun'];
const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const reinvocationPolicies = ['IfNeeded', 'Never'];
const urlForm = '; desired format: https://host[/path]';

function isFullyQualifiedName(field: string, name: string | undefined): FieldError[] {
  if (!name) return [fieldErrors.required(field)];
  const problems = isDns1123Subdomain(name);
  if (problems.length) return [fieldErrors.invalid(field, name, problems.join(','))];
  if (name.split('.').length < 3) return [fieldErrors.invalid(field, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** An https URL with a host and without user information, fragment or query, as upstream checks it. */
export function validateWebhookUrl(field: string, text: string): FieldError[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // What Go's parser reads from text WHATWG refuses: a scheme, if any, and no host.
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase() ?? '';
    const errs: FieldError[] = [];
    if (scheme !== 'https') errs.push(fieldErrors.invalid(field, scheme, `'https' is the only allowed URL scheme${urlForm}`));
    errs.push(fieldErrors.invalid(field, '', `host must be provided${urlForm}`));
    return errs;
  }
  const errs: FieldError[] = [];
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'https') errs.push(fieldErrors.invalid(field, scheme, `'https' is the only allowed URL scheme${urlForm}`));
  if (!url.host) errs.push(fieldErrors.invalid(field, url.host, `host must be provided${urlForm}`));
  if (url.username || url.password) {
    errs.push(fieldErrors.invalid(field, url.password ? `${url.username}:${url.password}` : url.username, 'user information is not permitted in the URL'));
  }
  if (url.hash.length > 1) errs.push(fieldErrors.invalid(field, url.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.search.length > 1) errs.push(fieldErrors.invalid(field, url.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

function validateService(field: string, service: Json): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldErrors.required(`${field}.name`, 'service name is required'));
  if (!service.namespace) errs.push(fieldErrors.required(`${field}.namespace`, 'service namespace is required'));
  const port = service.port ?? 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(fieldErrors.invalid(`${field}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const path: string | undefined = service.path ?? undefined;
  if (path === undefined || path === '' || path === '/') return errs;
  if (path === '//') return [...errs, fieldErrors.invalid(`${field}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(fieldErrors.invalid(`${field}.path`, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') errs.push(fieldErrors.invalid(`${field}.path`, path, `segment[${i}] may not be empty`));
    else for (const problem of isDns1123Subdomain(step)) errs.push(fieldErrors.invalid(`${field}.path`, path, `segment[${i}]: ${problem}`));
  });
  return errs;
}

function validateResources(field: string, resources: string[]): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(fieldErrors.required(field));
  const wildcardSubresourcesOf = new Set<string>(); // x/*
  const wildcardResourcesFor = new Set<string>(); // */x
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErrors.required(fieldPath(field, i)));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      plainResource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (wildcardSubresourcesOf.has(res)) errs.push(fieldErrors.invalid(fieldPath(field, i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (wildcardResourcesFor.has(sub)) errs.push(fieldErrors.invalid(fieldPath(field, i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') wildcardSubresourcesOf.add(res);
    if (res === '*') wildcardResourcesFor.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(fieldErrors.invalid(field, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plainResource) errs.push(fieldErrors.invalid(field, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

export function validateRule(field: string, rule: Json): FieldError[] {
  const errs: FieldError[] = [];
  const ops: string[] = rule.operations ?? [];
  if (ops.length === 0) errs.push(fieldErrors.required(`${field}.operations`));
  if (ops.length > 1 && ops.includes('*')) errs.push(fieldErrors.invalid(`${field}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => { if (!operations.includes(op)) errs.push(fieldErrors.notSupported(fieldPath(`${field}.operations`, i), op, operations)); });
  const groups: string[] = rule.apiGroups ?? [];
  if (groups.length === 0) errs.push(fieldErrors.required(`${field}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) errs.push(fieldErrors.invalid(`${field}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions: string[] = rule.apiVersions ?? [];
  if (versions.length === 0) errs.push(fieldErrors.required(`${field}.apiVersions`));
  if (versions.length > 1 && versions.includes('*')) errs.push(fieldErrors.invalid(`${field}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => { if (v === '') errs.push(fieldErrors.required(fieldPath(`${field}.apiVersions`, i))); });
  errs.push(...validateResources(`${field}.resources`, rule.resources ?? []));
  if (rule.scope != null && !scopes.includes(rule.scope)) errs.push(fieldErrors.notSupported(`${field}.scope`, rule.scope, scopes));
  return errs;
}

function validateReviewVersions(field: string, versions: string[], requireRecognized: boolean): FieldError[] {
  const accepted: readonly string[] = admissionReviewVersions;
  if (versions.length === 0) return [fieldErrors.required(field, `must specify one of ${accepted.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(fieldPath(field, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    errs.push(...checkName(isDns1035Label, fieldPath(field, i), v));
  });
  if (requireRecognized && !versions.some((v) => accepted.includes(v))) {
    errs.push(fieldErrors.invalid(field, versions, `must include at least one of ${accepted.join(', ')}`));
  }
  return errs;
}

/** What an update may keep of the old object that a create may not have (as upstream, so stored objects stay updatable). */
interface Leniency {
  requireNoSideEffects: boolean;
  requireRecognizedVersions: boolean;
  requireUniqueNames: boolean;
}

const strict: Leniency = { requireNoSideEffects: true, requireRecognizedVersions: true, requireUniqueNames: true };

function validateWebhook(field: string, hook: Json, mutating: boolean, lenient: Leniency): FieldError[] {
  const errs = isFullyQualifiedName(`${field}.name`, hook.name);
  (hook.rules ?? []).forEach((rule: Json | null, i: number) => errs.push(...validateRule(fieldPath(`${field}.rules`, i), rule ?? {})));
  if (hook.failurePolicy != null && !failurePolicies.includes(hook.failurePolicy)) errs.push(fieldErrors.notSupported(`${field}.failurePolicy`, hook.failurePolicy, failurePolicies));
  if (hook.matchPolicy != null && !matchPolicies.includes(hook.matchPolicy)) errs.push(fieldErrors.notSupported(`${field}.matchPolicy`, hook.matchPolicy, matchPolicies));
  const sideEffects = lenient.requireNoSideEffects ? noSideEffects : ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
  if (hook.sideEffects == null) errs.push(fieldErrors.required(`${field}.sideEffects`, `must specify one of ${sideEffects.join(', ')}`));
  else if (!sideEffects.includes(hook.sideEffects)) errs.push(fieldErrors.notSupported(`${field}.sideEffects`, hook.sideEffects, sideEffects));
  if (hook.timeoutSeconds != null && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    errs.push(fieldErrors.invalid(`${field}.timeoutSeconds`, hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  errs.push(...validateLabelSelector(hook.namespaceSelector, `${field}.namespaceSelector`));
  errs.push(...validateLabelSelector(hook.objectSelector, `${field}.objectSelector`));
  if (mutating && hook.reinvocationPolicy != null && !reinvocationPolicies.includes(hook.reinvocationPolicy)) {
    errs.push(fieldErrors.notSupported(`${field}.reinvocationPolicy`, hook.reinvocationPolicy, reinvocationPolicies));
  }
  const cc: Json = hook.clientConfig ?? {};
  const hasUrl = cc.url != null;
  const hasService = cc.service != null;
  if (hasUrl === hasService) errs.push(fieldErrors.required(`${field}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasUrl) errs.push(...validateWebhookUrl(`${field}.clientConfig.url`, cc.url));
  else errs.push(...validateService(`${field}.clientConfig.service`, cc.service));
  errs.push(...validateReviewVersions(`${field}.admissionReviewVersions`, hook.admissionReviewVersions ?? [], lenient.requireRecognizedVersions));
  if (hook.matchConditions != null) errs.push(...validateMatchConditions(`${field}.matchConditions`, hook.matchConditions));
  return errs;
}

const maxMatchConditions = 64;

/** At most 64, each named (a qualified name, unique) with an expression that compiles (over `variables`: a policy's may read params). */
export function validateMatchConditions(field: string, conditions: unknown, variables: readonly string[] = matchConditionVariables): FieldError[] {
  const list = Array.isArray(conditions) ? conditions : [];
  const errs: FieldError[] = [];
  if (list.length > maxMatchConditions) errs.push(fieldErrors.tooMany(field, list.length, maxMatchConditions));
  const names = new Set<string>();
  list.forEach((raw: Json | null, i: number) => {
    const c: Json = raw ?? {};
    const at = fieldPath(field, i);
    const expression = typeof c.expression === 'string' ? c.expression.trim() : '';
    if (!expression) errs.push(fieldErrors.required(`${at}.expression`));
    else {
      const compiled = cel().compileExpression(expression, variables);
      if (typeof compiled === 'string') errs.push(fieldErrors.invalid(`${at}.expression`, expression, compiled));
    }
    const name = typeof c.name === 'string' ? c.name : '';
    if (!name) errs.push(fieldErrors.required(`${at}.name`));
    else errs.push(...checkName(isQualifiedName, `${at}.name`, name));
    if (name) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(`${at}.name`, name));
      names.add(name);
    }
  });
  return errs;
}

function validateConfiguration(config: KubeObject, mutating: boolean, lenient: Leniency): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  hooksOf(config).forEach((hook, i) => {
    errs.push(...validateWebhook(fieldPath('webhooks', i), hook, mutating, lenient));
    if (lenient.requireUniqueNames && hook.name) {
      if (names.has(hook.name)) errs.push(fieldErrors.duplicate(`${fieldPath('webhooks', i)}.name`, hook.name));
      names.add(hook.name);
    }
  });
  return errs;
}

/** The strategy's validate and validateUpdate for a configuration kind. */
export function configurationValidation(mutating: boolean) {
  return {
    // Match conditions compile as CEL; a configuration without them loads nothing.
    load: (config: KubeObject) => (hooksOf(config).some((h) => Array.isArray(h.matchConditions) && h.matchConditions.length > 0) ? loadCel() : undefined),
    validate: (config: KubeObject) => validateConfiguration(config, mutating, strict),
    validateUpdate: (config: KubeObject, old: KubeObject) => {
      const oldHooks = hooksOf(old);
      const oldNames = oldHooks.map((h) => h.name);
      return validateConfiguration(config, mutating, {
        requireNoSideEffects: oldHooks.every((h) => noSideEffects.includes(h.sideEffects)),
        requireRecognizedVersions: oldHooks.every((h) => {
          const versions: string[] = h.admissionReviewVersions ?? [];
          return versions.length === 0 || versions.some((v) => (admissionReviewVersions as readonly string[]).includes(v));
        }),
        requireUniqueNames: new Set(oldNames).size === oldNames.length,
      });
    },
  };
}

export const configurationColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'Webhooks', type: 'integer', description: 'Number of webhooks in the configuration.', value: (c) => hooksOf(c).length },
  ageColumn,
];
