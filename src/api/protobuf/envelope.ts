// The binary envelope around every protobuf object: four magic bytes, then a
// runtime `Unknown` message {typeMeta=1 {apiVersion=1, kind=2}, raw=2,
// contentEncoding=3, contentType=4} whose raw field holds the object itself.

import { ProtobufError, Reader, WireType, Writer } from '../../machinery/protobufwire.js';

/** "k8s\0": the prefix upstream clients check before decoding. */
export const envelopeMagic: Readonly<Buffer> = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export interface Envelope {
  apiVersion: string;
  kind: string;
  /** The serialized object. */
  raw: Uint8Array;
  /** Empty means no encoding. */
  contentEncoding: string;
  /** Empty means the protobuf media type. */
  contentType: string;
}

export function hasEnvelopeMagic(buf: Uint8Array): boolean {
  return buf.length >= envelopeMagic.length && envelopeMagic.every((b, i) => buf[i] === b);
}

export function decodeEnvelope(buf: Uint8Array): Envelope {
  if (!hasEnvelopeMagic(buf)) {
    throw new ProtobufError(`provided data does not appear to be a protobuf message, expected prefix [${[...envelopeMagic].join(' ')}]`);
  }
  const out: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  const r = new Reader(buf, envelopeMagic.length);
  while (!r.done) {
    const { field, wireType } = r.tag();
    if (field >= 1 && field <= 4 && wireType !== WireType.lengthDelimited) {
      throw new ProtobufError(`proto: wrong wireType = ${wireType} for field ${['typeMeta', 'raw', 'contentEncoding', 'contentType'][field - 1]}`);
    }
    switch (field) {
      case 1: readTypeMeta(r.bytes(), out); break;
      case 2: out.raw = r.bytes(); break;
      case 3: out.contentEncoding = r.string(); break;
      case 4: out.contentType = r.string(); break;
      default: r.skip(wireType);
    }
  }
  return out;
}

function readTypeMeta(bytes: Uint8Array, out: Envelope): void {
  const r = new Reader(bytes);
  while (!r.done) {
    const { field, wireType } = r.tag();
    if ((field === 1 || field === 2) && wireType !== WireType.lengthDelimited) {
      throw new ProtobufError(`proto: wrong wireType = ${wireType} for field ${field === 1 ? 'apiVersion' : 'kind'}`);
    }
    if (field === 1) out.apiVersion = r.string();
    else if (field === 2) out.kind = r.string();
    else r.skip(wireType);
  }
}

/** Upstream writes every field of the envelope, the empty encoding and type included. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = new Writer()
    .tag(1, WireType.lengthDelimited).string(apiVersion)
    .tag(2, WireType.lengthDelimited).string(kind)
    .finish();
  const body = new Writer()
    .tag(1, WireType.lengthDelimited).bytes(typeMeta)
    .tag(2, WireType.lengthDelimited).bytes(raw)
    .tag(3, WireType.lengthDelimited).string('')
    .tag(4, WireType.lengthDelimited).string('')
    .finish();
  return Buffer.concat([envelopeMagic, body]);
}
