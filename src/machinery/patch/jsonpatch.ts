// RFC 6902 JSON patch with the behaviour of the library upstream's patch handler
// uses (evanphx/json-patch v4), since clients rely on its quirks: `replace` of
// a missing object key adds it, negative array indices count from the end, and
// every failure while applying is a 422 whose cause carries the library's text.
// Work is bounded as upstream bounds it: `copy` operations may add at most the
// request body limit in bytes, and the result may not nest beyond the limit.

import { ApiError } from '../errors.js';
import { maxRequestBodyBytes, tooDeep, valueExceedsDepth } from '../limits.js';
import { hasOwn, ownValue, setOwn } from '../ownkeys.js';
import { badPatch, patchRejected } from './errors.js';
import { clone, encodedSize, isObject, type JsonObject } from './json.js';
import { deepEqual } from '../equal.js';

export interface JsonPatchOperation {
  op: string;
  path?: unknown;
  from?: unknown;
  /** `undefined` when the operation carries no value. */
  value?: unknown;
  hasValue: boolean;
}

/** Upstream refuses patches with more operations than this (413). */
export const maxJsonPatchOperations = 10000;

/** Validates the decoded body of an `application/json-patch+json` request (400 when it is not a list of objects). */
export function decodeJsonPatch(body: unknown): JsonPatchOperation[] {
  if (valueExceedsDepth(body)) throw tooDeep();
  if (!Array.isArray(body)) {
    throw badPatch(`json: cannot unmarshal ${jsonKind(body)} into Go value of type jsonpatch.Patch`);
  }
  const ops = body.map((raw): JsonPatchOperation => {
    if (!isObject(raw)) throw badPatch(`json: cannot unmarshal ${jsonKind(raw)} into Go value of type jsonpatch.Operation`);
    const op = ownValue(raw, 'op');
    return {
      op: typeof op === 'string' ? op : 'unknown',
      path: ownValue(raw, 'path'),
      from: ownValue(raw, 'from'),
      value: ownValue(raw, 'value'),
      hasValue: hasOwn(raw, 'value'),
    };
  });
  if (ops.length > maxJsonPatchOperations) {
    throw new ApiError(413, 'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${ops.length}`);
  }
  return ops;
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

export interface JsonPatchOptions {
  /** Bytes `copy` operations may add in total (upstream: the request body limit). */
  copySizeLimit?: number;
}

/** The state of one application: the document and the bytes copied so far. */
interface Run {
  value: unknown;
  copied: number;
  copyLimit: number;
}

/**
 * Applies decoded operations to a copy of `doc`; the caller's value is
 * untouched. The operations run without recursion, so a document they nest
 * too deeply is refused (400) once, at the end.
 */
export function applyJsonPatch(doc: unknown, ops: JsonPatchOperation[], opts: JsonPatchOptions = {}): unknown {
  const run: Run = { value: clone(doc), copied: 0, copyLimit: opts.copySizeLimit ?? maxRequestBodyBytes };
  for (const op of ops) {
    const failure = applyOne(run, op);
    if (failure) throw patchRejected(failure);
  }
  if (valueExceedsDepth(run.value)) throw tooDeep('the patched object');
  return run.value;
}

/** Decodes and applies in one step. */
export function jsonPatch(doc: unknown, body: unknown): unknown {
  return applyJsonPatch(doc, decodeJsonPatch(body));
}

type Container = JsonObject | unknown[];
/** A container and the decoded last token of a path, or undefined when the path does not lead anywhere. */
type Location = { container: Container; key: string } | undefined;

function decodeToken(t: string): string {
  return t.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Walks all tokens but the last, as the library does: the first token (before the leading '/') is skipped. */
function locate(root: Run, path: string): Location {
  const parts = path.split('/');
  if (parts.length < 2) return undefined;
  let cur = root.value;
  if (!isObject(cur) && !Array.isArray(cur)) return undefined;
  for (const raw of parts.slice(1, -1)) {
    const next = getChild(cur as Container, decodeToken(raw));
    if ('error' in next || (!isObject(next.value) && !Array.isArray(next.value))) return undefined;
    cur = next.value;
  }
  return { container: cur as Container, key: decodeToken(parts[parts.length - 1]) };
}

/** Index of an array token, or an error text. `size` is the length the index may reach. */
function arrayIndex(key: string, length: number, size: number): number | string {
  if (!/^[+-]?\d+$/.test(key)) return `strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`;
  let idx = Number(key);
  if (idx >= size || idx < -size) return `Unable to access invalid index: ${idx}: invalid index referenced`;
  if (idx < 0) idx += size;
  return idx >= 0 && idx <= length ? idx : `Unable to access invalid index: ${idx}: invalid index referenced`;
}

/** Child value (undefined when an object lacks the key), or the error text of a bad array access. */
function getChild(c: Container, key: string): { value: unknown } | { error: string } {
  if (Array.isArray(c)) {
    const idx = arrayIndex(key, c.length - 1, c.length);
    return typeof idx === 'string' ? { error: idx } : { value: c[idx] };
  }
  return { value: ownValue(c, key) };
}

function add(c: Container, key: string, value: unknown): string | undefined {
  if (!Array.isArray(c)) {
    setOwn(c, key, value);
    return undefined;
  }
  if (key === '-') {
    c.push(value);
    return undefined;
  }
  const idx = arrayIndex(key, c.length, c.length + 1);
  if (typeof idx === 'string') {
    return idx.startsWith('strconv.') ? `value was not a proper array index: '${key}': ${idx}` : idx;
  }
  c.splice(idx, 0, value);
  return undefined;
}

function remove(c: Container, key: string): string | undefined {
  if (!Array.isArray(c)) {
    if (!hasOwn(c, key)) return `Unable to remove nonexistent key: ${key}: missing value`;
    delete c[key];
    return undefined;
  }
  const idx = arrayIndex(key, c.length - 1, c.length);
  if (typeof idx === 'string') return idx;
  c.splice(idx, 1);
  return undefined;
}

function pathOf(op: JsonPatchOperation, field: 'path' | 'from'): string | undefined {
  const v = op[field];
  return typeof v === 'string' ? v : undefined;
}

/** Applies one operation in place; returns the failure text (the library's wording) or undefined. */
function applyOne(root: Run, op: JsonPatchOperation): string | undefined {
  const path = pathOf(op, 'path');
  const value = op.hasValue ? clone(op.value) : null;
  switch (op.op) {
    case 'add': {
      if (path === undefined) return 'add operation failed to decode path: missing value';
      const loc = locate(root, path);
      if (!loc) return `add operation does not apply: doc is missing path: "${path}": missing value`;
      const err = add(loc.container, loc.key, value);
      return err && `error in add for path: '${path}': ${err}`;
    }
    case 'remove': {
      if (path === undefined) return 'remove operation failed to decode path: missing value';
      const loc = locate(root, path);
      if (!loc) return `remove operation does not apply: doc is missing path: "${path}": missing value`;
      const err = remove(loc.container, loc.key);
      return err && `error in remove for path: '${path}': ${err}`;
    }
    case 'replace': {
      if (path === undefined) return 'replace operation failed to decode path: operation missing path field: missing value';
      const loc = locate(root, path);
      if (!loc) return `replace operation does not apply: doc is missing path: ${path}: missing value`;
      if (Array.isArray(loc.container)) {
        const idx = arrayIndex(loc.key, loc.container.length - 1, loc.container.length);
        if (typeof idx === 'string') return `replace operation does not apply: doc is missing key: ${path}: missing value`;
        loc.container[idx] = value;
      } else {
        // The library sets a missing object key instead of failing.
        setOwn(loc.container, loc.key, value);
      }
      return undefined;
    }
    case 'move': {
      const from = pathOf(op, 'from');
      if (from === undefined) return 'move operation failed to decode from: operation, missing from field: missing value';
      const src = locate(root, from);
      if (!src) return `move operation does not apply: doc is missing from path: ${from}: missing value`;
      const got = getChild(src.container, src.key);
      if ('error' in got) return `error in move for path: '${src.key}': ${got.error}`;
      const remErr = remove(src.container, src.key);
      if (remErr) return `error in move for path: '${src.key}': ${remErr}`;
      if (path === undefined) return 'move operation failed to decode path: operation missing path field: missing value';
      const dst = locate(root, path);
      if (!dst) return `move operation does not apply: doc is missing destination path: ${path}: missing value`;
      const err = add(dst.container, dst.key, got.value ?? null);
      return err && `error in move for path: '${path}': ${err}`;
    }
    case 'copy': {
      const from = pathOf(op, 'from');
      if (from === undefined) return 'copy operation failed to decode from: operation, missing from field: missing value';
      const src = locate(root, from);
      if (!src) return `copy operation does not apply: doc is missing from path: ${from}: missing value`;
      const got = getChild(src.container, src.key);
      if ('error' in got) return `error in copy for from: '${from}': ${got.error}`;
      if (path === undefined) return 'copy operation failed to decode path: missing value';
      const dst = locate(root, path);
      if (!dst) return `copy operation does not apply: doc is missing destination path: ${path}: missing value`;
      // Counted as the library counts: the encoded bytes of each copied value (a missing one is none).
      root.copied += got.value === undefined ? 0 : encodedSize(got.value);
      if (root.copied > root.copyLimit) {
        return `Unable to complete the copy, the accumulated size increase of copy is ${root.copied}, exceeding the limit ${root.copyLimit}`;
      }
      const err = add(dst.container, dst.key, clone(got.value ?? null));
      return err && `error while adding value during copy: ${err}`;
    }
    case 'test': {
      if (path === undefined) return 'test operation failed to decode path: operation missing path field: missing value';
      const loc = locate(root, path);
      if (!loc) return `test operation does not apply: is missing path: ${path}: missing value`;
      const got = getChild(loc.container, loc.key);
      if ('error' in got) return `error in test for path: '${path}': ${got.error}`;
      // A missing value tests equal to null, as in the library.
      return deepEqual(got.value ?? null, value) ? undefined : `testing value ${path} failed: test failed`;
    }
    default:
      return `Unexpected kind: ${op.op}`;
  }
}
