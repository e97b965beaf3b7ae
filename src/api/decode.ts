// From a request body to an object of the stored kind, the one road every
// writer takes (the handlers, the in-process client, a mutating webhook's
// answer): its apiVersion and kind must be the version's, fields the schema
// does not name are dropped, unknown or repeated fields are reported per
// fieldValidation, the version's own rules checked, then the object is
// converted to the stored version and defaulted. An apply configuration
// stops before defaulting: its applier owns only what it sent.

import { errors } from '../machinery/errors.js';
import { apiVersionOf, KindDefinition, KubeObject } from './kind.js';
import { pruneObject } from './prune.js';
import type { VersionCodec } from './codec.js';
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

/** Checks apiVersion/kind of a request body, prunes unknown fields per fieldValidation; no defaults. */
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

/** A body sent at the version `codec` serves (the stored one without), decoded and checked there; no defaults. */
export function decodeSent(stored: KindDefinition, body: unknown, opts: DecodeOptions, codec?: VersionCodec): KubeObject {
  if (!codec) return decodeObject(stored, body, opts);
  const sent = decodeObject(codec.served, body, opts);
  const errs = codec.validate(sent);
  if (errs.length) throw errors.invalid(codec.served.group, codec.served.kind, sent.metadata?.name ?? sent.metadata?.generateName ?? '', errs);
  return sent;
}

/** An object of the version `codec` serves as the stored kind: converted, pruned to the stored schema, defaulted. */
export function asStored(stored: KindDefinition, obj: KubeObject, codec?: VersionCodec): KubeObject {
  const out = codec ? decodeObject(stored, codec.toStoredForWrite(obj), { fieldValidation: 'Ignore', warnings: [] }) : obj;
  stored.strategy.defaults?.(out);
  return out;
}

/** A body to write: decoded at the version it was sent in, converted to the stored one, defaulted. */
export function decodeForWrite(stored: KindDefinition, body: unknown, opts: DecodeOptions, codec?: VersionCodec): KubeObject {
  return asStored(stored, decodeSent(stored, body, opts, codec), codec);
}
