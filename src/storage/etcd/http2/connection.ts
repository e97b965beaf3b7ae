// One HTTP/2 client connection (RFC 9113) on a socket we opened: plain TCP
// (h2c with prior knowledge, as etcd serves http:// URLs) or TLS with ALPN
// h2. It does what a gRPC client needs and no more: streams we open (no
// server push), HEADERS with CONTINUATION, DATA both ways with connection
// and stream flow control, SETTINGS, PING, RST_STREAM and GOAWAY. Node's own
// HTTP/2 client costs about 80 µs of CPU per call (a stream object, an
// AsyncResource and its bind per request); a stream here is a small object
// and a frame is a few bytes appended to the next write.
//
// The owner sees each stream through StreamHandlers, and the connection's
// end through `onClose`. Everything written in one turn of the event loop
// leaves in one socket write.

import type { Socket } from 'node:net';
import {
  connectionPreface, defaultMaxFrameSize, defaultWindow, ErrorCode, errorCodeName, Flag, Frame, FrameError, frameHeader,
  FrameReader, FrameType, goawayFrame, maxStreamId, maxWindow, pingFrame, rstStreamFrame, Setting,
  settingsFrame, unpadded, windowUpdateFrame,
} from './frames.js';
import { HeaderField, HpackDecoder } from './hpack.js';

/** How a stream ended without the peer ending it: reset by the peer, refused (never processed), or its connection lost. */
export interface StreamAbort {
  kind: 'reset' | 'refused' | 'lost';
  message: string;
  /** Whether the connection was ever established (false: nothing was sent). */
  connected: boolean;
}

export interface StreamHandlers {
  /** A header block: the response headers, then the trailers. */
  onHeaders(fields: HeaderField[], endStream: boolean): void;
  /** DATA: `payload` is valid only during the call (it may share a buffer the next read reuses). */
  onData(payload: Buffer, endStream: boolean): void;
  onAbort(abort: StreamAbort): void;
}

export interface ConnectionOptions {
  /**
   * The owner hands over received bytes itself (`received`), as a socket
   * opened with `onread` does: no 'data' events, and a buffer reused for
   * every read.
   */
  ownerReads?: boolean;
  /** Our receive window per stream and for the connection. */
  streamWindow?: number;
  connectionWindow?: number;
  /** Told once when the connection is gone (`err`: why, when it failed). */
  onClose?: (err?: Error) => void;
  /** Most bytes a header block may have, over its HEADERS and CONTINUATION frames together. */
  maxHeaderBlockBytes?: number;
}

const defaultStreamWindow = 4 * 1024 * 1024;
const defaultConnectionWindow = 16 * 1024 * 1024;
/**
 * etcd's answers carry a few hundred bytes of headers and trailers; this
 * leaves room for a long grpc-message, and a peer that sends more (an
 * endless run of CONTINUATION frames) fails the connection instead of
 * filling memory.
 */
export const defaultMaxHeaderBlockBytes = 64 * 1024;
/**
 * Answers to the peer's PINGs and SETTINGS written while the socket has
 * not drained, beyond which the peer is taken to ask without reading (a
 * flood that would fill our write buffer): as Go's HTTP/2 bounds its queued
 * control frames.
 */
const maxUnreadAcks = 10_000;

export class ClientStream {
  id = 0;
  /** What we may still send (the peer's window for this stream). */
  sendWindow: number;
  /** DATA bytes received since our last WINDOW_UPDATE for the stream. */
  unacked = 0;
  /** DATA waiting for window: bytes and whether they end the stream. */
  queued: { bytes: Buffer; end: boolean }[] = [];
  localEnded = false;
  remoteEnded = false;
  done = false;

  constructor(readonly connection: Http2Connection, readonly handlers: StreamHandlers, readonly headerBlock: Buffer, sendWindow: number) {
    this.sendWindow = sendWindow;
  }

  /** Sends `parts` as DATA (cut to the peer's frame size and windows); `end` half-closes the stream. */
  send(parts: readonly Buffer[], end: boolean): void {
    if (this.done || this.localEnded) return;
    this.localEnded = end;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.queued.push({ bytes, end });
    this.connection.flushStream(this);
  }

  /** Ends the stream at once (RST_STREAM CANCEL); no handler is called after this. */
  cancel(): void {
    this.connection.cancel(this);
  }
}

export class Http2Connection {
  private readonly streams = new Map<number, ClientStream>();
  /** Streams waiting for the peer's limit on concurrent streams. */
  private readonly waiting: ClientStream[] = [];
  private nextStreamId = 1;
  private readonly reader: FrameReader;
  private readonly decoder = new HpackDecoder();
  /** Frames to write at the end of this tick. */
  private out: Buffer[] = [];
  private flushScheduled = false;
  /** The header block being received across CONTINUATION frames. */
  private continuing: { streamId: number; parts: Buffer[]; bytes: number; endStream: boolean } | undefined;
  private readonly maxHeaderBlockBytes: number;

  // The peer's settings, and the connection's send window.
  private peerInitialWindow = defaultWindow;
  private peerMaxFrameSize = defaultMaxFrameSize;
  private peerMaxStreams = Infinity;
  private sendWindow = defaultWindow;
  private readonly blocked = new Set<ClientStream>();

  private readonly streamWindow: number;
  private readonly connectionWindow: number;
  private connectionUnacked = 0;

  private connected = false;
  /** Set by GOAWAY (ours or theirs): no new streams. */
  private goingAway = false;
  private closed = false;
  private failure: Error | undefined;
  private readonly pings: (() => void)[] = [];
  /** PING and SETTINGS acknowledgements written since the socket's buffer was last empty. */
  private unreadAcks = 0;

  constructor(private readonly socket: Socket, private readonly options: ConnectionOptions = {}) {
    this.streamWindow = options.streamWindow ?? defaultStreamWindow;
    this.connectionWindow = options.connectionWindow ?? defaultConnectionWindow;
    this.maxHeaderBlockBytes = options.maxHeaderBlockBytes ?? defaultMaxHeaderBlockBytes;
    this.reader = new FrameReader((frame) => this.receive(frame));
    socket.setNoDelay(true);
    if (!options.ownerReads) socket.on('data', (chunk: Buffer) => this.received(chunk, false));
    socket.on('error', (err) => { this.failure ??= err; });
    socket.on('close', () => this.closedSocket());
    socket.on('end', () => socket.end());
    // Our preface: the magic, our settings, and the connection window raised from the default.
    this.write(connectionPreface);
    this.write(settingsFrame([
      [Setting.enablePush, 0], [Setting.initialWindowSize, this.streamWindow], [Setting.maxHeaderListSize, this.maxHeaderBlockBytes],
    ]));
    if (this.connectionWindow > defaultWindow) this.write(windowUpdateFrame(0, this.connectionWindow - defaultWindow));
  }

  /** Bytes read from the socket; `volatile`: their memory is reused once this returns. */
  received(chunk: Buffer, volatile: boolean): void {
    try {
      this.reader.push(chunk, volatile);
    } catch (err) {
      this.fail(err as Error, err instanceof FrameError ? err.code : ErrorCode.protocolError);
    }
  }

  /** Told by the owner once the socket is connected (and TLS is established). */
  markConnected(): void {
    this.connected = true;
  }

  /** Whether new streams may be opened here. */
  get usable(): boolean {
    return !this.closed && !this.goingAway && this.nextStreamId <= maxStreamId;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a stream with the request header block `headerBlock` (END_STREAM is sent with the DATA). */
  request(headerBlock: Buffer, handlers: StreamHandlers): ClientStream {
    const stream = new ClientStream(this, handlers, headerBlock, this.peerInitialWindow);
    if (!this.usable) {
      stream.done = true;
      const abort: StreamAbort = { kind: this.closed ? 'lost' : 'refused', message: this.closed ? this.closedMessage() : 'Stream refused: the connection is going away', connected: this.connected };
      queueMicrotask(() => handlers.onAbort(abort));
      return stream;
    }
    if (this.streams.size >= this.peerMaxStreams) this.waiting.push(stream);
    else this.start(stream);
    return stream;
  }

  /** Sends a PING; `answered` is called when the peer acknowledges it. */
  ping(answered: () => void): void {
    if (this.closed) return;
    this.pings.push(answered);
    this.write(pingFrame(Buffer.alloc(8), false));
  }

  /** Sends GOAWAY and closes once the open streams are done (at once when there are none). */
  close(): void {
    if (this.closed) return;
    if (!this.goingAway) {
      this.goingAway = true;
      this.write(goawayFrame(0, ErrorCode.noError));
    }
    for (const stream of this.waiting.splice(0)) this.abort(stream, { kind: 'refused', message: 'Stream refused: the connection is closing', connected: this.connected });
    if (this.streams.size === 0) this.endSocket();
  }

  /** Closes at once: every open stream is lost with `err`. */
  destroy(err: Error): void {
    this.fail(err, ErrorCode.noError);
  }

  ref(): void {
    this.socket.ref();
  }

  unref(): void {
    this.socket.unref();
  }

  private start(stream: ClientStream): void {
    stream.id = this.nextStreamId;
    this.nextStreamId += 2;
    this.streams.set(stream.id, stream);
    this.writeHeaders(stream);
    if (stream.queued.length > 0) this.flushStream(stream);
  }

  private writeHeaders(stream: ClientStream): void {
    const block = stream.headerBlock;
    const max = this.peerMaxFrameSize;
    if (block.length <= max) {
      this.write(frameHeader(block.length, FrameType.headers, Flag.endHeaders, stream.id), block);
      return;
    }
    for (let at = 0; at < block.length; at += max) {
      const part = block.subarray(at, at + max);
      const last = at + max >= block.length;
      this.write(frameHeader(part.length, at === 0 ? FrameType.headers : FrameType.continuation, last ? Flag.endHeaders : 0, stream.id), part);
    }
  }

  /** Writes what the windows allow of a stream's queued DATA. */
  flushStream(stream: ClientStream): void {
    if (stream.id === 0 || stream.done) return; // not started yet: sent when it is
    while (stream.queued.length > 0) {
      const next = stream.queued[0]!;
      const allowed = Math.min(next.bytes.length, this.peerMaxFrameSize, stream.sendWindow, this.sendWindow);
      if (allowed <= 0 && next.bytes.length > 0) {
        this.blocked.add(stream);
        return;
      }
      const chunk = next.bytes.subarray(0, allowed);
      const last = allowed === next.bytes.length;
      if (last) stream.queued.shift();
      else next.bytes = next.bytes.subarray(allowed);
      stream.sendWindow -= allowed;
      this.sendWindow -= allowed;
      this.write(frameHeader(chunk.length, FrameType.data, last && next.end ? Flag.endStream : 0, stream.id), chunk);
    }
    this.blocked.delete(stream);
  }

  cancel(stream: ClientStream): void {
    if (stream.done) return;
    stream.done = true;
    if (stream.id === 0) {
      const i = this.waiting.indexOf(stream);
      if (i >= 0) this.waiting.splice(i, 1);
      return;
    }
    if (!this.closed) this.write(rstStreamFrame(stream.id, ErrorCode.cancel));
    this.forget(stream);
  }

  private forget(stream: ClientStream): void {
    stream.done = true;
    this.streams.delete(stream.id);
    this.blocked.delete(stream);
    while (this.waiting.length > 0 && this.streams.size < this.peerMaxStreams) this.start(this.waiting.shift()!);
    if (this.goingAway && this.streams.size === 0) this.endSocket();
  }

  private abort(stream: ClientStream, abort: StreamAbort): void {
    if (stream.done) return;
    if (stream.id !== 0) this.forget(stream);
    stream.done = true;
    stream.handlers.onAbort(abort);
  }

  private write(...buffers: Buffer[]): void {
    for (const b of buffers) this.out.push(b);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After this turn's I/O callbacks: the calls of every request read in it leave in one write (each write costs a system call).
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const out = this.out;
    this.out = [];
    if (out.length === 0 || this.socket.destroyed) return;
    this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
  }

  private receive(frame: Frame): void {
    if (this.continuing && frame.type !== FrameType.continuation) {
      throw new FrameError(ErrorCode.protocolError, 'a header block interrupted by another frame');
    }
    switch (frame.type) {
      case FrameType.data: return this.receiveData(frame);
      case FrameType.headers: return this.receiveHeaders(frame);
      case FrameType.continuation: return this.receiveContinuation(frame);
      case FrameType.rstStream: return this.receiveReset(frame);
      case FrameType.settings: return this.receiveSettings(frame);
      case FrameType.ping: return this.receivePing(frame);
      case FrameType.goaway: return this.receiveGoaway(frame);
      case FrameType.windowUpdate: return this.receiveWindowUpdate(frame);
      case FrameType.pushPromise: throw new FrameError(ErrorCode.protocolError, 'PUSH_PROMISE, though push is disabled');
      default: return; // PRIORITY and unknown types are ignored
    }
  }

  private receiveData(frame: Frame): void {
    if (frame.streamId === 0) throw new FrameError(ErrorCode.protocolError, 'DATA on stream 0');
    // Flow control counts the whole payload, padding included, whatever became of the stream.
    const size = frame.payload.length;
    this.connectionUnacked += size;
    if (this.connectionUnacked >= this.connectionWindow / 2) {
      this.write(windowUpdateFrame(0, this.connectionUnacked));
      this.connectionUnacked = 0;
    }
    const stream = this.streams.get(frame.streamId);
    if (!stream || stream.remoteEnded) return; // cancelled by us, or a late frame
    const endStream = (frame.flags & Flag.endStream) !== 0;
    if (!endStream) {
      stream.unacked += size;
      if (stream.unacked >= this.streamWindow / 2) {
        this.write(windowUpdateFrame(stream.id, stream.unacked));
        stream.unacked = 0;
      }
    }
    const data = unpadded(frame);
    if (endStream) this.remoteEnd(stream);
    stream.handlers.onData(data, endStream);
  }

  private receiveHeaders(frame: Frame): void {
    if (frame.streamId === 0) throw new FrameError(ErrorCode.protocolError, 'HEADERS on stream 0');
    const block = unpadded(frame);
    const endStream = (frame.flags & Flag.endStream) !== 0;
    this.checkHeaderBlockSize(block.length);
    if (frame.flags & Flag.endHeaders) this.headerBlock(frame.streamId, block, endStream);
    else this.continuing = { streamId: frame.streamId, parts: [Buffer.from(block)], bytes: block.length, endStream }; // kept past this frame: copied
  }

  private receiveContinuation(frame: Frame): void {
    const continuing = this.continuing;
    if (!continuing || continuing.streamId !== frame.streamId) throw new FrameError(ErrorCode.protocolError, 'CONTINUATION without its HEADERS');
    continuing.bytes += frame.payload.length;
    this.checkHeaderBlockSize(continuing.bytes);
    continuing.parts.push(Buffer.from(frame.payload));
    if (frame.flags & Flag.endHeaders) {
      this.continuing = undefined;
      this.headerBlock(continuing.streamId, Buffer.concat(continuing.parts), continuing.endStream);
    }
  }

  /** A header block over the bound fails the connection (as Go's HTTP/2 does, PROTOCOL_ERROR): skipping it would leave the HPACK table wrong for every later block. */
  private checkHeaderBlockSize(bytes: number): void {
    if (bytes > this.maxHeaderBlockBytes) {
      throw new FrameError(ErrorCode.protocolError, `a header block of more than ${this.maxHeaderBlockBytes} bytes`);
    }
  }

  private headerBlock(streamId: number, block: Buffer, endStream: boolean): void {
    let fields: HeaderField[];
    try {
      // Decoded even for a stream we forgot: every block changes the decoder's table.
      fields = this.decoder.decode(block);
    } catch (err) {
      throw new FrameError(ErrorCode.compressionError, (err as Error).message);
    }
    const stream = this.streams.get(streamId);
    if (!stream || stream.remoteEnded) return;
    if (endStream) this.remoteEnd(stream);
    stream.handlers.onHeaders(fields, endStream);
  }

  /** The peer ended the stream: it is over once we have ended our side too (a gRPC answer ends the call: ours is ended with it). */
  private remoteEnd(stream: ClientStream): void {
    stream.remoteEnded = true;
    if (!stream.localEnded && !this.closed) this.write(rstStreamFrame(stream.id, ErrorCode.cancel));
    this.forget(stream);
  }

  private receiveReset(frame: Frame): void {
    if (frame.payload.length !== 4) throw new FrameError(ErrorCode.frameSizeError, 'RST_STREAM of the wrong size');
    const stream = this.streams.get(frame.streamId);
    if (!stream) return;
    const code = frame.payload.readUInt32BE(0);
    const refused = code === ErrorCode.refusedStream;
    this.abort(stream, {
      kind: refused ? 'refused' : 'reset',
      message: refused ? 'Stream refused by server' : `stream reset by the server with code ${code} (${errorCodeName(code)})`,
      connected: true,
    });
  }

  private receiveSettings(frame: Frame): void {
    if (frame.streamId !== 0) throw new FrameError(ErrorCode.protocolError, 'SETTINGS on a stream');
    if (frame.flags & Flag.ack) return;
    const p = frame.payload;
    if (p.length % 6 !== 0) throw new FrameError(ErrorCode.frameSizeError, 'SETTINGS of the wrong size');
    for (let at = 0; at < p.length; at += 6) {
      const id = p.readUInt16BE(at);
      const value = p.readUInt32BE(at + 2);
      if (id === Setting.initialWindowSize) {
        if (value > maxWindow) throw new FrameError(ErrorCode.flowControlError, 'an initial window above 2^31-1');
        // Applies to every open stream's window, by the difference (RFC 9113, 6.9.2).
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) stream.sendWindow += delta;
        for (const stream of this.waiting) stream.sendWindow += delta;
      } else if (id === Setting.maxFrameSize) {
        if (value < defaultMaxFrameSize || value > 2 ** 24 - 1) throw new FrameError(ErrorCode.protocolError, `SETTINGS_MAX_FRAME_SIZE ${value}`);
        this.peerMaxFrameSize = value;
      } else if (id === Setting.maxConcurrentStreams) {
        this.peerMaxStreams = value;
      }
      // HEADER_TABLE_SIZE needs nothing: our requests never use the dynamic table.
    }
    this.acknowledge(settingsFrame([], true));
    this.unblock();
  }

  private receivePing(frame: Frame): void {
    if (frame.payload.length !== 8) throw new FrameError(ErrorCode.frameSizeError, 'PING of the wrong size');
    if (frame.flags & Flag.ack) this.pings.shift()?.();
    else this.acknowledge(pingFrame(Buffer.from(frame.payload), true));
  }

  private acknowledge(frame: Buffer): void {
    if (this.socket.writableLength === 0 && this.out.length === 0) this.unreadAcks = 0;
    if (++this.unreadAcks > maxUnreadAcks) {
      throw new FrameError(ErrorCode.enhanceYourCalm, `more than ${maxUnreadAcks} PING and SETTINGS frames to answer while our answers go unread`);
    }
    this.write(frame);
  }

  private receiveGoaway(frame: Frame): void {
    if (frame.payload.length < 8) throw new FrameError(ErrorCode.frameSizeError, 'GOAWAY too short');
    const lastStreamId = frame.payload.readUInt32BE(0) & maxStreamId;
    const code = frame.payload.readUInt32BE(4);
    const debug = frame.payload.subarray(8).toString('utf8');
    this.goingAway = true;
    // Streams above the last one the peer will process were never processed: another member may take them.
    const refused = [...this.streams.values(), ...this.waiting].filter((s) => s.id === 0 || s.id > lastStreamId);
    this.waiting.length = 0;
    const message = `Stream refused by server: GOAWAY with code ${code} (${errorCodeName(code)})${debug ? `: ${debug}` : ''}`;
    for (const stream of refused) this.abort(stream, { kind: 'refused', message, connected: true });
    if (this.streams.size === 0) this.endSocket();
  }

  private receiveWindowUpdate(frame: Frame): void {
    if (frame.payload.length !== 4) throw new FrameError(ErrorCode.frameSizeError, 'WINDOW_UPDATE of the wrong size');
    const increment = frame.payload.readUInt32BE(0) & maxWindow;
    if (frame.streamId === 0) {
      this.sendWindow += increment;
      if (this.sendWindow > maxWindow) throw new FrameError(ErrorCode.flowControlError, 'the connection window above 2^31-1');
    } else {
      const stream = this.streams.get(frame.streamId);
      if (!stream) return;
      stream.sendWindow += increment;
    }
    this.unblock();
  }

  private unblock(): void {
    for (const stream of [...this.blocked]) {
      if (this.sendWindow <= 0) return;
      this.flushStream(stream);
    }
  }

  /** A connection error: GOAWAY with `code`, and every stream lost. */
  private fail(err: Error, code: number): void {
    if (this.closed) return;
    this.failure ??= err;
    if (!this.socket.destroyed) {
      this.write(goawayFrame(Math.max(0, this.nextStreamId - 2), code));
      this.flush();
    }
    this.socket.destroy();
    this.closedSocket();
  }

  private endSocket(): void {
    this.flush();
    this.socket.end();
  }

  private closedMessage(): string {
    return this.failure?.message ?? 'the connection was closed';
  }

  private closedSocket(): void {
    if (this.closed) return;
    this.closed = true;
    this.goingAway = true;
    const abort: StreamAbort = { kind: 'lost', message: this.closedMessage(), connected: this.connected };
    for (const stream of [...this.streams.values(), ...this.waiting.splice(0)]) this.abort(stream, abort);
    this.options.onClose?.(this.failure);
  }
}
