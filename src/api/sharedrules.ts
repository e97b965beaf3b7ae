// Rules shared by the core, networking, discovery, storage, scheduling and
// node kinds: the definition names of a named group and upstream's small
// checks (wildcard hosts, immutable fields, enumerated fields) they repeat.

import { definitionPrefix } from '../machinery/vocabulary.js';
import { FieldError, fieldErrors } from '../machinery/errors.js';
import { deepEqual } from '../machinery/equal.js';
import { checkName, isDns1123Subdomain, type NameCheck } from '../machinery/validation.js';

/** `networking` -> the definition name maker `io.plat.api.networking.v1.<Name>`. */
export const definitionsOf = (group: string) => (name: string): string => `${definitionPrefix}.api.${group}.v1.${name}`;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const wildcardFmt = `\\*\\.${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const wildcard = new RegExp(`^${wildcardFmt}$`);

/** Upstream's IsWildcardDNS1123Subdomain. */
export const isWildcardDns1123Subdomain: NameCheck = (v) => {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!wildcard.test(v)) {
    errs.push(`a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '${wildcardFmt}')`);
  }
  return errs;
};

/** A host that may be a wildcard (`*.example.com`) or a plain DNS subdomain. */
export function validateHost(host: string, field: string): FieldError[] {
  return checkName(host.includes('*') ? isWildcardDns1123Subdomain : isDns1123Subdomain, field, host);
}

/** Upstream's ValidateImmutableField: the new value must equal the old. */
export function immutable(now: unknown, before: unknown, field: string): FieldError[] {
  return deepEqual(now ?? null, before ?? null) ? [] : [fieldErrors.invalid(field, now ?? null, 'field is immutable')];
}

/** Up to three values, then "+ N more...", as upstream's printers list them. */
export function firstThree(values: string[], none = '<none>'): string {
  if (values.length === 0) return none;
  return values.length > 3 ? `${values.slice(0, 3).join(',')} + ${values.length - 3} more...` : values.join(',');
}

/**
 * An enumerated field that may be unset: Unsupported value, listing
 * `supported` in upstream's order (a Go set's values sorted, a literal list
 * as written), when it holds anything else.
 */
export function optionalEnum(value: unknown, field: string, supported: readonly string[]): FieldError[] {
  return value === undefined || value === null || supported.includes(value as string) ? [] : [fieldErrors.notSupported(field, value, supported)];
}

/** An enumerated field that must be set (upstream's `case "": Required`): Required when unset or empty, else as `optionalEnum`. */
export function requiredEnum(value: unknown, field: string, supported: readonly string[]): FieldError[] {
  return value === undefined || value === null || value === '' ? [fieldErrors.required(field)] : optionalEnum(value, field, supported);
}
