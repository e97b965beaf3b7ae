// HPACK (RFC 7541) for our HTTP/2 client: a full decoder for the header
// blocks a server sends (static table, dynamic table with its size updates,
// Huffman strings), and the few encodings a request needs. Requests never
// touch the server's dynamic table: fields go as static-table references or
// as literals without indexing, so the encoder keeps no state and a method's
// header block can be built once.

import { decodeHuffman } from './huffman.js';

/** The static table (RFC 7541, Appendix A): index i + 1 is staticTable[i]. */
const staticTable: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];

/** Bytes an entry counts for in the dynamic table's size: its name, its value and 32 (RFC 7541, 4.1). */
const entryOverhead = 32;

export class HpackError extends Error {}

/** A header field as decoded: lower-case name, value (latin1, as the bytes came). */
export type HeaderField = [name: string, value: string];

/**
 * Decodes header blocks in the order the connection carries them (each
 * block changes the dynamic table the next one reads). `maxTableSize` is our
 * SETTINGS_HEADER_TABLE_SIZE: the most the peer may size the table to.
 */
export class HpackDecoder {
  /** Newest first: dynamic index 62 is entries[0]. */
  private entries: HeaderField[] = [];
  private size = 0;
  private tableSize: number;

  constructor(private readonly maxTableSize = 4096) {
    this.tableSize = maxTableSize;
  }

  /** The dynamic table now, newest first, and its size in RFC 7541 bytes (for tests). */
  get table(): { entries: readonly HeaderField[]; size: number } {
    return { entries: this.entries, size: this.size };
  }

  decode(block: Uint8Array): HeaderField[] {
    const fields: HeaderField[] = [];
    const at = { i: 0 };
    let sawField = false;
    while (at.i < block.length) {
      const byte = block[at.i]!;
      if (byte & 0x80) {
        // Indexed field.
        fields.push(this.field(integer(block, at, 7)));
        sawField = true;
      } else if (byte & 0x40) {
        // Literal with incremental indexing: added to the table.
        const field = this.literal(block, at, 6);
        this.add(field);
        fields.push(field);
        sawField = true;
      } else if (byte & 0x20) {
        // Dynamic table size update: only at the start of a block.
        if (sawField) throw new HpackError('HPACK: a table size update after a header field');
        const size = integer(block, at, 5);
        if (size > this.maxTableSize) throw new HpackError(`HPACK: a table size of ${size} above the ${this.maxTableSize} allowed`);
        this.tableSize = size;
        this.evict(0);
      } else {
        // Literal without indexing (0000) or never indexed (0001): the table is left alone.
        fields.push(this.literal(block, at, 4));
        sawField = true;
      }
    }
    return fields;
  }

  private field(index: number): HeaderField {
    if (index === 0) throw new HpackError('HPACK: index 0');
    if (index <= staticTable.length) return staticTable[index - 1] as HeaderField;
    const entry = this.entries[index - staticTable.length - 1];
    if (!entry) throw new HpackError(`HPACK: index ${index} is past the table`);
    return entry;
  }

  private literal(block: Uint8Array, at: { i: number }, prefixBits: number): HeaderField {
    const index = integer(block, at, prefixBits);
    const name = index === 0 ? string(block, at) : this.field(index)[0];
    return [name, string(block, at)];
  }

  private add(field: HeaderField): void {
    const size = field[0].length + field[1].length + entryOverhead;
    // An entry larger than the table empties it and is not added (RFC 7541, 4.4).
    this.evict(size);
    if (size <= this.tableSize) {
      this.entries.unshift(field);
      this.size += size;
    }
  }

  /** Drops the oldest entries until `room` more bytes fit (or the table is empty). */
  private evict(room: number): void {
    while (this.entries.length > 0 && this.size + room > this.tableSize) {
      const [name, value] = this.entries.pop()!;
      this.size -= name.length + value.length + entryOverhead;
    }
  }
}

/** An integer with an N-bit prefix (RFC 7541, 5.1), read from `at.i` on. */
function integer(block: Uint8Array, at: { i: number }, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  let value = block[at.i++]! & max;
  if (value < max) return value;
  let shift = 0;
  for (;;) {
    if (at.i >= block.length) throw new HpackError('HPACK: a truncated integer');
    const byte = block[at.i++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return value;
    if (shift > 28) throw new HpackError('HPACK: an integer too large');
  }
}

/** A string literal (RFC 7541, 5.2): Huffman-coded or as is; bytes read as latin1. */
function string(block: Uint8Array, at: { i: number }): string {
  if (at.i >= block.length) throw new HpackError('HPACK: a truncated string');
  const huffman = (block[at.i]! & 0x80) !== 0;
  const length = integer(block, at, 7);
  const end = at.i + length;
  if (end > block.length) throw new HpackError('HPACK: a truncated string');
  const bytes = block.subarray(at.i, end);
  at.i = end;
  if (huffman) {
    try {
      return decodeHuffman(bytes);
    } catch (err) {
      throw new HpackError((err as Error).message);
    }
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
}

/** An integer with an N-bit prefix whose other bits are `flags`. */
function encodeInteger(value: number, prefixBits: number, flags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [flags | value];
  const out = [flags | max];
  value -= max;
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
  return out;
}

/**
 * The header block of `fields` as a request sends it: a field the static
 * table holds whole is its index, one whose name it holds is a literal
 * without indexing naming that index, any other a literal without indexing
 * with its name. No Huffman coding.
 */
export function encodeHeaders(fields: readonly HeaderField[]): Buffer {
  const out: number[] = [];
  const literal = (s: string) => {
    const bytes = Buffer.from(s, 'latin1');
    out.push(...encodeInteger(bytes.length, 7, 0), ...bytes);
  };
  for (const [name, value] of fields) {
    const whole = staticTable.findIndex(([n, v]) => n === name && v === value);
    if (whole >= 0) {
      out.push(...encodeInteger(whole + 1, 7, 0x80));
      continue;
    }
    const named = staticTable.findIndex(([n]) => n === name);
    out.push(...encodeInteger(named + 1, 4, 0));
    if (named < 0) literal(name);
    literal(value);
  }
  return Buffer.from(out);
}

/**
 * `block` with one more field appended as a literal without indexing with
 * its name (a per-call field such as grpc-timeout), in one allocation.
 * Name and value are short ASCII (under 127 bytes each).
 */
export function withLiteralField(block: Buffer, name: string, value: string): Buffer {
  if (name.length > 126 || value.length > 126) throw new RangeError('withLiteralField takes names and values under 127 bytes');
  const out = Buffer.allocUnsafe(block.length + 3 + name.length + value.length);
  block.copy(out);
  let at = block.length;
  out[at++] = 0;
  out[at++] = name.length;
  at += out.write(name, at, 'latin1');
  out[at++] = value.length;
  out.write(value, at, 'latin1');
  return out;
}
