// What every kind holding a pod template and a label selector shares (the
// apps kinds, Job): the selector and template checks with upstream's
// messages, the selector's text for columns and the scale view, bad values
// printed as Go prints them, and the column helpers.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { FieldError, fieldErrors, GoLiteral } from '../../../machinery/errors.js';
import { labelSelectorOf, validateLabelSelector, type LabelSelectorObject } from '../../../machinery/selectors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { define, p, t, type Schema } from '../../schema.js';
import { Time } from '../../meta/v1.js';
import type { KubeObject, PrinterColumn } from '../../kind.js';
import { validateTemplate } from '../../core/v1/replicationcontroller.js';
import { mergedBy } from '../../core/v1/containers.js';

type Obj = Record<string, any>;

export const appsGroup = 'apps';
export const apps = (name: string) => `${definitionPrefix}.api.apps.v1.${name}`;

/** A condition of an apps kind (type, status, lastTransitionTime, reason, message), merged by type. */
export function conditionsOf(name: string, what: string): Schema {
  return mergedBy('type', t.ref(define(name, t.object({
    type: p(1, t.string('Type of the condition.')), status: p(2, t.string('True, False or Unknown.')),
    lastTransitionTime: p(3, t.ref(Time, 'When the status last changed.'), 'always'),
    reason: p(4, t.string('Machine-readable reason.')), message: p(5, t.string('Human-readable details.')),
  }, `A condition of a ${what}.`, { required: ['type', 'status'] }))), `Latest observations of the ${what}.`);
}

const goString = (s: string) => JSON.stringify(s);
const goStringMap = (m: Obj | undefined) => (m === undefined ? 'map[string]string(nil)'
  : `map[string]string{${Object.keys(m).sort().map((k) => `${goString(k)}:${goString(String(m[k]))}`).join(', ')}}`);

/** A map of labels as upstream prints it in a message (Go's %#v). */
export const goLabels = (labels: Obj | undefined) => new GoLiteral(goStringMap(labels));

/** A LabelSelector as upstream prints it in a message (Go's %#v of metav1.LabelSelector). */
export function goSelector(selector: LabelSelectorObject | undefined): GoLiteral {
  const exprs = selector?.matchExpressions;
  const requirement = (r: Obj) => `v1.LabelSelectorRequirement{Key:${goString(r.key ?? '')}, Operator:${goString(r.operator ?? '')}, Values:${r.values ? `[]string{${(r.values as string[]).map(goString).join(', ')}}` : '[]string(nil)'}}`;
  const list = exprs ? `[]v1.LabelSelectorRequirement{${exprs.map(requirement).join(', ')}}` : '[]v1.LabelSelectorRequirement(nil)';
  return new GoLiteral(`v1.LabelSelector{MatchLabels:${goStringMap(selector?.matchLabels)}, MatchExpressions:${list}}`);
}

/** An int-or-string as upstream prints it in a message (Go's %#v of intstr.IntOrString). */
export function goIntOrString(v: unknown): GoLiteral {
  return typeof v === 'string' ? new GoLiteral(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${goString(v)}}`)
    : new GoLiteral(`intstr.IntOrString{Type:0, IntVal:${Number(v ?? 0)}, StrVal:""}`);
}

/** The selector as a selector string (the scale view's status.selector); empty for a missing or broken one. */
export function selectorString(selector: LabelSelectorObject | undefined): string {
  try {
    return labelSelectorOf(selector).toString();
  } catch {
    return '';
  }
}

/** The selector as kubectl's columns print it (upstream's FormatLabelSelector). */
export const formatSelector = (selector: LabelSelectorObject | undefined) => selectorString(selector) || '<none>';

export const nonNegative = (value: unknown, field: string): FieldError[] =>
  (typeof value === 'number' && value < 0 ? [fieldErrors.invalid(field, value, 'must be greater than or equal to 0')] : []);

const percent = /^[0-9]+%$/;

/** An int-or-percent that must not be negative (upstream's ValidatePositiveIntOrPercent), optionally at most 100%. */
export function validateIntOrPercent(v: unknown, field: string, atMost100 = false): FieldError[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') {
    if (!percent.test(v)) return [fieldErrors.invalid(field, goIntOrString(v), 'must be an integer or percentage (e.g \'5%\')')];
    if (atMost100 && Number(v.slice(0, -1)) > 100) return [fieldErrors.invalid(field, goIntOrString(v), 'must not be greater than 100%')];
    return [];
  }
  return nonNegative(v, field);
}

/** The number an int-or-percent stands for before scaling (0% and 0 are both zero). */
export const intOrPercentValue = (v: unknown) => (typeof v === 'string' ? Number.parseInt(v, 10) || 0 : Number(v ?? 0));

/**
 * The selector and pod template of a workload, at `spec`: a selector is
 * required and not empty, the template's labels match it, the template is a
 * valid pod template whose restart policy is one of `restartPolicies`.
 * `kindName` names the kind in upstream's messages ("deployment", "statefulset").
 * A DaemonSet's selector is not checked as required: upstream reads a
 * missing one as matching nothing, so only the template-labels error shows.
 */
export function validateSelectorAndTemplate(spec: Obj, kindName: string, restartPolicies = ['Always']): FieldError[] {
  const errs: FieldError[] = [];
  const selector: LabelSelectorObject | undefined = spec.selector;
  const missingMatchesNothing = kindName === 'daemonset';
  if (!selector) {
    if (!missingMatchesNothing) errs.push(fieldErrors.required('spec.selector'));
  } else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) {
      errs.push(fieldErrors.invalid('spec.selector', goSelector(selector), `empty selector is invalid for ${kindName}`));
    }
  }
  const template: Obj | undefined = spec.template;
  if (!template) return [...errs, fieldErrors.required('spec.template')];
  let matches = !(missingMatchesNothing && !selector);
  if (matches) try {
    const parsed = labelSelectorOf(selector);
    matches = parsed.empty || parsed.matches(template.metadata?.labels);
  } catch { /* reported above */ }
  if (!matches) errs.push(fieldErrors.invalid('spec.template.metadata.labels', goLabels(template.metadata?.labels), '`selector` does not match template `labels`'));
  errs.push(...validateTemplate(template, 'spec.template'));
  const policy = template.spec?.restartPolicy;
  if (!restartPolicies.includes(policy)) errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', policy ?? '', restartPolicies));
  return errs;
}

/** A forbidden pod activeDeadlineSeconds in a long-running workload's template. */
export function noActiveDeadline(spec: Obj, kind: string): FieldError[] {
  return spec.template?.spec?.activeDeadlineSeconds !== undefined
    ? [fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${kind} is not Supported`)] : [];
}

/** apps/v1 selectors cannot change once created. */
export function immutableSelector(obj: KubeObject, old: KubeObject): FieldError[] {
  return deepEqual(obj.spec?.selector, old.spec?.selector) ? [] : [fieldErrors.invalid('spec.selector', goSelector(obj.spec?.selector), 'field is immutable')];
}

const containersOf = (template: Obj | undefined): Obj[] => template?.spec?.containers ?? [];

/** The wide columns of a workload: its template's containers and images, and (unless left out) its selector. */
export function templateColumns(templateOf: (o: KubeObject) => Obj | undefined, selectorOf?: (o: KubeObject) => LabelSelectorObject | undefined): PrinterColumn[] {
  const columns: PrinterColumn[] = [
    { name: 'Containers', type: 'string', priority: 1, description: 'Names of each container in the template.', value: (o) => containersOf(templateOf(o)).map((c) => c.name).join(',') },
    { name: 'Images', type: 'string', priority: 1, description: 'Images in the template.', value: (o) => containersOf(templateOf(o)).map((c) => c.image).join(',') },
  ];
  if (selectorOf) columns.push({ name: 'Selector', type: 'string', priority: 1, description: 'Label selector of the pods.', value: (o) => formatSelector(selectorOf(o)) });
  return columns;
}
