// Decoding a request body as an object of a kind: its apiVersion and kind
// must be the kind's, fields the schema does not name are dropped, and
// unknown or repeated fields are reported per fieldValidation.

import { errors } from '../machinery/errors.js';
import { apiVersionOf, KindDefinition, KubeObject } from '../api/kind.js';
import { pruneObject } from '../api/prune.js';
import type { NumberText } from '../machinery/duplicates.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface DecodeOptions {
  fieldValidation: FieldValidation;
  /** Collects Warning header texts for the response. */
  warnings: string[];
  /** Strict-decoding messages for keys the request body repeated (found by the HTTP layer in the raw text). */
  duplicates?: string[];
  /** The literal text of the body's numbers, when it was JSON (found by the HTTP layer). */
  numberText?: NumberText;
}

/** Checks apiVersion/kind of a request body, prunes unknown fields per fieldValidation. */
export function decodeObject(kind: KindDefinition, body: unknown, opts: DecodeOptions): KubeObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${kind.kind}): couldn't get version/kind; json parse error: expected an object`);
  }
  const raw = body as KubeObject;
  const apiVersion = apiVersionOf(kind);
  if (raw.kind !== undefined && raw.kind !== '' && raw.kind !== kind.kind) {
    throw errors.badRequest(`${raw.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: the object provided is unrecognized (must be of type ${kind.kind})`);
  }
  if (raw.apiVersion !== undefined && raw.apiVersion !== '' && raw.apiVersion !== apiVersion) {
    throw errors.badRequest(`the API version in the data (${raw.apiVersion}) does not match the expected API version (${apiVersion})`);
  }
  const { object, report } = pruneObject(raw, kind.schema, kind.kind, kind.version, { numberText: opts.numberText });
  // Repeated keys first: upstream finds them in the text before it decodes the fields.
  const messages = [...(opts.duplicates ?? []), ...report.unknownFields.map((f) => `unknown field "${f}"`)];
  if (messages.length && opts.fieldValidation !== 'Ignore') {
    if (opts.fieldValidation === 'Strict') throw errors.badRequest(`strict decoding error: ${messages.join(', ')}`);
    opts.warnings.push(...messages);
  }
  object.apiVersion = apiVersion;
  object.kind = kind.kind;
  object.metadata ??= {};
  return object;
}
