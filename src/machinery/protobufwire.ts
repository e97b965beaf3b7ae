// The protobuf wire format, just as much as the API objects and etcd's
// answers (storage/etcd/proto.ts) need: varints,
// length-delimited fields, and skipping of fields we do not know. Integers are
// written as plain varints (no zigzag: upstream's generated.proto uses int32
// and int64 only), negative values as 10-byte two's complement, as proto does.

export const WireType = {
  varint: 0,
  fixed64: 1,
  lengthDelimited: 2,
  startGroup: 3,
  endGroup: 4,
  fixed32: 5,
} as const;

/** Malformed input; the caller turns it into a 400. Messages follow the upstream decoder's. */
export class ProtobufError extends Error {}

const maxFieldNumber = 2 ** 29 - 1;

export class Writer {
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  tag(field: number, wireType: number): this {
    return this.varint(field * 8 + wireType);
  }

  /** A non-negative integer below 2^53, or any int64 as a bigint (negatives take 10 bytes). */
  varint(value: number | bigint): this {
    if (typeof value === 'number' && value >= 0 && value <= 0xffffffff) {
      this.reserve(5);
      let v = value;
      while (v > 0x7f) {
        this.buf[this.len++] = (v & 0x7f) | 0x80;
        v = Math.floor(v / 128);
      }
      this.buf[this.len++] = v;
      return this;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    this.reserve(10);
    while (v > 0x7fn) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
    return this;
  }

  /** A signed integer as proto's int32/int64 encode it. */
  int(value: number): this {
    return value >= 0 && Number.isSafeInteger(value) ? this.varint(value) : this.varint(BigInt(Math.trunc(value)));
  }

  bytes(data: Uint8Array): this {
    this.varint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
    return this;
  }

  string(text: string): this {
    return this.bytes(Buffer.from(text, 'utf8'));
  }

  double(value: number): this {
    this.reserve(8);
    this.buf.writeDoubleLE(value, this.len);
    this.len += 8;
    return this;
  }

  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.len));
  }
}

export interface Tag {
  field: number;
  wireType: number;
}

export class Reader {
  pos: number;

  constructor(readonly buf: Uint8Array, start = 0, readonly end = buf.length) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** The raw 64-bit varint, unsigned. */
  varint64(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new ProtobufError('proto: unexpected EOF');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    throw new ProtobufError('proto: integer overflow');
  }

  /** A varint used as a size or tag: must fit a safe non-negative number. */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtobufError('proto: unexpected EOF');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (!Number.isSafeInteger(result)) throw new ProtobufError('proto: integer overflow');
        return result;
      }
      scale *= 128;
    }
    throw new ProtobufError('proto: integer overflow');
  }

  int64(): number {
    return Number(BigInt.asIntN(64, this.varint64()));
  }

  int32(): number {
    return Number(BigInt.asIntN(32, this.varint64()));
  }

  bool(): boolean {
    return this.varint64() !== 0n;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new ProtobufError('proto: unexpected EOF');
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, 8).readDoubleLE(0);
    this.pos += 8;
    return v;
  }

  tag(): Tag {
    const key = this.varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (field <= 0 || field > maxFieldNumber) throw new ProtobufError(`proto: illegal tag ${field} (wire type ${wireType})`);
    return { field, wireType };
  }

  /** The payload of a length-delimited field, without copying. */
  bytes(): Uint8Array {
    const n = this.varint();
    if (n > this.end - this.pos) throw new ProtobufError('proto: unexpected EOF');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  string(): string {
    const b = this.bytes();
    return Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8');
  }

  /** Steps over a field of the given wire type (groups included, as the upstream decoder does). */
  skip(wireType: number): void {
    let depth = 0;
    for (;;) {
      switch (wireType) {
        case WireType.varint: this.varint64(); break;
        case WireType.fixed64: this.advance(8); break;
        case WireType.fixed32: this.advance(4); break;
        case WireType.lengthDelimited: this.bytes(); break;
        case WireType.startGroup: depth++; break;
        case WireType.endGroup:
          if (depth === 0) throw new ProtobufError('proto: unexpected end group');
          depth--;
          break;
        default: throw new ProtobufError(`proto: illegal wireType ${wireType}`);
      }
      if (depth === 0) return;
      wireType = this.tag().wireType;
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw new ProtobufError('proto: unexpected EOF');
    this.pos += n;
  }
}
