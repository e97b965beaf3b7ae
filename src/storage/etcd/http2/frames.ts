// HTTP/2 framing (RFC 9113, section 4 and 6): the frame types, flags,
// settings and error codes our client uses, frames built as bytes, and a
// reader that cuts the bytes a connection receives into frames.

export const connectionPreface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const frameHeaderLength = 9;

export const FrameType = {
  data: 0, headers: 1, priority: 2, rstStream: 3, settings: 4, pushPromise: 5, ping: 6, goaway: 7, windowUpdate: 8, continuation: 9,
} as const;

export const Flag = { endStream: 0x1, ack: 0x1, endHeaders: 0x4, padded: 0x8, priority: 0x20 } as const;

export const Setting = {
  headerTableSize: 1, enablePush: 2, maxConcurrentStreams: 3, initialWindowSize: 4, maxFrameSize: 5, maxHeaderListSize: 6,
} as const;

export const ErrorCode = {
  noError: 0, protocolError: 1, internalError: 2, flowControlError: 3, settingsTimeout: 4, streamClosed: 5,
  frameSizeError: 6, refusedStream: 7, cancel: 8, compressionError: 9, connectError: 10, enhanceYourCalm: 11,
  inadequateSecurity: 12, http11Required: 13,
} as const;

const errorNames = Object.fromEntries(Object.entries(ErrorCode).map(([name, code]) => [code, name]));
/** An error code as RFC 9113 names it ("REFUSED_STREAM"), or its number. */
export const errorCodeName = (code: number): string =>
  errorNames[code]?.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase() ?? String(code);

/** The largest window and the default ones (RFC 9113, 6.9). */
export const maxWindow = 2 ** 31 - 1;
export const defaultWindow = 65_535;
export const defaultMaxFrameSize = 16_384;
export const maxStreamId = 2 ** 31 - 1;

/** A frame's 9-byte header. */
export function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const b = Buffer.allocUnsafe(frameHeaderLength);
  b[0] = length >>> 16;
  b[1] = (length >>> 8) & 0xff;
  b[2] = length & 0xff;
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(streamId, 5);
  return b;
}

export function settingsFrame(settings: readonly (readonly [id: number, value: number])[], ack = false): Buffer {
  const b = Buffer.allocUnsafe(frameHeaderLength + 6 * settings.length);
  frameHeader(6 * settings.length, FrameType.settings, ack ? Flag.ack : 0, 0).copy(b);
  settings.forEach(([id, value], i) => {
    b.writeUInt16BE(id, frameHeaderLength + 6 * i);
    b.writeUInt32BE(value, frameHeaderLength + 6 * i + 2);
  });
  return b;
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const b = frameHeader(4, FrameType.windowUpdate, 0, streamId);
  return Buffer.concat([b, u32(increment)]);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  return Buffer.concat([frameHeader(4, FrameType.rstStream, 0, streamId), u32(code)]);
}

export function pingFrame(payload: Buffer, ack: boolean): Buffer {
  return Buffer.concat([frameHeader(8, FrameType.ping, ack ? Flag.ack : 0, 0), payload]);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  return Buffer.concat([frameHeader(8, FrameType.goaway, 0, 0), u32(lastStreamId), u32(code)]);
}

const u32 = (n: number) => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n);
  return b;
};

/** A frame as received: its payload shares the received bytes. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

export class FrameError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/**
 * Cuts received bytes into frames. `maxFrameSize` is the largest payload we
 * allow (our SETTINGS_MAX_FRAME_SIZE); a larger one is a FRAME_SIZE_ERROR.
 */
export class FrameReader {
  private pending: Buffer | undefined;

  constructor(private readonly onFrame: (frame: Frame) => void, private readonly maxFrameSize = defaultMaxFrameSize) {}

  /**
   * `chunk` is read now; `volatile`: its memory is reused after this call
   * (a socket's onread buffer), so what is left of it is copied. A frame's
   * payload is valid only while `onFrame` runs.
   */
  push(chunk: Buffer, volatile = false): void {
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      volatile = false;
    }
    this.pending = undefined;
    let at = 0;
    while (buf.length - at >= frameHeaderLength) {
      const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!;
      if (length > this.maxFrameSize) throw new FrameError(ErrorCode.frameSizeError, `a frame of ${length} bytes, above the ${this.maxFrameSize} allowed`);
      const end = at + frameHeaderLength + length;
      if (buf.length < end) break;
      const type = buf[at + 3]!;
      const flags = buf[at + 4]!;
      const streamId = buf.readUInt32BE(at + 5) & maxStreamId;
      this.onFrame({ type, flags, streamId, payload: buf.subarray(at + frameHeaderLength, end) });
      at = end;
    }
    if (at < buf.length) this.pending = volatile ? Buffer.from(buf.subarray(at)) : buf.subarray(at);
  }
}

/** A HEADERS, PUSH_PROMISE or DATA payload without its padding (and, for HEADERS, its priority fields). */
export function unpadded(frame: Frame): Buffer {
  let { payload } = frame;
  let start = 0;
  let end = payload.length;
  if (frame.flags & Flag.padded) {
    if (payload.length < 1) throw new FrameError(ErrorCode.protocolError, 'a padded frame without its pad length');
    start = 1;
    end -= payload[0]!;
  }
  if (frame.type === FrameType.headers && frame.flags & Flag.priority) start += 5;
  if (end < start) throw new FrameError(ErrorCode.protocolError, 'padding longer than the frame');
  if (start !== 0 || end !== payload.length) payload = payload.subarray(start, end);
  return payload;
}
