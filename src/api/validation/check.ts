// The schema checker: what upstream refuses in a custom resource schema, as
// field errors naming the place (`<base>.properties[spec].type`), for a 422
// wherever schemas come from. Structural rules (every field typed, nothing
// but value checks inside allOf/anyOf/oneOf/not, metadata limited at the
// root), the markers where they are not allowed, patterns that are not RE2,
// rules that do not compile and rules whose estimated cost is over
// upstream's limit; then the defaults (defaults.ts: pruned, valid, passing
// their rules).
//
// Not checked as upstream does: the completeness rule (a field named inside
// a combinator must also be declared outside it), and oldSelf in the
// uncorrelatable part of a schema (under atomic lists).

import { FieldError, fieldErrors } from '../../machinery/errors.js';
import { cel, re2 } from './engines.js';
import { JSONSchemaProps, markers, markersOf } from './structural.js';
import { checkDefaults } from './defaults.js';

type Level = 'root' | 'item' | 'field';

/** The schema's rules' cost so far, and upstream's four dearest rules (those over 1% of the limit). */
interface Total { cost: number; mostExpensive: { path: string; cost: number }[] }

function observe(total: Total, path: string, cost: number): void {
  total.cost = Math.min(total.cost + cost, 2 ** 64);
  if (cost < cel().costLimits.perSchema / 100) return;
  total.mostExpensive.push({ path, cost });
  total.mostExpensive.sort((a, b) => b.cost - a.cost);
  total.mostExpensive.length = Math.min(total.mostExpensive.length, 4);
}

const reasons = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

/**
 * Every problem of `schema`, its paths under `base` (e.g.
 * `spec.validation.openAPIV3Schema`). `prunedDefaults` off lets defaults
 * keep unknown fields (see checkDefaults).
 */
export function checkSchema(schema: JSONSchemaProps, base: string, opts: { prunedDefaults?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const total: Total = { cost: 0, mostExpensive: [] };
  checkNode(schema, 'root', base, errs, [schema], total);
  // Only rules cost (CEL is loaded when there are any).
  if (total.cost > 0 && total.cost > cel().costLimits.perSchema) {
    for (const e of total.mostExpensive) errs.push(fieldErrors.forbidden(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errs.push(fieldErrors.forbidden(base, cel().costErrorMessage(`${markers.validations} estimated rule cost total for entire OpenAPIv3 schema`, total.cost, cel().costLimits.perSchema)));
  }
  // As upstream, defaults meet the CEL rules only in an otherwise sound schema.
  errs.push(...checkDefaults(schema, base, { prunedDefaults: opts.prunedDefaults ?? true, rules: errs.length === 0 }));
  return errs;
}

function checkNode(s: JSONSchemaProps, level: Level, path: string, errs: FieldError[], ancestors: JSONSchemaProps[], total: Total): void {
  const m = markersOf(s);
  if (s.type === 'array' && !s.items) errs.push(fieldErrors.required(`${path}.items`, 'must be specified'));
  if (s.items) checkNode(s.items, 'item', `${path}.items`, errs, [...ancestors, s.items], total);
  for (const [name, p] of Object.entries(s.properties ?? {})) {
    checkNode(p, 'field', `${path}.properties[${name}]`, errs, [...ancestors, p], total);
  }
  if (s.additionalProperties !== undefined) {
    if (level === 'root') errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (s.properties && Object.keys(s.properties).length) errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    if (typeof s.additionalProperties === 'object') {
      checkNode(s.additionalProperties, 'field', `${path}.additionalProperties`, errs, [...ancestors, s.additionalProperties], total);
    }
  }
  if (m.intOrString && m.preserveUnknownFields) errs.push(fieldErrors.invalid(`${path}.${markers.preserveUnknownFields}`, true, `must be false if ${markers.intOrString} is true`));
  if (m.intOrString && m.embeddedResource) errs.push(fieldErrors.invalid(`${path}.${markers.embeddedResource}`, true, `must be false if ${markers.intOrString} is true`));

  for (const [i, v] of (s.anyOf ?? []).entries()) if (!isIntOrStringAlternative(s, v)) checkNested(v, `${path}.anyOf[${i}]`, errs);
  for (const [i, v] of (s.allOf ?? []).entries()) checkNested(v, `${path}.allOf[${i}]`, errs);
  for (const [i, v] of (s.oneOf ?? []).entries()) checkNested(v, `${path}.oneOf[${i}]`, errs);
  if (s.not) checkNested(s.not, `${path}.not`, errs);
  checkPattern(s, path, errs);

  if (m.embeddedResource && s.type !== 'object') {
    if (!s.type) errs.push(fieldErrors.required(`${path}.type`, `must be object if ${markers.embeddedResource} is true`));
    else errs.push(fieldErrors.invalid(`${path}.type`, s.type, `must be object if ${markers.embeddedResource} is true`));
  } else if (!s.type && !m.intOrString && !m.preserveUnknownFields) {
    const where = level === 'root' ? 'at the root' : level === 'item' ? 'for specified array items' : 'for specified object fields';
    errs.push(fieldErrors.required(`${path}.type`, `must not be empty ${where}`));
  }
  if (m.embeddedResource && s.additionalProperties !== undefined) {
    errs.push(fieldErrors.forbidden(`${path}.additionalProperties`, `must not be used if ${markers.embeddedResource} is set`));
  }
  if (level === 'root' && s.type && s.type !== 'object') errs.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be object at the root'));
  const checkMetadata = level === 'root' || m.embeddedResource;
  const props = s.properties ?? {};
  if (checkMetadata) {
    for (const [name, want] of [['kind', 'string'], ['apiVersion', 'string'], ['metadata', 'object']] as const) {
      const p = Object.prototype.hasOwnProperty.call(props, name) ? props[name] : undefined;
      if (p && p.type !== want) errs.push(fieldErrors.invalid(`${path}.properties[${name}].type`, p.type ?? '', `must be ${want}`));
    }
  }
  if (level === 'root' && Object.prototype.hasOwnProperty.call(props, 'metadata')) {
    const meta = props.metadata!;
    const names = Object.keys(meta.properties ?? {});
    const onlyNames = names.every((n) => n === 'name' || n === 'generateName');
    const others = Object.keys(meta).filter((k) => !['type', 'properties', 'default', 'description'].includes(k));
    if (!onlyNames || others.length) {
      errs.push(fieldErrors.forbidden(`${path}.properties[metadata]`, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (m.embeddedResource && !m.preserveUnknownFields && Object.keys(props).length === 0) {
    errs.push(fieldErrors.required(`${path}.properties`, `must not be empty if ${markers.embeddedResource} is true without ${markers.preserveUnknownFields}`));
  }
  if (s.uniqueItems === true) errs.push(fieldErrors.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (s.multipleOf !== undefined && !(s.multipleOf > 0)) errs.push(fieldErrors.invalid(`${path}.multipleOf`, s.multipleOf, 'must be greater than zero'));
  checkListMarkers(s, path, errs);
  checkRules(s, path, errs, ancestors, total);
}

function isIntOrStringAlternative(s: JSONSchemaProps, v: JSONSchemaProps): boolean {
  const alts = s.anyOf ?? [];
  return alts.length === 2 && alts.every((a) => Object.keys(a).length === 1) && alts[0]!.type === 'integer' && alts[1]!.type === 'string' && alts.includes(v);
}

/** Inside a combinator only value checks may appear. */
function checkNested(v: JSONSchemaProps, path: string, errs: FieldError[]): void {
  for (const [i, a] of (v.anyOf ?? []).entries()) checkNested(a, `${path}.anyOf[${i}]`, errs);
  for (const [i, a] of (v.allOf ?? []).entries()) checkNested(a, `${path}.allOf[${i}]`, errs);
  for (const [i, a] of (v.oneOf ?? []).entries()) checkNested(a, `${path}.oneOf[${i}]`, errs);
  if (v.not) checkNested(v.not, `${path}.not`, errs);
  if (v.items) checkNested(v.items, `${path}.items`, errs);
  for (const [name, p] of Object.entries(v.properties ?? {})) {
    if (name === 'metadata') errs.push(fieldErrors.forbidden(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
    checkNested(p, `${path}.properties[${name}]`, errs);
  }
  checkPattern(v, path, errs);
  const forbid = (key: string, detail: string) => errs.push(fieldErrors.forbidden(`${path}.${key}`, detail));
  if (v.type) forbid('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural');
  if (v.default !== undefined) forbid('default', 'must be undefined to be structural');
  if (v.title) forbid('title', 'must be empty to be structural');
  if (v.description) forbid('description', 'must be empty to be structural');
  if (v.nullable) forbid('nullable', 'must be false to be structural');
  const m = markersOf(v);
  if (m.preserveUnknownFields) forbid(markers.preserveUnknownFields, 'must be false to be structural');
  if (m.embeddedResource) forbid(markers.embeddedResource, 'must be false to be structural');
  if (m.intOrString) forbid(markers.intOrString, 'must be false to be structural');
  if (m.listMapKeys?.length) forbid(markers.listMapKeys, 'must be empty to be structural');
  if (m.listType !== undefined) forbid(markers.listType, 'must be undefined to be structural');
  if (m.mapType !== undefined) forbid(markers.mapType, 'must be undefined to be structural');
  if (m.validations !== undefined) forbid(markers.validations, 'must be empty to be structural');
}

function checkPattern(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (!s.pattern) return;
  try { re2().compile(s.pattern); } catch (e) {
    errs.push(fieldErrors.invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(e as Error).message}`));
  }
}

function checkListMarkers(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const m = markersOf(s);
  if (m.listType !== undefined) {
    if (!['atomic', 'set', 'map'].includes(m.listType)) errs.push(fieldErrors.notSupported(`${path}.${markers.listType}`, m.listType, ['atomic', 'set', 'map']));
    else if (s.type !== 'array') errs.push(fieldErrors.invalid(`${path}.type`, s.type ?? '', `must be array if ${markers.listType} is specified`));
    else if (m.listType === 'set' && s.items && (s.items.type === 'object' || s.items.type === 'array')) {
      errs.push(fieldErrors.invalid(`${path}.items.type`, s.items.type, `must be a scalar type if ${markers.listType} is set`));
    } else if (m.listType === 'map') {
      if (!m.listMapKeys?.length) errs.push(fieldErrors.required(`${path}.${markers.listMapKeys}`, `must not be empty if ${markers.listType} is map`));
      if (s.items && s.items.type !== 'object') errs.push(fieldErrors.invalid(`${path}.items.type`, s.items.type ?? '', `must be object if parent array's ${markers.listType} is map`));
      for (const [i, k] of (m.listMapKeys ?? []).entries()) {
        const key = s.items?.properties?.[k];
        if (!key) { errs.push(fieldErrors.required(`${path}.items.properties`, `entries for all ${markers.listMapKeys} are required`)); continue; }
        if (key.type === 'object' || key.type === 'array') errs.push(fieldErrors.invalid(`${path}.items.properties[${k}].type`, key.type, 'must be a scalar type if parent array\'s list type is map'));
        if (key.default === undefined && !(s.items?.required ?? []).includes(k)) {
          errs.push(fieldErrors.required(`${path}.items.properties[${k}].default`, `this property is in ${markers.listMapKeys}, so it must have a default or be a required property`));
        }
        void i;
      }
    }
  }
  if (m.listMapKeys?.length && m.listType !== 'map') errs.push(fieldErrors.forbidden(`${path}.${markers.listMapKeys}`, `must not be set if ${markers.listType} is not map`));
  if (m.mapType !== undefined) {
    if (!['atomic', 'granular'].includes(m.mapType)) errs.push(fieldErrors.notSupported(`${path}.${markers.mapType}`, m.mapType, ['atomic', 'granular']));
    else if (s.type !== 'object') errs.push(fieldErrors.invalid(`${path}.type`, s.type ?? '', `must be object if ${markers.mapType} is specified`));
  }
}

function checkRules(s: JSONSchemaProps, path: string, errs: FieldError[], ancestors: JSONSchemaProps[], total: Total): void {
  const rules = markersOf(s).validations;
  if (rules === undefined || rules.length === 0) return;
  const { cardinalityOf, costErrorMessage, costLimits, estimateCost, ruleCost } = cel();
  const cardinality = cardinalityOf(ancestors);
  // The root and embedded resources always show apiVersion, kind and metadata's names to rules.
  const roots = new Set(ancestors.length === 1 || markersOf(s).embeddedResource ? ['self', 'oldSelf'] : []);
  for (const [i, rule] of rules.entries()) {
    const at = `${path}.${markers.validations}[${i}]`;
    if (typeof rule?.rule !== 'string' || rule.rule.trim() === '') { errs.push(fieldErrors.required(`${at}.rule`)); continue; }
    if (rule.reason !== undefined && !reasons.includes(rule.reason)) errs.push(fieldErrors.notSupported(`${at}.reason`, rule.reason, reasons));
    if (rule.message !== undefined && rule.message.trim() === '') errs.push(fieldErrors.required(`${at}.message`, 'message must be non-empty if specified'));
    if (rule.message !== undefined && rule.message.includes('\n')) errs.push(fieldErrors.invalid(`${at}.message`, rule.message, 'message must not contain line breaks'));
    if (rule.messageExpression !== undefined && rule.messageExpression.trim() === '') errs.push(fieldErrors.required(`${at}.messageExpression`, 'messageExpression must be non-empty if specified'));
    if (rule.fieldPath !== undefined && !fieldPathResolves(s, rule.fieldPath)) errs.push(fieldErrors.invalid(`${at}.fieldPath`, rule.fieldPath, 'fieldPath must be a valid path'));
    const compiled = cel().compileRule(rule);
    if (!compiled.program) { errs.push(fieldErrors.invalid(`${at}.rule`, rule, compiled.compileError ?? '')); continue; }
    if (rule.optionalOldSelf && !compiled.usesOldSelf) errs.push(fieldErrors.invalid(`${at}.optionalOldSelf`, true, 'may not be set if oldSelf is not used in rule'));
    if (compiled.message === undefined && rule.messageExpression) { errs.push(fieldErrors.invalid(`${at}.messageExpression`, rule, compiled.compileError ?? '')); continue; }
    const cost = ruleCost(estimateCost(compiled.program.ast, { self: s, oldSelf: s }, roots), cardinality);
    if (cost > costLimits.perRule) errs.push(fieldErrors.forbidden(`${at}.rule`, costErrorMessage('estimated rule cost', cost, costLimits.perRule)));
    observe(total, `${at}.rule`, cost);
    if (compiled.message) {
      // As upstream, a message is charged once, whatever the rule's cardinality.
      const messageCost = estimateCost(compiled.message.ast, { self: s, oldSelf: s }, roots);
      if (messageCost > costLimits.perRule) errs.push(fieldErrors.forbidden(`${at}.messageExpression`, costErrorMessage('estimated messageExpression cost', messageCost, costLimits.perRule)));
      observe(total, `${at}.messageExpression`, messageCost);
    }
  }
}

/** Whether a rule's fieldPath (`.a.b`, `['key']`) names a field of `s` through properties and map values. */
function fieldPathResolves(s: JSONSchemaProps, path: string): boolean {
  const token = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/y;
  let node: JSONSchemaProps | undefined = s;
  let at = 0;
  if (path === '') return false;
  while (at < path.length) {
    token.lastIndex = at;
    const m = token.exec(path);
    if (!m || !node) return false;
    const name = m[1] ?? m[2]!.replace(/\\(.)/g, '$1');
    const props: Record<string, JSONSchemaProps> | undefined = node.properties;
    if (props && Object.keys(props).length) node = Object.prototype.hasOwnProperty.call(props, name) ? props[name] : undefined;
    else node = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
    if (!node) return false;
    at = token.lastIndex;
  }
  return true;
}
