// Name and value rules shared by every kind, with upstream's messages (clients
// and users recognise them).

import { FieldError, fieldErrors } from './errors.js';

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123Label = new RegExp(`^${dns1123LabelFmt}$`);
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035Label = new RegExp(`^${dns1035LabelFmt}$`);
const dns1123Subdomain = new RegExp(`^${dns1123LabelFmt}(\\.${dns1123LabelFmt})*$`);
const qualifiedNameRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const labelValueRe = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const configMapKeyRe = /^[-._a-zA-Z0-9]+$/;

/** Messages of a name check; empty when the value is fine. */
export type NameCheck = (value: string) => string[];

export const isDns1123Label: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1123Label.test(v)) {
    errs.push(`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${dns1123LabelFmt}')`);
  }
  return errs;
};

export const isDns1123Subdomain: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!dns1123Subdomain.test(v)) {
    errs.push(`a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${dns1123LabelFmt}(\\.${dns1123LabelFmt})*')`);
  }
  return errs;
};

export const isDns1035Label: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035Label.test(v)) {
    errs.push(`a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${dns1035LabelFmt}')`);
  }
  return errs;
};

/** A key like `example.com/name` or `name`. */
/**
 * Qualified names found valid lately: every write checks its labels' and
 * annotations' keys and its resource names, and they repeat (`app`, `cpu`,
 * `plat.io/metadata.name`). Bounded: emptied when full.
 */
const validQualifiedNames = new Set<string>();
const validQualifiedNamesLimit = 4096;

export const isQualifiedName: NameCheck = (v) => {
  if (validQualifiedNames.has(v)) return [];
  const errs = qualifiedNameErrors(v);
  if (errs.length === 0) {
    if (validQualifiedNames.size >= validQualifiedNamesLimit) validQualifiedNames.clear();
    validQualifiedNames.add(v);
  }
  return errs;
};

function qualifiedNameErrors(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (name.length > 0 && !qualifiedNameRe.test(name)) {
    errs.push(`name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`);
  }
  return errs;
}

export const isLabelValue: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!labelValueRe.test(v)) {
    errs.push(`a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
  }
  return errs;
};

export const isConfigMapKey: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!configMapKeyRe.test(v)) {
    errs.push(`a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`);
  }
  if (v === '.') errs.push(`must not be '.'`);
  else if (v === '..') errs.push(`must not be '..'`);
  else if (v.startsWith('..')) errs.push(`must not start with '..'`);
  return errs;
};

/** A name that is safe as one path segment (RBAC objects), as upstream's IsValidPathSegmentName. */
export const isPathSegmentName: NameCheck = (v) => {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const errs: string[] = [];
  for (const illegal of ['/', '%']) if (v.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
};

/** Runs a name check and turns its messages into Invalid field errors. */
export function checkName(check: NameCheck, field: string, value: string): FieldError[] {
  return check(value).map((m) => fieldErrors.invalid(field, value, m));
}

/** Path segments joined as upstream prints them: a.b[2].c, data[key]. */
export function fieldPath(base: string, ...segments: (string | number)[]): string {
  let p = base;
  for (const s of segments) p += typeof s === 'number' ? `[${s}]` : `.${s}`;
  return p;
}

export function keyPath(base: string, key: string): string {
  return `${base}[${key}]`;
}
