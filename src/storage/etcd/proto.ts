// Protocol buffer encoding of the few etcd messages the hot calls carry
// (KV.Range and KV.Txn, rpc.proto and kv.proto of etcd 3.4), written by hand
// (answers are read with the wire reader the API objects use, machinery/protobufwire.ts):
// the generic decoder the etcd3 package uses builds every message as an
// object of strings and defaults, which was a fifth of a create's CPU.
// Revisions and counts are numbers (etcd's stay far below 2^53); lease IDs,
// which use all 64 bits, are decimal strings.

import { Reader } from '../../machinery/protobufwire.js';

/** A KeyValue of kv.proto (version and lease are not read). */
export interface EtcdKv {
  key: Buffer;
  value: Buffer;
  createRevision: number;
  modRevision: number;
}

export interface RangeRequest {
  key: Buffer;
  rangeEnd?: Buffer;
  limit?: number;
  revision?: number;
  keysOnly?: boolean;
  countOnly?: boolean;
  minModRevision?: number;
  maxCreateRevision?: number;
}

export interface RangeResponse {
  revision: number;
  kvs: EtcdKv[];
  more: boolean;
  count: number;
}

/** Compare of rpc.proto: the key's create/mod revision or version against a number. */
export interface Compare {
  key: Buffer;
  target: 'version' | 'create' | 'mod';
  result: 'equal' | 'greater';
  against: number;
}

export type RequestOp =
  | { put: { key: Buffer; value: Buffer; lease?: string; prevKv?: boolean } }
  | { range: RangeRequest }
  | { deleteRange: { key: Buffer; prevKv?: boolean } };

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

/** One ResponseOp: what the range found, or the previous values of a put or delete. */
export interface ResponseOp {
  range?: RangeResponse;
  prevKvs?: EtcdKv[];
}

export interface TxnResponse {
  revision: number;
  succeeded: boolean;
  responses: ResponseOp[];
}

// --- encoding -------------------------------------------------------------

/** Bytes of a message being built: fields appended in order. */
class Writer {
  private readonly parts: Buffer[] = [];
  private head = Buffer.allocUnsafe(64);
  private at = 0;
  length = 0;

  private room(n: number): void {
    if (this.at + n <= this.head.length) return;
    this.flush();
    if (n > this.head.length) this.head = Buffer.allocUnsafe(n);
  }

  private flush(): void {
    if (this.at === 0) return;
    this.parts.push(this.head.subarray(0, this.at));
    this.head = Buffer.allocUnsafe(64);
    this.at = 0;
  }

  varint(n: number): this {
    this.room(10);
    const start = this.at;
    while (n > 0x7f) {
      this.head[this.at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.head[this.at++] = n;
    this.length += this.at - start;
    return this;
  }

  /** A varint of a non-negative 64-bit value given in decimal. */
  bigVarint(decimal: string): this {
    let n = BigInt(decimal);
    this.room(10);
    const start = this.at;
    while (n > 0x7fn) {
      this.head[this.at++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.head[this.at++] = Number(n);
    this.length += this.at - start;
    return this;
  }

  bytes(field: number, value: Buffer): this {
    this.varint((field << 3) | 2).varint(value.length);
    if (value.length > 0) {
      this.flush();
      this.parts.push(value);
      this.length += value.length;
    }
    return this;
  }

  /** A number field, left out when 0 (proto3's default). */
  number(field: number, value: number | undefined): this {
    return value ? this.varint(field << 3).varint(value) : this;
  }

  flag(field: number, value: boolean | undefined): this {
    return value ? this.varint(field << 3).varint(1) : this;
  }

  message(field: number, inner: Writer): this {
    this.varint((field << 3) | 2).varint(inner.length);
    this.flush();
    this.parts.push(...inner.finish());
    this.length += inner.length;
    return this;
  }

  finish(): Buffer[] {
    this.flush();
    return this.parts;
  }
}

function rangeRequest(req: RangeRequest): Writer {
  const w = new Writer().bytes(1, req.key);
  if (req.rangeEnd) w.bytes(2, req.rangeEnd);
  return w.number(3, req.limit).number(4, req.revision).flag(8, req.keysOnly).flag(9, req.countOnly)
    .number(10, req.minModRevision).number(13, req.maxCreateRevision);
}

const compareTargets = { version: 0, create: 1, mod: 2 } as const;
const compareResults = { equal: 0, greater: 1 } as const;
/** The target_union field that holds the number each target compares against. */
const compareFields = { version: 4, create: 5, mod: 6 } as const;

function requestOp(op: RequestOp): Writer {
  const w = new Writer();
  if ('put' in op) {
    const put = new Writer().bytes(1, op.put.key).bytes(2, op.put.value);
    if (op.put.lease) put.varint(3 << 3).bigVarint(op.put.lease);
    return w.message(2, put.flag(4, op.put.prevKv));
  }
  if ('range' in op) return w.message(1, rangeRequest(op.range));
  return w.message(3, new Writer().bytes(1, op.deleteRange.key).flag(3, op.deleteRange.prevKv));
}

export function encodeRange(req: RangeRequest): Buffer[] {
  return rangeRequest(req).finish();
}

export function encodeTxn(req: TxnRequest): Buffer[] {
  const w = new Writer();
  for (const c of req.compare) {
    const compare = new Writer().number(1, compareResults[c.result]).number(2, compareTargets[c.target]).bytes(3, c.key);
    // Written even when 0: the field says which comparison this is.
    compare.varint(compareFields[c.target] << 3).varint(c.against);
    w.message(1, compare);
  }
  for (const op of req.success) w.message(2, requestOp(op));
  for (const op of req.failure) w.message(3, requestOp(op));
  return w.finish();
}

// --- decoding -------------------------------------------------------------

/** A length-delimited field read as a message of its own. */
const sub = (r: Reader): Reader => new Reader(r.bytes());

/** A bytes field as a Buffer sharing the answer's memory (each answer is already a copy of its own). */
function bytesOf(r: Reader): Buffer {
  const b = r.bytes();
  return Buffer.from(b.buffer, b.byteOffset, b.length);
}

const emptyBytes = Buffer.alloc(0);

/** The revision in a ResponseHeader. */
function header(r: Reader): number {
  let revision = 0;
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 3 && wire === 0) revision = r.varint();
    else r.skip(wire);
  }
  return revision;
}

function decodeKv(r: Reader): EtcdKv {
  const kv: EtcdKv = { key: emptyBytes, value: emptyBytes, createRevision: 0, modRevision: 0 };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) kv.key = bytesOf(r);
    else if (field === 2 && wire === 0) kv.createRevision = r.varint();
    else if (field === 3 && wire === 0) kv.modRevision = r.varint();
    else if (field === 5 && wire === 2) kv.value = bytesOf(r);
    else r.skip(wire);
  }
  return kv;
}

function rangeResponse(r: Reader): RangeResponse {
  const res: RangeResponse = { revision: 0, kvs: [], more: false, count: 0 };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) res.revision = header(sub(r));
    else if (field === 2 && wire === 2) res.kvs.push(decodeKv(sub(r)));
    else if (field === 3 && wire === 0) res.more = r.varint() !== 0;
    else if (field === 4 && wire === 0) res.count = r.varint();
    else r.skip(wire);
  }
  return res;
}

/** The previous values in a PutResponse (field 2) or DeleteRangeResponse (field 3). */
function prevKvs(r: Reader, kvField: number): EtcdKv[] {
  const kvs: EtcdKv[] = [];
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === kvField && wire === 2) kvs.push(decodeKv(sub(r)));
    else r.skip(wire);
  }
  return kvs;
}

function responseOp(r: Reader): ResponseOp {
  const op: ResponseOp = {};
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) op.range = rangeResponse(sub(r));
    else if (field === 2 && wire === 2) op.prevKvs = prevKvs(sub(r), 2);
    else if (field === 3 && wire === 2) op.prevKvs = prevKvs(sub(r), 3);
    else r.skip(wire);
  }
  return op;
}

export function decodeRange(buf: Buffer): RangeResponse {
  return rangeResponse(new Reader(buf));
}

export function decodeTxn(buf: Buffer): TxnResponse {
  const r = new Reader(buf);
  const res: TxnResponse = { revision: 0, succeeded: false, responses: [] };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) res.revision = header(sub(r));
    else if (field === 2 && wire === 0) res.succeeded = r.varint() !== 0;
    else if (field === 3 && wire === 2) res.responses.push(responseOp(sub(r)));
    else r.skip(wire);
  }
  return res;
}

// --- Watch (rpc.proto's WatchRequest and WatchResponse, kv.proto's Event) ---

export type WatchRequest =
  | { create: { key: Buffer; rangeEnd: Buffer; startRevision: number; watchId: number; prevKv: boolean; progressNotify: boolean } }
  | { cancel: { watchId: number } }
  | { progress: true };

export interface WatchEventMessage {
  type: 'put' | 'delete';
  kv: EtcdKv;
  prevKv?: EtcdKv;
}

export interface WatchResponse {
  revision: number;
  /** -1 for the answer to a progress request. */
  watchId: number;
  created: boolean;
  canceled: boolean;
  compactRevision: number;
  cancelReason: string;
  events: WatchEventMessage[];
}

export function encodeWatchRequest(req: WatchRequest): Buffer[] {
  const w = new Writer();
  if ('create' in req) {
    const c = req.create;
    const create = new Writer().bytes(1, c.key).bytes(2, c.rangeEnd).number(3, c.startRevision).flag(4, c.progressNotify)
      .flag(6, c.prevKv).number(7, c.watchId);
    return w.message(1, create).finish();
  }
  if ('cancel' in req) return w.message(2, new Writer().number(1, req.cancel.watchId)).finish();
  return w.message(3, new Writer()).finish();
}

function watchEvent(r: Reader): WatchEventMessage {
  const event: WatchEventMessage = { type: 'put', kv: { key: emptyBytes, value: emptyBytes, createRevision: 0, modRevision: 0 } };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 0) event.type = r.varint() === 1 ? 'delete' : 'put';
    else if (field === 2 && wire === 2) event.kv = decodeKv(sub(r));
    else if (field === 3 && wire === 2) event.prevKv = decodeKv(sub(r));
    else r.skip(wire);
  }
  return event;
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  const r = new Reader(buf);
  const res: WatchResponse = { revision: 0, watchId: 0, created: false, canceled: false, compactRevision: 0, cancelReason: '', events: [] };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) res.revision = header(sub(r));
    else if (field === 2 && wire === 0) res.watchId = r.int64();
    else if (field === 3 && wire === 0) res.created = r.varint() !== 0;
    else if (field === 4 && wire === 0) res.canceled = r.varint() !== 0;
    else if (field === 5 && wire === 0) res.compactRevision = r.varint();
    else if (field === 6 && wire === 2) res.cancelReason = r.string();
    else if (field === 11 && wire === 2) res.events.push(watchEvent(sub(r)));
    else r.skip(wire);
  }
  return res;
}

// --- Compact and LeaseGrant (rpc.proto's CompactionRequest, LeaseGrantRequest and their answers) ---

export function encodeCompact(revision: number, physical: boolean): Buffer[] {
  return new Writer().number(1, revision).flag(2, physical).finish();
}

/** The revision of a CompactionResponse (its header is all it holds). */
export function decodeCompact(buf: Buffer): number {
  const r = new Reader(buf);
  let revision = 0;
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 1 && wire === 2) revision = header(sub(r));
    else r.skip(wire);
  }
  return revision;
}

/** A LeaseGrantRequest for a lease of `ttlSeconds`, its ID chosen by etcd. */
export function encodeLeaseGrant(ttlSeconds: number): Buffer[] {
  return new Writer().number(1, ttlSeconds).finish();
}

export interface LeaseGrantResponse {
  /** All 64 bits, in decimal (as a put's lease is written). */
  id: string;
  ttlSeconds: number;
  /** etcd's refusal, when it gave one in the answer rather than as the call's status. */
  error: string;
}

export function decodeLeaseGrant(buf: Buffer): LeaseGrantResponse {
  const r = new Reader(buf);
  const res: LeaseGrantResponse = { id: '0', ttlSeconds: 0, error: '' };
  while (!r.done) {
    const { field, wireType: wire } = r.tag();
    if (field === 2 && wire === 0) res.id = BigInt.asIntN(64, r.varint64()).toString();
    else if (field === 3 && wire === 0) res.ttlSeconds = r.int64();
    else if (field === 4 && wire === 2) res.error = r.string();
    else r.skip(wire);
  }
  return res;
}
