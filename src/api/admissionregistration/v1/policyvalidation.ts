// Upstream's validation of ValidatingAdmissionPolicy and its binding, with
// its messages: the match resources (selectors and selector-free defaults
// required, rules as a webhook's, resource names as path segments), the
// expressions compiled over the variables each kind of expression sees
// (params only with a paramKind; messages see no authorizer), variables
// named as CEL identifiers, audit annotation keys that make a qualified name
// with the policy's, validation actions, and the binding's paramRef.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1035Label, isDns1123Subdomain, isPathSegmentName, isQualifiedName } from '../../../machinery/validation.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { cel } from '../../validation/index.js';
import { validateConditions } from '../../meta/conditions.js';
import type { KubeObject } from '../../kind.js';
import { validateMatchConditions, validateRule } from './webhooks.js';
import { checkExpression, fieldsType, type CelType } from './typechecking.js';

type Json = Record<string, any>;

/** The variables an expression of a policy sees, by the kind of expression (upstream's OptionalVariableDeclarations). */
export function policyVariables(options: { params: boolean; authorizer: boolean; variables: boolean }): string[] {
  const names = ['object', 'oldObject', 'request', 'namespaceObject'];
  if (options.params) names.push('params');
  if (options.authorizer) names.push('authorizer');
  if (options.variables) names.push('variables');
  return names;
}

const failurePolicies = ['Fail', 'Ignore'];
const matchPolicies = ['Equivalent', 'Exact'];
const validationActions = ['Audit', 'Deny', 'Warn'];
const reasons = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const maxAuditAnnotations = 20;
const maxAuditAnnotationValueExpressionLength = 5 * 1024;
const celIdentifier = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const celReserved = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import',
  'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const newlines = /[\n\r]/;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const listOf = (v: unknown): Json[] => (Array.isArray(v) ? v.map((x) => (isObject(x) ? x : {})) : []);

/**
 * Why `expression` does not compile over `variables`, if it does not; with
 * `declared`, the policy variables it may read (upstream's composition: a
 * variable sees those before it), a read of another is refused as upstream's
 * checker refuses it.
 */
function compileError(field: string, expression: string, variables: readonly string[], declared?: ReadonlySet<string>): FieldError[] {
  const compiled = cel().compileExpression(expression, variables);
  if (typeof compiled === 'string') return [fieldErrors.invalid(field, expression, compiled)];
  const unknown = declared && checkExpression(expression, dynType, dynType, fieldsType(declared));
  return unknown ? [fieldErrors.invalid(field, expression, `compilation failed: ${unknown}`)] : [];
}

const dynType: CelType = { kind: 'dyn' };

function validateNamedRule(field: string, rule: Json): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (Array.isArray(rule.resourceNames) ? rule.resourceNames : []).forEach((name: unknown, i: number) => {
    const at = fieldPath(`${field}.resourceNames`, i);
    const text = String(name);
    errs.push(...checkName(isPathSegmentName, at, text));
    if (seen.has(text)) errs.push(fieldErrors.duplicate(at, text));
    seen.add(text);
  });
  errs.push(...validateRule(field, rule));
  return errs;
}

/** A policy's matchConstraints or a binding's matchResources (both selectors and matchPolicy are set by the defaults). */
export function validateMatchResources(field: string, mc: Json | undefined): FieldError[] {
  if (!mc) return [];
  const errs: FieldError[] = [];
  if (mc.matchPolicy == null) errs.push(fieldErrors.required(`${field}.matchPolicy`));
  else if (!matchPolicies.includes(mc.matchPolicy)) errs.push(fieldErrors.notSupported(`${field}.matchPolicy`, mc.matchPolicy, matchPolicies));
  if (mc.namespaceSelector == null) errs.push(fieldErrors.required(`${field}.namespaceSelector`));
  else errs.push(...validateLabelSelector(mc.namespaceSelector, `${field}.namespaceSelector`));
  if (mc.objectSelector == null) errs.push(fieldErrors.required(`${field}.objectSelector`));
  else errs.push(...validateLabelSelector(mc.objectSelector, `${field}.objectSelector`));
  listOf(mc.resourceRules).forEach((r, i) => errs.push(...validateNamedRule(fieldPath(`${field}.resourceRules`, i), r)));
  listOf(mc.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRule(fieldPath(`${field}.excludeResourceRules`, i), r)));
  return errs;
}

function validateParamKind(field: string, pk: Json): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = typeof pk.apiVersion === 'string' ? pk.apiVersion : '';
  if (!apiVersion) errs.push(fieldErrors.required(`${field}.apiVersion`));
  else {
    const slashes = apiVersion.split('/').length - 1;
    if (slashes > 1) errs.push(fieldErrors.invalid(`${field}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
    else if (apiVersion !== '/') {
      const [group, version] = slashes === 0 ? ['', apiVersion] : apiVersion.split('/') as [string, string];
      if (group) {
        const problems = isDns1123Subdomain(group);
        if (problems.length) errs.push(fieldErrors.invalid(`${field}.apiVersion`, group, problems.join(',')));
      }
      if (!version) errs.push(fieldErrors.invalid(`${field}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const problems = isDns1035Label(version);
        if (problems.length) errs.push(fieldErrors.invalid(`${field}.apiVersion`, version, problems.join(',')));
      }
    }
  }
  const kind = typeof pk.kind === 'string' ? pk.kind : '';
  if (!kind) errs.push(fieldErrors.required(`${field}.kind`));
  else {
    const problems = isDns1035Label(kind.toLowerCase());
    if (problems.length) errs.push(fieldErrors.invalid(`${field}.kind`, kind, `may have mixed case, but should otherwise match: ${problems.join(',')}`));
  }
  return errs;
}

function validateValidation(field: string, v: Json, params: boolean, declared: ReadonlySet<string>): FieldError[] {
  const variables = declared.size > 0;
  const errs: FieldError[] = [];
  const expression = typeof v.expression === 'string' ? v.expression : '';
  if (!expression.trim()) errs.push(fieldErrors.required(`${field}.expression`, 'expression is not specified'));
  else errs.push(...compileError(`${field}.expression`, expression, policyVariables({ params, authorizer: true, variables }), declared));
  const messageExpression = typeof v.messageExpression === 'string' ? v.messageExpression : '';
  if (messageExpression && !messageExpression.trim()) errs.push(fieldErrors.invalid(`${field}.messageExpression`, messageExpression, 'must be non-empty if specified'));
  else if (messageExpression.trim()) errs.push(...compileError(`${field}.messageExpression`, messageExpression, policyVariables({ params, authorizer: false, variables }), declared));
  const message = typeof v.message === 'string' ? v.message : '';
  if (message && !message.trim()) errs.push(fieldErrors.invalid(`${field}.message`, message, 'message must be non-empty if specified'));
  else if (newlines.test(message.trim())) errs.push(fieldErrors.invalid(`${field}.message`, message, 'message must not contain line breaks'));
  if (v.reason != null && !reasons.includes(v.reason)) errs.push(fieldErrors.notSupported(`${field}.reason`, v.reason, reasons));
  return errs;
}

function validateAuditAnnotation(field: string, policyName: string, a: Json, params: boolean, declared: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = [];
  const key = typeof a.key === 'string' ? a.key : '';
  if (policyName) errs.push(...checkName(isQualifiedName, `${field}.key`, `${policyName}/${key}`));
  else errs.push(fieldErrors.invalid(`${field}.key`, key, 'requires metadata.name be non-empty'));
  const value = typeof a.valueExpression === 'string' ? a.valueExpression.trim() : '';
  if (!value) errs.push(fieldErrors.required(`${field}.valueExpression`, 'valueExpression is not specified'));
  else if (Buffer.byteLength(value) > maxAuditAnnotationValueExpressionLength) {
    errs.push(fieldErrors.required(`${field}.valueExpression`, `must not exceed ${maxAuditAnnotationValueExpressionLength} bytes in length`));
  } else {
    errs.push(...compileError(`${field}.valueExpression`, value, policyVariables({ params, authorizer: true, variables: declared.size > 0 }), declared)
      .map((e) => fieldErrors.invalid(e.field, a.valueExpression, e.detail)));
  }
  return errs;
}

function validateVariable(field: string, v: Json, params: boolean, before: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = [];
  const name = typeof v.name === 'string' ? v.name : '';
  if (!name.trim()) errs.push(fieldErrors.required(`${field}.name`, 'name is not specified'));
  else if (!celIdentifier.test(name) || celReserved.has(name)) errs.push(fieldErrors.invalid(`${field}.name`, name, 'name is not a valid CEL identifier'));
  const expression = typeof v.expression === 'string' ? v.expression : '';
  if (!expression.trim()) errs.push(fieldErrors.required(`${field}.expression`, 'expression is not specified'));
  else errs.push(...compileError(`${field}.expression`, expression, policyVariables({ params, authorizer: true, variables: true }), before));
  return errs;
}

function validatePolicySpec(policy: KubeObject, ignoreMatchConditions: boolean): FieldError[] {
  const spec: Json = isObject(policy.spec) ? policy.spec : {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy == null) errs.push(fieldErrors.required('spec.failurePolicy'));
  else if (!failurePolicies.includes(spec.failurePolicy)) errs.push(fieldErrors.notSupported('spec.failurePolicy', spec.failurePolicy, failurePolicies));
  const params = isObject(spec.paramKind);
  if (params) errs.push(...validateParamKind('spec.paramKind', spec.paramKind));
  if (!isObject(spec.matchConstraints)) errs.push(fieldErrors.required('spec.matchConstraints'));
  else {
    errs.push(...validateMatchResources('spec.matchConstraints', spec.matchConstraints));
    // At least one resource rule, so that expressions can be typed.
    if (!Array.isArray(spec.matchConstraints.resourceRules) || spec.matchConstraints.resourceRules.length === 0) errs.push(fieldErrors.required('spec.matchConstraints.resourceRules'));
  }
  if (!ignoreMatchConditions && spec.matchConditions != null) {
    errs.push(...validateMatchConditions('spec.matchConditions', spec.matchConditions, policyVariables({ params, authorizer: true, variables: false })));
  }
  const variables = listOf(spec.variables);
  const declared = new Set<string>();
  variables.forEach((v, i) => {
    errs.push(...validateVariable(fieldPath('spec.variables', i), v, params, new Set(declared)));
    if (typeof v.name === 'string') declared.add(v.name);
  });
  const validations = listOf(spec.validations);
  const annotations = listOf(spec.auditAnnotations);
  if (validations.length === 0 && annotations.length === 0) {
    errs.push(fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    errs.push(fieldErrors.required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  validations.forEach((v, i) => errs.push(...validateValidation(fieldPath('spec.validations', i), v, params, declared)));
  if (annotations.length > maxAuditAnnotations) {
    errs.push(fieldErrors.invalid('spec.auditAnnotations', spec.auditAnnotations, `must not have more than ${maxAuditAnnotations} auditAnnotations`));
  }
  const keys = new Set<string>();
  const name = String(policy.metadata?.name ?? '');
  annotations.forEach((a, i) => {
    errs.push(...validateAuditAnnotation(fieldPath('spec.auditAnnotations', i), name, a, params, declared));
    if (keys.has(a.key)) errs.push(fieldErrors.duplicate(`${fieldPath('spec.auditAnnotations', i)}.key`, a.key));
    keys.add(a.key);
  });
  return errs;
}

/** Upstream keeps match conditions an update does not change out of validation, so stored policies stay updatable. */
function sameMatchConditions(policy: KubeObject, old: KubeObject): boolean {
  return JSON.stringify(policy.spec?.matchConditions ?? null) === JSON.stringify(old.spec?.matchConditions ?? null);
}

function validateStatus(status: unknown): FieldError[] {
  if (!isObject(status)) return [];
  const errs: FieldError[] = [];
  listOf(status.typeChecking?.expressionWarnings).forEach((w, i) => {
    const at = fieldPath('status.typeChecking.expressionWarnings', i);
    if (!w.warning) errs.push(fieldErrors.required(`${at}.warning`));
    if (typeof w.fieldRef !== 'string' || !w.fieldRef.trim()) errs.push(fieldErrors.required(`${at}.fieldRef`));
  });
  errs.push(...validateConditions(status.conditions, 'status.conditions'));
  return errs;
}

export const policyValidation = {
  validate: (policy: KubeObject) => validatePolicySpec(policy, false),
  validateUpdate: (policy: KubeObject, old: KubeObject) => validatePolicySpec(policy, sameMatchConditions(policy, old)),
  validateStatus: (policy: KubeObject) => validateStatus(policy.status),
};

function validateParamRef(field: string, pr: unknown): FieldError[] {
  if (!isObject(pr)) return [];
  const errs: FieldError[] = [];
  const name = typeof pr.name === 'string' ? pr.name : '';
  const hasSelector = pr.selector != null;
  if (name) {
    errs.push(...checkName(isPathSegmentName, `${field}.name`, name));
    if (hasSelector) errs.push(fieldErrors.forbidden(`${field}.name`, 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    errs.push(...validateLabelSelector(pr.selector, `${field}.selector`));
    if (name) errs.push(fieldErrors.forbidden(`${field}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!name && !hasSelector) errs.push(fieldErrors.required(field, 'one of name or selector must be specified'));
  const action = pr.parameterNotFoundAction;
  if (action == null || action === '') errs.push(fieldErrors.required(`${field}.parameterNotFoundAction`));
  else if (action !== 'Deny' && action !== 'Allow') errs.push(fieldErrors.notSupported(`${field}.parameterNotFoundAction`, action, ['Deny', 'Allow']));
  return errs;
}

function validateActions(field: string, actions: unknown): FieldError[] {
  const list = Array.isArray(actions) ? actions : [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((action, i) => {
    if (!validationActions.includes(action)) errs.push(fieldErrors.notSupported(fieldPath(field, i), action, validationActions));
    if (seen.has(action)) errs.push(fieldErrors.duplicate(fieldPath(field, i), action));
    seen.add(action);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(fieldErrors.invalid(field, list, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  if (seen.size === 0) errs.push(fieldErrors.required(field, 'at least one validation action is required'));
  return errs;
}

function validateBinding(binding: KubeObject): FieldError[] {
  const spec: Json = isObject(binding.spec) ? binding.spec : {};
  const errs: FieldError[] = [];
  const policyName = typeof spec.policyName === 'string' ? spec.policyName : '';
  if (!policyName) errs.push(fieldErrors.required('spec.policyName'));
  else errs.push(...checkName(isDns1123Subdomain, 'spec.policyName', policyName));
  errs.push(...validateParamRef('spec.paramRef', spec.paramRef));
  // Upstream's own spelling of the path.
  errs.push(...validateMatchResources('spec.matchResouces', isObject(spec.matchResources) ? spec.matchResources : undefined));
  errs.push(...validateActions('spec.validationActions', spec.validationActions));
  return errs;
}

export const bindingValidation = { validate: validateBinding, validateUpdate: (binding: KubeObject) => validateBinding(binding) };

/** v1 defaults of a MatchResources (matchPolicy Equivalent, selectors that select all, rules of any scope). */
export function defaultMatchResources(mc: unknown): void {
  if (!isObject(mc)) return;
  mc.matchPolicy ??= 'Equivalent';
  mc.namespaceSelector ??= {};
  mc.objectSelector ??= {};
  for (const rules of [mc.resourceRules, mc.excludeResourceRules]) {
    for (const rule of Array.isArray(rules) ? rules : []) if (isObject(rule)) rule.scope ??= '*';
  }
}

export function defaultPolicy(policy: KubeObject): void {
  if (!isObject(policy.spec)) return;
  policy.spec.failurePolicy ??= 'Fail';
  defaultMatchResources(policy.spec.matchConstraints);
}

export function defaultBinding(binding: KubeObject): void {
  if (!isObject(binding.spec)) return;
  // No default for paramRef.parameterNotFoundAction: v1 requires it (only v1alpha1 defaulted it).
  defaultMatchResources(binding.spec.matchResources);
}
