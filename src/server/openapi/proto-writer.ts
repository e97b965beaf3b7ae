// A minimal protocol-buffers writer: enough of the wire format (varints,
// length-delimited fields, doubles) to encode the OpenAPI v2 document.
// proto3 rules: scalar fields at their zero value are left out; repeated
// elements and sub-messages are always written.

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const EMPTY = new Uint8Array(0);

export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private pending: number[] = [];
  private size = 0;

  private flushPending(): void {
    if (this.pending.length > 0) {
      this.chunks.push(Uint8Array.from(this.pending));
      this.pending = [];
    }
  }

  private byte(b: number): void {
    this.pending.push(b);
    this.size += 1;
  }

  private raw(bytes: Uint8Array): void {
    this.flushPending();
    this.chunks.push(bytes);
    this.size += bytes.length;
  }

  /** Unsigned varint of a non-negative safe integer. */
  private varint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`varint out of range: ${n}`);
    while (n >= 0x80) {
      this.byte((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.byte(n);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  string(field: number, value: string | undefined): this {
    if (value) this.bytes(field, Buffer.from(value, 'utf8'));
    return this;
  }

  /** A repeated string field: every element is written, empty ones too. */
  strings(field: number, values: readonly string[] | undefined): this {
    for (const v of values ?? []) this.bytes(field, Buffer.from(v, 'utf8'), true);
    return this;
  }

  bytes(field: number, value: Uint8Array, always = false): this {
    if (value.length === 0 && !always) return this;
    this.tag(field, WIRE_LEN);
    this.varint(value.length);
    this.raw(value);
    return this;
  }

  /** A bool; `always` writes false too (a member of a oneof must be present). */
  bool(field: number, value: boolean | undefined, always = false): this {
    if (value || always) {
      this.tag(field, WIRE_VARINT);
      this.byte(value ? 1 : 0);
    }
    return this;
  }

  /** int64 field; negative values (two's complement, ten bytes) never occur in a schema. */
  int64(field: number, value: number | undefined): this {
    if (value) {
      this.tag(field, WIRE_VARINT);
      this.varint(value);
    }
    return this;
  }

  double(field: number, value: number | undefined): this {
    if (value) {
      this.tag(field, WIRE_FIXED64);
      const b = Buffer.alloc(8);
      b.writeDoubleLE(value);
      this.raw(b);
    }
    return this;
  }

  /**
   * A sub-message, written even when empty (its presence can matter, e.g. in a
   * oneof). Built in place: a slot is kept for the tag and length, which are
   * known only once the body is written, so nothing is copied per level.
   */
  message(field: number, build: (w: ProtoWriter) => void): this {
    this.flushPending();
    const slot = this.chunks.length;
    this.chunks.push(EMPTY);
    const start = this.size;
    build(this);
    this.flushPending();
    const length = this.size - start;
    const header = new ProtoWriter();
    header.tag(field, WIRE_LEN);
    header.varint(length);
    const bytes = header.finish();
    this.chunks[slot] = bytes;
    this.size += bytes.length;
    return this;
  }

  finish(): Buffer {
    this.flushPending();
    return Buffer.concat(this.chunks, this.size);
  }
}
