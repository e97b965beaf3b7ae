// A tiny protocol-buffers reader for the tests: splits a message into fields,
// so the encoded v2 document can be decoded back and compared with its JSON.

export interface Field {
  no: number;
  wire: number;
  /** Varint (as a number), fixed64 (as the 8 bytes) or length-delimited bytes. */
  value: number | Buffer;
}

export function readFields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) { out.push({ no, wire, value: buf.subarray(pos, pos + 8) }); pos += 8; }
    else if (wire === 2) {
      const len = varint();
      if (pos + len > buf.length) throw new Error('truncated field');
      out.push({ no, wire, value: buf.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

/** Every length-delimited value of field `no`. */
export function all(buf: Buffer, no: number): Buffer[] {
  return readFields(buf).filter((f) => f.no === no && f.wire === 2).map((f) => f.value as Buffer);
}

export function one(buf: Buffer, no: number): Buffer | undefined {
  return all(buf, no).at(-1);
}

export function str(buf: Buffer, no: number): string | undefined {
  return one(buf, no)?.toString('utf8');
}

export function strs(buf: Buffer, no: number): string[] {
  return all(buf, no).map((b) => b.toString('utf8'));
}

export function bool(buf: Buffer, no: number): boolean {
  return readFields(buf).some((f) => f.no === no && f.wire === 0 && f.value === 1);
}
