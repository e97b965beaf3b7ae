// ApiError: every failure a client can cause travels as one of these and reaches
// the client as a Status object. One factory per Status reason, with the
// messages the upstream server uses, since clients match on them.

import { goQuote } from './goquote.js';
import { vocabulary } from './vocabulary.js';

export type StatusReason =
  | 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'AlreadyExists'
  | 'Conflict' | 'Gone' | 'Expired' | 'Invalid' | 'ServerTimeout' | 'Timeout'
  | 'TooManyRequests' | 'MethodNotAllowed' | 'NotAcceptable'
  | 'RequestEntityTooLarge' | 'UnsupportedMediaType' | 'InternalError'
  | 'ServiceUnavailable' | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Identifies what an error is about: the resource plural and group, as upstream. */
export interface Qualified {
  group: string;
  resource: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
    /** The Status's list metadata, e.g. a fresh continue token for an expired one. */
    readonly statusMetadata: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toStatus(): Status {
    const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: { ...this.statusMetadata }, status: 'Failure', message: this.message } as Status;
    if (this.reason) status.reason = this.reason; // omitted when empty, as upstream
    if (this.details) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

function qualifiedName(q: Qualified): string {
  return q.group ? `${q.resource}.${q.group}` : q.resource;
}

function detailsFor(q: Qualified, name: string | undefined): StatusDetails {
  const d: StatusDetails = {};
  if (name !== undefined && name !== '') d.name = name;
  if (q.group) d.group = q.group;
  d.kind = q.resource;
  return d;
}

export const errors = {
  badRequest(message: string, causes?: StatusCause[]): ApiError {
    return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
  },
  unauthorized(message = 'Unauthorized'): ApiError {
    return new ApiError(401, 'Unauthorized', message);
  },
  forbidden(q: Qualified, name: string | undefined, why: string, prefix?: string): ApiError {
    const what = name ? `${qualifiedName(q)} "${name}"` : qualifiedName(q);
    return new ApiError(403, 'Forbidden', `${prefix ?? ''}${what} is forbidden: ${why}`, detailsFor(q, name));
  },
  notFound(q: Qualified, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualifiedName(q)} "${name}" not found`, detailsFor(q, name));
  },
  /** 404 for a path that names no resource the server serves. */
  noSuchResource(): ApiError {
    return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  alreadyExists(q: Qualified, name: string): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualifiedName(q)} "${name}" already exists`, detailsFor(q, name));
  },
  conflict(q: Qualified, name: string, why: string): ApiError {
    return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(q)} "${name}": ${why}`, detailsFor(q, name));
  },
  staleObject(q: Qualified, name: string): ApiError {
    return errors.conflict(q, name, 'the object has been modified; please apply your changes to the latest version and try again');
  },
  /**
   * 422: one cause per offending field. `kind` is the object's Kind, qualified by its group in the message as upstream (`Role.rbac…`).
   * The message lists each distinct error once (upstream's ToAggregate); past `maxListedErrors` the rest are left out, with a note.
   */
  invalid(group: string, kind: string, name: string, causes: FieldError[]): ApiError {
    causes = listedErrors(causes);
    const distinct = [...new Set(causes.map((c) => c.describe()))];
    const list = distinct.join(', ');
    const summary = distinct.length === 1 ? list : `[${list}]`;
    const details: StatusDetails = { name, group: group || undefined, kind, causes: causes.map((c) => c.toCause()) };
    if (!group) delete details.group;
    return new ApiError(422, 'Invalid', `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${summary}`, details);
  },
  /** 422 for request options (ListOptions, DeleteOptions, PatchOptions…), named in the meta group as upstream does. */
  invalidOptions(kind: string, causes: FieldError[]): ApiError {
    return errors.invalid(vocabulary.metaGroup, kind, '', causes);
  },
  gone(message: string): ApiError {
    return new ApiError(410, 'Gone', message);
  },
  expired(message: string): ApiError {
    return new ApiError(410, 'Expired', message);
  },
  /** 410 for a continue token whose snapshot is gone, with a token that goes on from the latest state. */
  expiredContinue(freshToken: string): ApiError {
    return new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      undefined, {}, { continue: freshToken });
  },
  methodNotAllowed(): ApiError {
    return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  },
  /** 405 for a verb a resource refuses for now (upstream's NewMethodNotSupported with its own message). */
  verbNotAllowed(q: Qualified, message: string): ApiError {
    return new ApiError(405, 'MethodNotAllowed', message, detailsFor(q, undefined));
  },
  notAcceptable(accepted: string[]): ApiError {
    return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
  },
  unsupportedMediaType(contentType: string, supported: string[]): ApiError {
    return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`, { kind: contentType });
  },
  requestEntityTooLarge(limit: number): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
  },
  /** A write the store refused for its size: the store's own words, as upstream passes etcd's on. */
  storedObjectTooLarge(message: string): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', message);
  },
  tooLargeResourceVersion(requested: number, current: number, retryAfterSeconds: number): ApiError {
    return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`,
      { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) });
  },
  internal(message: string): ApiError {
    return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  },
  serviceUnavailable(message: string): ApiError {
    return new ApiError(503, 'ServiceUnavailable', message);
  },
  /** The server is busy (upstream's NewTooManyRequests): the client should come back after the given seconds. */
  tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
  /** The request could not finish in time (upstream's NewTimeoutError). */
  timeout(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
};

export type FieldErrorType =
  | 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported'
  | 'FieldValueForbidden' | 'FieldValueDuplicate' | 'FieldValueTooLong' | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid' | 'FieldValueNotFound';

/** One validation failure of one field, shaped like upstream's field.Error. */
export class FieldError {
  constructor(
    readonly type: FieldErrorType,
    readonly field: string,
    readonly detail: string,
    readonly badValue?: unknown,
    readonly hasValue = true,
  ) {}

  private typeText(): string {
    switch (this.type) {
      case 'FieldValueRequired': return 'Required value';
      case 'FieldValueInvalid': return 'Invalid value';
      case 'FieldValueNotSupported': return 'Unsupported value';
      case 'FieldValueForbidden': return 'Forbidden';
      case 'FieldValueDuplicate': return 'Duplicate value';
      case 'FieldValueTooLong': return 'Too long';
      case 'FieldValueTooMany': return 'Too many';
      case 'FieldValueTypeInvalid': return 'Invalid value';
      case 'FieldValueNotFound': return 'Not found';
    }
  }

  /** The message without the field path, as a Status cause carries it. */
  body(): string {
    let text = this.typeText();
    if (this.hasValue && (this.type === 'FieldValueInvalid' || this.type === 'FieldValueNotSupported' || this.type === 'FieldValueDuplicate' || this.type === 'FieldValueTypeInvalid' || this.type === 'FieldValueTooMany' || this.type === 'FieldValueNotFound')) {
      text += `: ${formatBadValue(this.badValue)}`;
    }
    return this.detail ? `${text}: ${this.detail}` : text;
  }

  describe(): string {
    return `${this.field}: ${this.body()}`;
  }

  toCause(): StatusCause {
    return { reason: this.type, message: this.body(), field: this.field };
  }
}

/**
 * A bad value upstream prints with Go's %#v (a []string as
 * `[]string{"10.0.0.5"}`): the text is given as Go would write it.
 */
export class GoLiteral {
  constructor(readonly text: string) {}

  /** A []string, as %#v prints it. */
  static strings(list: readonly string[]): GoLiteral {
    return new GoLiteral(`[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`);
  }

  toJSON(): string {
    return this.text;
  }
}

function formatBadValue(v: unknown): string {
  if (v instanceof GoLiteral) return v.text;
  if (typeof v === 'string') return JSON.stringify(v);
  // Go prints a nil bad value as the string "null", quoted.
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * The most errors a 422 lists (and a schema validator collects before it
 * stops walking). Upstream lists every one, each with its whole text; here a
 * hostile object could otherwise turn a few bytes into megabytes of answer
 * (an item per error, an enum's values in each), so the list is cut as
 * upstream cuts the warnings it sends back.
 */
export const maxListedErrors = 100;

/**
 * The most text (UTF-16 units of the errors' bodies) a 422 lists past its
 * first error: a hundred errors of an enum cut at `maxSupportedValuesText`
 * fit; a hundred that each repeat a long pattern of a schema do not.
 */
export const maxListedErrorsText = 512 * 1024;

/** The note that ends a list cut at `maxListedErrors` or `maxListedErrorsText`. */
const unlistedErrors = (listed: number) => new FieldError('FieldValueInvalid', '<nil>',
  `too many errors, only the first ${listed} ${listed === 1 ? 'is' : 'are'} listed; correct them to see the rest`, undefined, false);

/** The errors a 422 lists: the first one always, then while within `maxListedErrors` and `maxListedErrorsText`, then the note. */
function listedErrors(causes: FieldError[]): FieldError[] {
  let listed = 0;
  for (let size = 0; listed < causes.length && listed < maxListedErrors; listed++) {
    size += causes[listed]!.body().length;
    if (listed > 0 && size > maxListedErrorsText) break;
  }
  return listed < causes.length ? [...causes.slice(0, listed), unlistedErrors(listed)] : causes;
}

/**
 * The most characters of an Unsupported value's list of supported values
 * (upstream's 4 KiB budget for the warnings of one answer): the values that
 * fit, whole, then how many were left out, in upstream's printers' words.
 */
export const maxSupportedValuesText = 4096;

/** Upstream's detail of an Unsupported value (`supported values: "a", "b"`), each value quoted as Go's %q, within `maxSupportedValuesText`. */
export function supportedValuesText(valid: readonly string[]): string {
  let text = 'supported values: ';
  for (let i = 0; i < valid.length; i++) {
    const quoted = (i === 0 ? '' : ', ') + goQuote(valid[i]!);
    if (text.length + quoted.length > maxSupportedValuesText) return `${text.trimEnd()} + ${valid.length - i} more...`;
    text += quoted;
  }
  return text;
}

export const fieldErrors = {
  required: (field: string, detail = '') => new FieldError('FieldValueRequired', field, detail, undefined, false),
  invalid: (field: string, value: unknown, detail: string) => new FieldError('FieldValueInvalid', field, detail, value),
  notSupported: (field: string, value: unknown, valid: readonly string[]) => fieldErrors.unsupported(field, value, valid.length ? supportedValuesText(valid) : ''),
  /** An Unsupported value whose detail (`supportedValuesText`) was made once for every error of its field. */
  unsupported: (field: string, value: unknown, detail: string) => new FieldError('FieldValueNotSupported', field, detail, value),
  forbidden: (field: string, detail: string) => new FieldError('FieldValueForbidden', field, detail, undefined, false),
  duplicate: (field: string, value: unknown) => new FieldError('FieldValueDuplicate', field, '', value),
  notFound: (field: string, value: unknown) => new FieldError('FieldValueNotFound', field, '', value),
  tooLong: (field: string, max: number) => new FieldError('FieldValueTooLong', field, `may not be more than ${max} bytes`, undefined, false),
  typeInvalid: (field: string, value: unknown, detail: string) => new FieldError('FieldValueTypeInvalid', field, detail, value),
  /** More items (or properties) than `max`; upstream prints the count it found. */
  tooMany: (field: string, actual: number, max: number) =>
    new FieldError('FieldValueTooMany', field, `must have at most ${max} ${max === 1 ? 'item' : 'items'}`, actual),
};

/**
 * The same failure as a client that named the group `theirs` (an upstream
 * name for our `ours`) reads it: the resource qualified by its group
 * (`rolebindings.<theirs> "x" is forbidden`), an authorizer's `API group
 * "<theirs>"` and the details' group. Other text, names included, is kept.
 */
export function errorInClientGroup(err: ApiError, ours: string, theirs: string): ApiError {
  if (ours === '' || ours === theirs) return err;
  const escaped = ours.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // `resource.group` as a word of its own (never inside a quoted name), or the authorizer's `API group "group"`.
  const qualified = new RegExp(`(?<=(?:^|\\s)[a-z0-9-]+)\\.${escaped}(?=\\s|:|$)|(?<=API group ")${escaped}(?=")`, 'g');
  const message = err.message.replace(qualified, (m) => (m.startsWith('.') ? `.${theirs}` : theirs));
  const details = err.details?.group === ours ? { ...err.details, group: theirs } : err.details;
  if (message === err.message && details === err.details) return err;
  return new ApiError(err.code, err.reason, message, details, err.headers, err.statusMetadata);
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
