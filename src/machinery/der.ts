// A minimal DER reader: enough to walk a certificate's TBS fields and a
// certificate request (pure, synchronous: validation runs it).
// Why not the x509 library: loading it costs ~130 ms, and the client
// certificate authenticator needs only a subject and a validity window.

export class DerError extends Error {
  override name = 'DerError';
}

export interface Tlv {
  tag: number;
  /** Offset of the tag byte: the element's whole encoding is [offset, end). */
  offset: number;
  /** Offset of the first content byte. */
  start: number;
  /** Offset just past the last content byte. */
  end: number;
}

export const tags = {
  integer: 0x02,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  t61String: 0x14,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  visibleString: 0x1a,
  universalString: 0x1c,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
  /** `[0]` constructed, context-specific: the TBS version field. */
  context0: 0xa0,
} as const;

/** Reads the element at `offset`; throws if it runs past `limit`. */
export function readTlv(buf: Uint8Array, offset: number, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new DerError('truncated element');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte tags are not supported');
  let length = buf[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new DerError('unsupported length encoding');
    if (start + count > limit) throw new DerError('truncated length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[start + i]!;
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new DerError('element runs past its container');
  return { tag, offset, start, end };
}

/** The direct children of a constructed element. */
export function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end; ) {
    const child = readTlv(buf, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

export function expectTag(element: Tlv | undefined, tag: number, what: string): Tlv {
  if (!element || element.tag !== tag) throw new DerError(`expected ${what}`);
  return element;
}

/** Dotted-decimal form of an OBJECT IDENTIFIER's content. */
export function decodeOid(buf: Uint8Array, element: Tlv): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = element.start; i < element.end; i++) {
    const byte = buf[i]!;
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** Text of any of the string types a Name may use. */
export function decodeString(buf: Uint8Array, element: Tlv): string {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset + element.start, element.end - element.start);
  switch (element.tag) {
    case tags.utf8String:
      return bytes.toString('utf8');
    case tags.printableString:
    case tags.ia5String:
    case tags.visibleString:
    case tags.t61String: // Treated as Latin-1, as most readers do.
      return bytes.toString('latin1');
    case tags.bmpString:
      return Buffer.from(bytes).swap16().toString('utf16le');
    case tags.universalString: {
      let text = '';
      for (let i = 0; i + 3 < bytes.length; i += 4) text += String.fromCodePoint(bytes.readUInt32BE(i));
      return text;
    }
    default:
      throw new DerError(`unsupported string type 0x${element.tag.toString(16)}`);
  }
}

/** UTCTime (two-digit year, RFC 5280 pivot at 1950) or GeneralizedTime. */
export function decodeTime(buf: Uint8Array, element: Tlv): Date {
  const text = Buffer.from(buf.buffer, buf.byteOffset + element.start, element.end - element.start).toString('latin1');
  const match =
    element.tag === tags.utcTime
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?Z$/.exec(text)
      : element.tag === tags.generalizedTime
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(?:\.\d+)?Z$/.exec(text)
        : null;
  if (!match) throw new DerError(`malformed time ${JSON.stringify(text)}`);
  let year = Number(match[1]);
  if (element.tag === tags.utcTime) year += year >= 50 ? 1900 : 2000;
  const [month, day, hour, minute, second] = match.slice(2).map((part) => Number(part ?? 0));
  return new Date(Date.UTC(year, month! - 1, day, hour, minute, second));
}
