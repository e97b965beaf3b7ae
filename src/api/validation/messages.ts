// Upstream's schema validator (kube-openapi's validate package) writes its
// failures as `<path> in body <complaint>`, and apiextensions turns each into
// a field error of its own kind (Required, Unsupported value, Too long, Too
// many, Invalid value). The wording of both steps lives here, so the
// validator itself only says which check failed.

import { FieldError, fieldErrors, supportedValuesText } from '../../machinery/errors.js';

/** The field of an error at `path`: upstream's root path is nil and prints as `<nil>`. */
export function fieldOf(path: string): string {
  return path === '' ? '<nil>' : path;
}

/** Go's `%v` of a float64 bound (`0`, `1.5`, `1e+21`). */
export function goNumber(n: number): string {
  return String(n);
}

/** The detail of an enum's Unsupported value: strings as they are, other values as JSON (as apiextensions lists them). */
export function supportedValues(allowed: readonly unknown[]): string {
  return allowed.length ? supportedValuesText(allowed.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))) : '';
}

const inBody = (path: string, complaint: string): string => `${path} in body ${complaint}`;

export const schemaErrors = {
  /** `type` does not match: value and message name the JSON type found. */
  type: (path: string, expected: string, found: string) =>
    fieldErrors.typeInvalid(fieldOf(path), found, inBody(path, `must be of type ${expected}: ${JSON.stringify(found)}`)),
  /** A string that does not match its `format`. */
  format: (path: string, format: string, value: string) =>
    fieldErrors.typeInvalid(fieldOf(path), value, inBody(path, `must be of type ${format}: ${JSON.stringify(value)}`)),
  /** A value of another type than a format's (a number, a boolean, an object): the value named is the number's Go format, else empty. */
  formatType: (path: string, format: string, found: string) =>
    fieldErrors.typeInvalid(fieldOf(path), found, inBody(path, `must be of type ${format}: ${JSON.stringify(found)}`)),
  required: (path: string) => fieldErrors.required(fieldOf(path)),
  /** `supported` is the node's `supportedValues` text, made once for all its errors. */
  enum: (path: string, value: unknown, supported: string) => fieldErrors.unsupported(fieldOf(path), value, supported),
  tooLong: (path: string, max: number) =>
    new FieldError('FieldValueTooLong', fieldOf(path), `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`, undefined, false),
  tooShort: (path: string, value: string, min: number) =>
    fieldErrors.invalid(fieldOf(path), value, inBody(path, `should be at least ${min} chars long`)),
  pattern: (path: string, value: string, pattern: string) =>
    fieldErrors.invalid(fieldOf(path), value, inBody(path, `should match '${pattern}'`)),
  multipleOf: (path: string, value: number, factor: number) =>
    fieldErrors.invalid(fieldOf(path), value, inBody(path, `should be a multiple of ${goNumber(factor)}`)),
  maximum: (path: string, value: number, max: number, exclusive: boolean) =>
    fieldErrors.invalid(fieldOf(path), value, inBody(path, `should be less than ${exclusive ? '' : 'or equal to '}${goNumber(max)}`)),
  minimum: (path: string, value: number, min: number, exclusive: boolean) =>
    fieldErrors.invalid(fieldOf(path), value, inBody(path, `should be greater than ${exclusive ? '' : 'or equal to '}${goNumber(min)}`)),
  tooManyItems: (path: string, size: number, max: number) => fieldErrors.tooMany(fieldOf(path), size, max),
  tooFewItems: (path: string, size: number, min: number) =>
    fieldErrors.invalid(fieldOf(path), size, inBody(path, `should have at least ${min} items`)),
  duplicateItems: (path: string) => fieldErrors.invalid(fieldOf(path), '', inBody(path, `shouldn't contain duplicates`)),
  tooManyProperties: (path: string, size: number, max: number) => fieldErrors.tooMany(fieldOf(path), size, max),
  tooFewProperties: (path: string, size: number, min: number) =>
    fieldErrors.invalid(fieldOf(path), size, inBody(path, `should have at least ${min} properties`)),
  // The combinators' complaints are plain errors upstream, not field errors: apiextensions
  // files them under the nil path with an empty value.
  anyOf: (path: string) => fieldErrors.invalid('<nil>', '', `${JSON.stringify(path)} must validate at least one schema (anyOf)`),
  oneOf: (path: string, valid: number) =>
    fieldErrors.invalid('<nil>', '', `${JSON.stringify(path)} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`),
  allOf: (path: string, noneValid: boolean) =>
    fieldErrors.invalid('<nil>', '', `${JSON.stringify(path)} must validate all the schemas (allOf)${noneValid ? '. None validated' : ''}`),
  not: (path: string) => fieldErrors.invalid('<nil>', '', `${JSON.stringify(path)} must not validate the schema (not)`),
};
