// The schema-driven protobuf codec: a kind's Schema (with `proto` field numbers
// and `protoMessage` wire shapes) is all it needs to turn the JSON form of an
// object into the bytes upstream's generated code would write, and back.
//
// Encoding follows upstream's generated marshalers: fields in field-number
// order, map entries sorted by key, repeated scalars unpacked, value fields
// written even when empty (see presence.ts). Decoding yields the JSON shape the
// JSON decoder would: empty value fields are dropped, as `omitempty` would.

import { resolve, type Schema } from '../schema.js';
import { ProtobufError, Reader, WireType, Writer } from '../../machinery/protobufwire.js';
import { formatInstant, parseGoTime, zeroTimeSeconds, type Instant } from '../../machinery/time.js';
import { maxNestingDepth, tooDeep } from '../../machinery/limits.js';
import { setOwn } from '../../machinery/ownkeys.js';
import { canonicalQuantity } from '../../machinery/quantity.js';
import { presenceOf, type FieldShape, type Presence } from './presence.js';

type Json = Record<string, unknown>;

/** How one value travels on the wire. */
type WireKind =
  | { k: 'string' } | { k: 'bytes' } | { k: 'int32' } | { k: 'int64' } | { k: 'bool' } | { k: 'double' }
  | { k: 'time' } | { k: 'microTime' } | { k: 'fieldsV1' } | { k: 'rawExtension' } | { k: 'intOrString' } | { k: 'stringList' } | { k: 'quantity' }
  | { k: 'message'; schema: Schema }
  /** An embedded Go struct: its fields are the parent's in JSON, one nested message on the wire. */
  | { k: 'inline'; schema: Schema }
  | { k: 'map'; value: WireKind }
  | { k: 'repeated'; item: WireKind }
  | { k: 'unsupported'; why: string };

interface Field {
  name: string;
  number: number;
  kind: WireKind;
  presence: Presence;
}

function classify(s: Schema): WireKind {
  const r = resolve(s);
  const special = s.protoMessage ?? r.protoMessage;
  if (special) return { k: special };
  if (r.intOrString) return { k: 'intOrString' };
  switch (r.type) {
    case 'string':
      if (r.format === 'byte') return { k: 'bytes' };
      // Every date-time of the API is a meta Time on the wire.
      if (r.format === 'date-time') return { k: 'time' };
      return { k: 'string' };
    case 'integer': return { k: r.format === 'int32' ? 'int32' : 'int64' };
    case 'boolean': return { k: 'bool' };
    case 'number': return { k: 'double' };
    case 'array': {
      const item = r.items ? classify(r.items) : { k: 'unsupported' as const, why: 'array without items' };
      if (item.k === 'repeated' || item.k === 'map') return { k: 'unsupported', why: 'nested collection' };
      return { k: 'repeated', item };
    }
    case 'object':
    case undefined:
      if (r.additionalProperties) {
        const value = classify(r.additionalProperties);
        if (value.k === 'repeated' || value.k === 'map') return { k: 'unsupported', why: 'nested collection' };
        return { k: 'map', value };
      }
      if (r.properties) return { k: 'message', schema: r };
      return { k: 'unsupported', why: 'free-form object' };
    default:
      return { k: 'unsupported', why: `type ${String(r.type)}` };
  }
}

function shapeOf(kind: WireKind): FieldShape {
  switch (kind.k) {
    case 'string': case 'bytes': return 'string';
    case 'int32': case 'int64': return 'integer';
    case 'bool': return 'boolean';
    case 'double': return 'number';
    default: return 'message';
  }
}

const fieldCache = new WeakMap<Schema, { ordered: Field[]; byNumber: Map<number, Field> }>();

function fieldsOf(schema: Schema): { ordered: Field[]; byNumber: Map<number, Field> } {
  const message = resolve(schema);
  let cached = fieldCache.get(message);
  if (cached) return cached;
  const ordered: Field[] = [];
  const embedded = new Set<string>();
  for (const inline of message.protoInline ?? []) {
    for (const prop of Object.keys(resolve(inline.schema).properties ?? {})) embedded.add(prop);
    ordered.push({ name: '', number: inline.proto, kind: { k: 'inline', schema: inline.schema }, presence: 'always' });
  }
  for (const [prop, ps] of Object.entries(message.properties ?? {})) {
    if (ps.proto === undefined || embedded.has(prop)) continue;
    const kind = classify(ps);
    ordered.push({ name: prop, number: ps.proto, kind, presence: presenceOf(ps, prop, shapeOf(kind)) });
  }
  ordered.sort((a, b) => a.number - b.number);
  cached = { ordered, byNumber: new Map(ordered.map((f) => [f.number, f])) };
  fieldCache.set(message, cached);
  return cached;
}

// ---- encoding ----

export function encodeMessage(value: Json, schema: Schema): Buffer {
  const w = new Writer();
  writeFields(w, value, schema);
  return w.finish();
}

function writeFields(w: Writer, value: Json, schema: Schema): void {
  for (const f of fieldsOf(schema).ordered) {
    if (f.kind.k === 'inline') {
      w.tag(f.number, WireType.lengthDelimited).bytes(encodeMessage(value, f.kind.schema));
      continue;
    }
    const v = value[f.name];
    const absent = v === undefined || v === null;
    if (f.kind.k === 'repeated') {
      if (Array.isArray(v)) for (const item of v) writeValue(w, f.number, f.kind.item, item, f.name);
    } else if (f.kind.k === 'map') {
      if (isObject(v)) writeMap(w, f.number, f.kind.value, v, f.name);
    } else if (!absent || f.presence === 'always') {
      writeValue(w, f.number, f.kind, absent ? undefined : v, f.name);
    }
  }
}

/** Map entries sorted by the UTF-8 bytes of their keys, as Go sorts strings. */
function writeMap(w: Writer, number: number, kind: WireKind, map: Json, name: string): void {
  const keys = Object.keys(map).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const key of keys) {
    const entry = new Writer();
    entry.tag(1, WireType.lengthDelimited).string(key);
    const v = map[key];
    writeValue(entry, 2, kind, v === null ? undefined : v, `${name}[${key}]`);
    w.tag(number, WireType.lengthDelimited).bytes(entry.finish());
  }
}

/** Writes one value; `undefined` writes the zero value. */
function writeValue(w: Writer, number: number, kind: WireKind, v: unknown, name: string): void {
  switch (kind.k) {
    case 'string':
      w.tag(number, WireType.lengthDelimited).string(v === undefined ? '' : String(v));
      return;
    case 'bytes':
      w.tag(number, WireType.lengthDelimited).bytes(Buffer.from(v === undefined ? '' : String(v), 'base64'));
      return;
    case 'int32':
    case 'int64':
      w.tag(number, WireType.varint).int(toInteger(v, name));
      return;
    case 'bool':
      w.tag(number, WireType.varint).varint(v === true ? 1 : 0);
      return;
    case 'double':
      w.tag(number, WireType.fixed64).double(v === undefined ? 0 : Number(v));
      return;
    case 'time':
    case 'microTime':
      w.tag(number, WireType.lengthDelimited).bytes(encodeTime(v, kind.k === 'time', name));
      return;
    case 'fieldsV1':
    case 'rawExtension':
      w.tag(number, WireType.lengthDelimited).bytes(encodeRawJson(v));
      return;
    case 'intOrString':
      w.tag(number, WireType.lengthDelimited).bytes(encodeIntOrString(v, name));
      return;
    case 'quantity':
      // {string = 1}: the canonical text.
      w.tag(number, WireType.lengthDelimited).bytes(new Writer().tag(1, WireType.lengthDelimited).string(v === undefined ? '0' : String(v)).finish());
      return;
    case 'inline':
      w.tag(number, WireType.lengthDelimited).bytes(encodeMessage(isObject(v) ? v : {}, kind.schema));
      return;
    case 'stringList': {
      // {repeated string items = 1}, as upstream's ExtraValue.
      const items = new Writer();
      for (const item of Array.isArray(v) ? v : []) items.tag(1, WireType.lengthDelimited).string(String(item));
      w.tag(number, WireType.lengthDelimited).bytes(items.finish());
      return;
    }
    case 'message':
      w.tag(number, WireType.lengthDelimited).bytes(encodeMessage(isObject(v) ? v : {}, kind.schema));
      return;
    case 'repeated':
    case 'map':
    case 'unsupported':
      if (v === undefined) return;
      throw new Error(`cannot encode field ${name} as protobuf: ${kind.k === 'unsupported' ? kind.why : 'nested collection'}`);
  }
}

function toInteger(v: unknown, name: string): number {
  if (v === undefined) return 0;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n)) throw new Error(`cannot encode field ${name} as protobuf: ${JSON.stringify(v)} is not an integer`);
  return Math.trunc(n);
}

/** A Time message: seconds and nanos always written; the zero (absent) time is an empty message. */
function encodeTime(v: unknown, isTime: boolean, name: string): Buffer {
  if (typeof v !== 'string' || v === '') return Buffer.alloc(0);
  let t: Instant;
  try {
    // Any RFC 3339 text is read, whatever its fraction: a stored value need not be canonical.
    t = parseGoTime(v);
  } catch (e) {
    throw new Error(`cannot encode field ${name} as protobuf: ${(e as Error).message}`);
  }
  if (t.seconds === zeroTimeSeconds && t.nanos === 0) return Buffer.alloc(0);
  return new Writer()
    .tag(1, WireType.varint).int(t.seconds)
    .tag(2, WireType.varint).int(isTime ? t.nanos : Math.floor(t.nanos / 1000) * 1000)
    .finish();
}

/**
 * FieldsV1 and RawExtension: one bytes field holding the JSON text; unset when
 * there is no value. Bytes are taken as they are: a protobuf watch event carries
 * its object already encoded (envelope included), not as JSON.
 */
function encodeRawJson(v: unknown): Buffer {
  if (v === undefined) return Buffer.alloc(0);
  const raw = v instanceof Uint8Array ? v : Buffer.from(JSON.stringify(v), 'utf8');
  return new Writer().tag(1, WireType.lengthDelimited).bytes(raw).finish();
}

/** IntOrString {type, intVal, strVal}: all three written, as upstream does. */
function encodeIntOrString(v: unknown, name: string): Buffer {
  const isString = typeof v === 'string';
  return new Writer()
    .tag(1, WireType.varint).varint(isString ? 1 : 0)
    .tag(2, WireType.varint).int(isString ? 0 : toInteger(v, name))
    .tag(3, WireType.lengthDelimited).string(isString ? v : '')
    .finish();
}

// ---- decoding ----

export function decodeMessage(bytes: Uint8Array, schema: Schema): Json {
  const out: Json = {};
  readFields(new Reader(bytes), schema, out, 1);
  return out;
}

/**
 * Reads fields into `out`; a message seen twice merges, as proto does.
 * `depth` counts nested messages, so that a schema that refers to itself
 * cannot be made to recurse without end.
 */
function readFields(r: Reader, schema: Schema, out: Json, depth: number): void {
  if (depth > maxNestingDepth) throw tooDeep();
  const { byNumber } = fieldsOf(schema);
  while (!r.done) {
    const { field, wireType } = r.tag();
    const f = byNumber.get(field);
    if (!f || f.kind.k === 'unsupported') {
      r.skip(wireType);
      continue;
    }
    readField(r, f, wireType, out, depth);
  }
}

function readField(r: Reader, f: Field, wireType: number, out: Json, depth: number): void {
  const { kind } = f;
  if (kind.k === 'inline') {
    expectWireType(wireType, kind, 'embedded message');
    readFields(new Reader(r.bytes()), kind.schema, out, depth + 1);
    return;
  }
  if (kind.k === 'repeated') {
    const list = Array.isArray(out[f.name]) ? (out[f.name] as unknown[]) : [];
    const item = kind.item;
    if (wireType === WireType.lengthDelimited && wireTypeOf(item) !== WireType.lengthDelimited) {
      // A packed run of scalars: readers must accept it even though upstream never writes one.
      const packed = r.bytes();
      const sub = new Reader(packed);
      while (!sub.done) list.push(readScalar(sub, item));
    } else {
      expectWireType(wireType, item, f.name);
      list.push(readValue(r, item, undefined, depth));
    }
    setOwn(out, f.name, list);
    return;
  }
  if (kind.k === 'map') {
    expectWireType(wireType, kind, f.name);
    const map = isObject(out[f.name]) ? (out[f.name] as Json) : {};
    const [key, value] = readMapEntry(r.bytes(), kind.value, f.name, depth);
    setOwn(map, key, value);
    setOwn(out, f.name, map);
    return;
  }
  expectWireType(wireType, kind, f.name);
  const value = readValue(r, kind, out[f.name], depth);
  if (value === undefined || (f.presence === 'always' && isZero(value))) delete out[f.name];
  else setOwn(out, f.name, value);
}

function readMapEntry(bytes: Uint8Array, kind: WireKind, name: string, depth: number): [string, unknown] {
  const r = new Reader(bytes);
  let key = '';
  let value: unknown;
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field === 1) {
      expectWireType(wireType, { k: 'string' }, `${name} key`);
      key = r.string();
    } else if (field === 2) {
      expectWireType(wireType, kind, `${name} value`);
      value = readValue(r, kind, value, depth);
    } else {
      r.skip(wireType);
    }
  }
  return [key, value === undefined ? zeroOf(kind) : value];
}

/** One value of a field; `previous` is what an earlier occurrence left, for message merging. */
function readValue(r: Reader, kind: WireKind, previous: unknown, depth: number): unknown {
  switch (kind.k) {
    case 'string': return r.string();
    case 'bytes': {
      const b = r.bytes();
      return Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');
    }
    case 'time': return decodeTime(r.bytes(), true);
    case 'microTime': return decodeTime(r.bytes(), false);
    case 'fieldsV1':
    case 'rawExtension': return decodeRawJson(r.bytes());
    case 'intOrString': return decodeIntOrString(r.bytes());
    case 'quantity': return decodeQuantity(r.bytes());
    case 'stringList': {
      const list = Array.isArray(previous) ? previous : [];
      const sub = new Reader(r.bytes());
      while (!sub.done) {
        const { field, wireType } = sub.tag();
        if (field === 1 && wireType === WireType.lengthDelimited) list.push(sub.string());
        else sub.skip(wireType);
      }
      return list;
    }
    case 'message': {
      const target = isObject(previous) ? previous : {};
      const b = r.bytes();
      readFields(new Reader(b), kind.schema, target, depth + 1);
      return target;
    }
    default: return readScalar(r, kind);
  }
}

function readScalar(r: Reader, kind: WireKind): unknown {
  switch (kind.k) {
    case 'int32': return r.int32();
    case 'int64': return r.int64();
    case 'bool': return r.bool();
    case 'double': return r.double();
    default: throw new ProtobufError(`proto: cannot read ${kind.k} as a scalar`);
  }
}

function decodeTime(bytes: Uint8Array, wholeSeconds: boolean): string | undefined {
  if (bytes.length === 0) return undefined; // the zero time: null in JSON, so left out
  const r = new Reader(bytes);
  let seconds = 0;
  let nanos = 0;
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field === 1 && wireType === WireType.varint) seconds = r.int64();
    else if (field === 2 && wireType === WireType.varint) nanos = r.int32();
    else r.skip(wireType);
  }
  // Upstream keeps whole seconds of a Time and microseconds of a MicroTime.
  if (wholeSeconds) nanos = 0;
  if (seconds === zeroTimeSeconds && nanos === 0) return undefined;
  try {
    return formatInstant({ seconds, nanos }, wholeSeconds ? 0 : 6);
  } catch (e) {
    throw new ProtobufError(`proto: ${(e as Error).message}`);
  }
}

function decodeRawJson(bytes: Uint8Array): unknown {
  const r = new Reader(bytes);
  let raw: Uint8Array | undefined;
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field === 1 && wireType === WireType.lengthDelimited) raw = r.bytes();
    else r.skip(wireType);
  }
  if (!raw || raw.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8'));
  } catch (e) {
    throw new ProtobufError(`embedded JSON is invalid: ${(e as Error).message}`);
  }
}

/** A Quantity message: its text, read as a quantity (canonical form); an empty message is zero. */
function decodeQuantity(bytes: Uint8Array): string {
  const r = new Reader(bytes);
  let text = '';
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field === 1 && wireType === WireType.lengthDelimited) text = r.string();
    else r.skip(wireType);
  }
  if (text === '') return '0';
  try {
    return canonicalQuantity(text);
  } catch (e) {
    throw new ProtobufError(`proto: ${(e as Error).message}`);
  }
}

function decodeIntOrString(bytes: Uint8Array): number | string {
  const r = new Reader(bytes);
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field === 1 && wireType === WireType.varint) type = r.int64();
    else if (field === 2 && wireType === WireType.varint) intVal = r.int32();
    else if (field === 3 && wireType === WireType.lengthDelimited) strVal = r.string();
    else r.skip(wireType);
  }
  return type === 1 ? strVal : intVal;
}

function wireTypeOf(kind: WireKind): number {
  switch (kind.k) {
    case 'int32': case 'int64': case 'bool': return WireType.varint;
    case 'double': return WireType.fixed64;
    default: return WireType.lengthDelimited;
  }
}

function expectWireType(actual: number, kind: WireKind, name: string): void {
  if (actual !== wireTypeOf(kind)) throw new ProtobufError(`proto: wrong wireType = ${actual} for field ${name}`);
}

function zeroOf(kind: WireKind): unknown {
  switch (kind.k) {
    case 'string': case 'bytes': return '';
    case 'int32': case 'int64': case 'double': return 0;
    case 'bool': return false;
    case 'message': return {};
    case 'intOrString': return 0;
    case 'quantity': return '0';
    case 'stringList': return [];
    default: return undefined;
  }
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
