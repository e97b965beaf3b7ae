// Label and field selectors: parsed once per request, matched per object.
// Grammar as upstream: `a=b,c!=d,e in (x,y),f notin (z),g,!h` for labels;
// `a=b,c==d,e!=f` for fields.

import { goQuote } from './goquote.js';
import { errors, FieldError, fieldErrors } from './errors.js';
import { validateLabels } from './objectmeta.js';
import { ownValue } from './ownkeys.js';
import { checkName, fieldPath, isLabelValue, isQualifiedName } from './validation.js';

export type LabelOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export type Labels = Record<string, string> | undefined;

export class LabelSelector {
  /**
   * Each requirement's values as a set: a selector may list thousands of
   * values and is matched against every object of a list, so a lookup must
   * not cost the length of the list.
   */
  private readonly valueSets: ReadonlySet<string>[];

  constructor(readonly requirements: LabelRequirement[]) {
    this.valueSets = requirements.map((r) => new Set(r.values));
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Labels): boolean {
    const l = labels ?? {};
    return this.requirements.every((r, i) => {
      const has = Object.prototype.hasOwnProperty.call(l, r.key);
      switch (r.operator) {
        case '=': case 'in': return has && this.valueSets[i]!.has(l[r.key]);
        case '!=': case 'notin': return !has || !this.valueSets[i]!.has(l[r.key]);
        case 'exists': return has;
        case '!': return !has;
      }
    });
  }

  toString(): string {
    return this.requirements.map((r) => {
      switch (r.operator) {
        case '=': case '!=': return `${r.key}${r.operator}${r.values[0]}`;
        case 'in': case 'notin': return `${r.key} ${r.operator} (${r.values.join(',')})`;
        case 'exists': return r.key;
        case '!': return `!${r.key}`;
      }
    }).join(',');
  }
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0, start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (s[i] === ',' && depth === 0) { out.push(s.slice(start, i)); start = i + 1; }
  }
  out.push(s.slice(start));
  return out.map((t) => t.trim());
}

function checkKey(key: string, whole: string): void {
  const problems = isQualifiedName(key);
  if (problems.length) throw errors.badRequest(`unable to parse requirement: invalid label key "${key}": ${problems.join('; ')} (in selector "${whole}")`);
}

/** A valid label value (at most 63 characters), tested without building messages: a selector may list a hundred thousand. */
const validLabelValue = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function checkValue(value: string, whole: string): void {
  if (validLabelValue.test(value)) return;
  const problems = isLabelValue(value);
  if (problems.length) throw errors.badRequest(`unable to parse requirement: invalid label value: "${value}": at key: ${problems.join('; ')} (in selector "${whole}")`);
}

export function parseLabelSelector(text: string | null | undefined): LabelSelector {
  const whole = (text ?? '').trim();
  if (!whole) return new LabelSelector([]);
  const reqs: LabelRequirement[] = [];
  for (const term of splitTerms(whole)) {
    if (!term) throw errors.badRequest(`unable to parse requirement: found '', expected: identifier (in selector "${whole}")`);
    const setMatch = /^([^\s!=()]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
    let req: LabelRequirement;
    if (setMatch) {
      const values = setMatch[3].split(',').map((v) => v.trim());
      req = { key: setMatch[1], operator: setMatch[2] as 'in' | 'notin', values };
    } else if (term.startsWith('!')) {
      req = { key: term.slice(1).trim(), operator: '!', values: [] };
    } else {
      const eq = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s,]*)$/.exec(term);
      if (eq) req = { key: eq[1], operator: eq[2] === '!=' ? '!=' : '=', values: [eq[3]] };
      else if (/^[^\s!=()]+$/.test(term)) req = { key: term, operator: 'exists', values: [] };
      else throw errors.badRequest(`unable to parse requirement: found '${term}', expected: a valid selector term (in selector "${whole}")`);
    }
    checkKey(req.key, whole);
    for (const v of req.values) checkValue(v, whole);
    reqs.push(req);
  }
  return new LabelSelector(reqs);
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export class FieldSelector {
  /**
   * The requirements by field: each field is read once per object, and the
   * values it must not equal are a set (a selector may list thousands).
   */
  private readonly byField = new Map<string, { equal: Set<string>; notEqual: Set<string> }>();

  constructor(readonly requirements: FieldRequirement[]) {
    for (const r of requirements) {
      let values = this.byField.get(r.field);
      if (!values) this.byField.set(r.field, values = { equal: new Set(), notEqual: new Set() });
      (r.operator === '=' ? values.equal : values.notEqual).add(r.value);
    }
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  /** The value a requirement asks `field` to equal, if any (used to narrow reads). */
  exactValue(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  matches(fieldValue: (field: string) => string): boolean {
    for (const [field, { equal, notEqual }] of this.byField) {
      const value = fieldValue(field);
      // Every `=` must hold: two different values never both do.
      if (equal.size > 1 || (equal.size === 1 && !equal.has(value)) || notEqual.has(value)) return false;
    }
    return true;
  }
}

/** Field selector values may escape `,`, `=` and `\` with a backslash. */
function unescapeFieldValue(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

/**
 * Upstream's answer for a field the kind does not select on: a kind that
 * declares field selectors of its own says `field label not supported`, one
 * that does not gets the default conversion's list of the two it has.
 */
export function unsupportedFieldMessage(field: string, kindHasOwnFields: boolean): string {
  return kindHasOwnFields ? `field label not supported: ${field}` : `${goQuote(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

export function parseFieldSelector(text: string | null | undefined, supported: (field: string) => boolean,
  unsupported: (field: string) => string = (f) => unsupportedFieldMessage(f, true)): FieldSelector {
  const whole = (text ?? '').trim();
  if (!whole) return new FieldSelector([]);
  const reqs: FieldRequirement[] = [];
  for (const term of whole.split(/(?<!\\),/)) {
    // The first operator splits the term, as upstream's splitTerm: found by a scan, not by a pattern
    // that backtracks (a lazy field followed by optional spaces is quadratic in a long run of spaces).
    const text = term.trim();
    const at = text.search(/!=|==|=/);
    const field = at > 0 ? text.slice(0, at).trim() : '';
    if (!field) throw errors.badRequest(`invalid selector: '${whole}'; can't understand '${term}'`);
    const operator = text.startsWith('!=', at) ? '!=' : text.startsWith('==', at) ? '==' : '=';
    if (!supported(field)) throw errors.badRequest(unsupported(field));
    reqs.push({ field, operator: operator === '!=' ? '!=' : '=', value: unescapeFieldValue(text.slice(at + operator.length).trimStart()) });
  }
  return new FieldSelector(reqs);
}

/** A selector as objects carry one (upstream's metav1.LabelSelector). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const selectorOperators: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** Upstream's validation of a LabelSelector field, at `field`. */
export function validateLabelSelector(selector: LabelSelectorObject | null | undefined, field: string): FieldError[] {
  if (!selector) return [];
  const errs = validateLabels(selector.matchLabels, `${field}.matchLabels`);
  (selector.matchExpressions ?? []).forEach((req, i) => {
    const at = fieldPath(`${field}.matchExpressions`, i);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In': case 'NotIn':
        if (values.length === 0) errs.push(fieldErrors.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists': case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldErrors.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldErrors.invalid(`${at}.operator`, req.operator, 'not a valid selector operator'));
    }
    errs.push(...checkName(isQualifiedName, `${at}.key`, req.key ?? ''));
    values.forEach((value, j) => errs.push(...checkName(isLabelValue, fieldPath(`${at}.values`, j), value)));
  });
  return errs;
}

/**
 * The selector a LabelSelector object stands for; an absent or empty one
 * selects everything. Throws (with the validation messages) for one that
 * does not validate.
 */
export function labelSelectorOf(selector: LabelSelectorObject | null | undefined): LabelSelector {
  if (!selector) return new LabelSelector([]);
  const errs = validateLabelSelector(selector, 'selector');
  if (errs.length) throw new Error(errs.map((e) => e.describe()).join(', '));
  const reqs: LabelRequirement[] = [];
  const labels = selector.matchLabels ?? {};
  for (const key of Object.keys(labels).sort()) reqs.push({ key, operator: '=', values: [ownValue(labels, key)!] });
  for (const req of selector.matchExpressions ?? []) {
    reqs.push({ key: req.key, operator: ownValue(selectorOperators, req.operator)!, values: [...(req.values ?? [])] });
  }
  return new LabelSelector(reqs);
}
