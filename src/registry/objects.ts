// Object <-> stored bytes. The resourceVersion is never stored: it is the
// key's modRevision, set on the way out, as etcd-backed servers do.
//
// Stored JSON always begins `{"apiVersion":…,"kind":…,"metadata":{`, so the
// resourceVersion can be spliced into the bytes on the way out without
// parsing: a list or a get answers by concatenating stored bytes.

import type { KeyValue } from '../storage/backend.js';
import type { KubeObject } from '../api/kind.js';
import { deepFreeze } from '../machinery/freeze.js';
import { metadataJson } from '../machinery/managedfields/index.js';
import { decodedBytes, type Memo } from '../storage/cache/derived.js';

export function toStoredBytes(obj: KubeObject): Buffer {
  const { apiVersion, kind, metadata } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    const { apiVersion: a, kind: k, metadata: _m, ...rest } = obj;
    const { resourceVersion: _rv, ...meta } = metadata ?? {};
    return Buffer.from(JSON.stringify({ apiVersion: a, kind: k, metadata: meta, ...rest }));
  }
  // The layout the answers splice into, written piece by piece: no copy of the object or its metadata.
  const meta = metadata && metadata.resourceVersion !== undefined ? withoutVersion(metadata) : (metadata ?? {});
  let text = `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},"metadata":${metadataJson(meta)}`;
  for (const key of Object.keys(obj)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata') continue;
    const value = JSON.stringify(obj[key]);
    if (value !== undefined) text += `,${JSON.stringify(key)}:${value}`;
  }
  return Buffer.from(`${text}}`);
}

function withoutVersion(metadata: Record<string, unknown>): Record<string, unknown> {
  const { resourceVersion: _rv, ...meta } = metadata;
  return meta;
}

const metadataOpen = Buffer.from('"metadata":{');

/**
 * The stored bytes with `"resourceVersion":"<modRevision>"` first in
 * metadata, as pieces: two views of the stored value around a small insert.
 */
export function encodedWithVersionParts(kv: KeyValue): Buffer[] {
  const at = kv.value.indexOf(metadataOpen);
  if (at < 0) return [Buffer.from(JSON.stringify(fromKeyValue(kv)))]; // not our layout: take the slow road
  const cut = at + metadataOpen.length;
  const empty = kv.value[cut] === 0x7d; // '}': metadata had nothing else
  const rv = Buffer.from(`"resourceVersion":"${kv.modRevision}"${empty ? '' : ','}`);
  return [kv.value.subarray(0, cut), rv, kv.value.subarray(cut)];
}

/**
 * Where the stored JSON's metadata object ends (`end`: the index after its
 * closing brace) and where its `"managedFields":[…]` member lies, with one
 * comma beside it, so that the text without it is the object without it
 * (`managedFields`: absent when metadata has none, or a scalar one, not ours
 * to cut). Undefined when the value is not in our layout. One pass over
 * metadata; only its own members are looked at (depth 1, outside strings).
 * `untilManagedFields`: stop once the member is found (`end` is then -1).
 */
function metadataLayout(value: Buffer, untilManagedFields = false): { end: number; managedFields?: { start: number; end: number } } | undefined {
  const at = value.indexOf(metadataOpen);
  if (at < 0) return undefined;
  let depth = 0;
  let memberStart = -1;
  let managedFields: { start: number; end: number } | undefined;
  for (let i = at + metadataOpen.length - 1; i < value.length; i++) {
    const c = value[i];
    if (c === 0x22) {
      const open = i;
      for (i++; i < value.length && value[i] !== 0x22; i++) if (value[i] === 0x5c) i++;
      if (depth === 1 && value[i + 1] === 0x3a /* : */ && value.toString('latin1', open, i + 1) === '"managedFields"') memberStart = open;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return { end: i + 1, managedFields };
      if (depth === 1 && memberStart >= 0) {
        // The member ends here: take the comma after it, else the one before it.
        if (value[i + 1] === 0x2c) managedFields = { start: memberStart, end: i + 2 };
        else if (value[memberStart - 1] === 0x2c) managedFields = { start: memberStart - 1, end: i + 1 };
        memberStart = -1;
        if (untilManagedFields) return { end: -1, managedFields };
      }
    } else if (depth === 1 && memberStart >= 0 && c !== 0x3a && c !== 0x20) {
      memberStart = -1; // a scalar managedFields: not ours to cut
      if (untilManagedFields) return { end: -1 };
    }
  }
  return undefined;
}

/**
 * The stored form of objects a write has just stored, so that its answer goes
 * out from the bytes written instead of from a second encoding. Weak, keyed by
 * the object the store hands back; only answers check it, and only while the
 * object's resourceVersion is still the stored one.
 */
const storedForms = new WeakMap<KubeObject, KeyValue>();

/** Records that `obj` (with its resourceVersion set) is stored as `kv`; returns `obj`. */
export function noteStored(obj: KubeObject, kv: KeyValue): KubeObject {
  storedForms.set(obj, kv);
  return obj;
}

/** The stored form of an object a write has just stored, if it is still that object. */
export function storedFormOf(obj: KubeObject): KeyValue | undefined {
  const kv = storedForms.get(obj);
  return kv && obj.metadata?.resourceVersion === String(kv.modRevision) ? kv : undefined;
}

export function fromKeyValue(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value.toString('utf8')) as KubeObject;
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}

/**
 * An object read from the store: parsed only when someone looks inside,
 * encoded as JSON without a parse/stringify round trip.
 */
export class StoredObject {
  private parsed?: KubeObject;
  /** Whether `parsed` went through the shared memo (when the value has one). */
  private shared = false;
  /**
   * `readDefaultsThrough`: the value was written at or before that revision,
   * before the kind's current defaults perhaps: its JSON goes out defaulted
   * (see KindDefinition.readDefaultsThrough), not as stored.
   */
  constructor(readonly kv: KeyValue, private readonly defaults?: (obj: KubeObject) => void, private readonly readDefaultsThrough?: number) {}

  /**
   * The decoded object, read-only: when the value came from the watch cache
   * it is shared with every other reader of that version (through the
   * bounded derived cache), so it is frozen before anyone sees it (a change
   * throws instead of corrupting the cache). Writers take their own copy
   * with `mutableObject()`.
   */
  get object(): KubeObject {
    if (this.shared) return this.parsed!;
    this.shared = true;
    const memo = memoOf(this.kv);
    const known = memo?.get('object') as KubeObject | undefined;
    if (known) return (this.parsed = known);
    const decoded = this.parsed ?? this.mutableObject();
    if (memo) memo.set('object', deepFreeze(decoded), decodedBytes(this.kv.value.length));
    return (this.parsed = decoded);
  }

  /**
   * The decoded object for a look only (does this item of a list match a
   * selector?): the shared decode when there is one, else one of its own
   * that is not put in the derived cache, where a scan of more objects than
   * the cache holds would only push out what others read again. Read-only.
   * (Watchers use `object`: the filtered watchers of one event share it.)
   */
  peekObject(): KubeObject {
    return (this.parsed ??= (memoOf(this.kv)?.get('object') as KubeObject | undefined) ?? this.mutableObject());
  }

  /**
   * Identity and metadata only, for readers that keep nothing else (metadata
   * informers): the shared decode when there is one, else a decode of its
   * own that is not left in the derived cache, where it would push out
   * decodes that others read again. `withoutManagedFields`: they may be
   * left out (the caller drops them).
   */
  metadataObject(withoutManagedFields = false): KubeObject {
    const whole = this.parsed ?? (memoOf(this.kv)?.get('object') as KubeObject | undefined);
    if (whole) return this.metadataOf(whole);
    // Only the head of the stored JSON (apiVersion, kind, metadata) is parsed: a tenth of a ConfigMap's bytes.
    const v = this.kv.value;
    const layout = metadataLayout(v);
    if (!layout) return this.metadataOf(this.peekObject());
    const end = layout.end;
    // Without managedFields when the caller drops them anyway: often half of the head.
    const cut = withoutManagedFields ? layout.managedFields : undefined;
    const text = cut ? `${v.toString('utf8', 0, cut.start)}${v.toString('utf8', cut.end, end)}}` : `${v.toString('utf8', 0, end)}}`;
    const head = JSON.parse(text) as KubeObject;
    head.metadata!.resourceVersion = String(this.kv.modRevision);
    return head;
  }

  /**
   * The object without metadata.managedFields, for readers that never look
   * at them (the in-process informers): the shared decode when there is
   * one, copied around its managedFields; else a decode of its own of the
   * stored bytes with the managedFields cut out (often a third of a pod's
   * bytes), neither frozen nor left in the derived cache. The caller's own.
   */
  objectWithoutManagedFields(): KubeObject {
    const whole = this.parsed ?? (memoOf(this.kv)?.get('object') as KubeObject | undefined);
    const cut = whole ? undefined : metadataLayout(this.kv.value, true)?.managedFields;
    if (cut === undefined) {
      const obj = whole ?? this.peekObject();
      const meta = obj.metadata;
      if (meta?.managedFields === undefined) return obj;
      const { managedFields: _unread, ...kept } = meta;
      return { ...obj, metadata: kept };
    }
    const v = this.kv.value;
    const obj = JSON.parse(`${v.toString('utf8', 0, cut.start)}${v.toString('utf8', cut.end)}`) as KubeObject;
    obj.metadata ??= {};
    obj.metadata.resourceVersion = String(this.kv.modRevision);
    this.defaults?.(obj);
    return obj;
  }

  private metadataOf(whole: KubeObject): KubeObject {
    return { apiVersion: whole.apiVersion, kind: whole.kind, metadata: whole.metadata };
  }

  /** A decoded copy of the caller's own, with the kind's defaults applied. */
  mutableObject(): KubeObject {
    const obj = fromKeyValue(this.kv);
    this.defaults?.(obj);
    return obj;
  }

  /** The JSON bytes; splicing is cheap, so they are not kept (a watch event keeps its own frame). */
  json(): Buffer {
    return Buffer.concat(this.jsonParts());
  }

  /** The JSON as pieces that reuse the stored bytes, for answers written piece by piece. */
  jsonParts(): Buffer[] {
    if (this.defaults && this.readDefaultsThrough !== undefined && this.kv.modRevision <= this.readDefaultsThrough) {
      return [Buffer.from(JSON.stringify(this.object))];
    }
    return encodedWithVersionParts(this.kv);
  }
}

/** Values from the watch cache carry a memo shared by every reader of that version. */
function memoOf(kv: KeyValue): Memo | undefined {
  return (kv as { memo?: Memo }).memo;
}

/** A list answer whose items are stored objects. */
export interface StoredList {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  items: StoredObject[];
}

export function materializeList(list: StoredList): KubeObject {
  return { apiVersion: list.apiVersion, kind: list.kind, metadata: list.metadata, items: list.items.map((i) => i.object) };
}

/**
 * JSON of a list as consecutive pieces built from the items' stored bytes,
 * written out one after the other rather than joined into one large buffer.
 */
export function encodeListJsonParts(list: StoredList): Buffer[] {
  const head = Buffer.from(`{"apiVersion":${JSON.stringify(list.apiVersion)},"kind":${JSON.stringify(list.kind)},"metadata":${JSON.stringify(list.metadata)},"items":[`);
  const parts: Buffer[] = [head];
  list.items.forEach((item, i) => {
    if (i > 0) parts.push(comma);
    parts.push(...item.jsonParts());
  });
  parts.push(close);
  return parts;
}

const comma = Buffer.from(',');
const close = Buffer.from(']}');

/**
 * Parses a client-supplied resourceVersion: decimal digits only, as
 * upstream's ParseUint (`1e3`, ` 7`, `0x10` are not versions); undefined
 * when absent or empty, NaN when malformed or beyond an exact integer.
 */
export function parseResourceVersion(rv: unknown): number | undefined {
  if (rv === undefined || rv === null || rv === '') return undefined;
  if (typeof rv !== 'string' || !/^\d+$/.test(rv)) return NaN;
  const n = Number(rv);
  return Number.isSafeInteger(n) ? n : NaN;
}
