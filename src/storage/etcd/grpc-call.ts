// One gRPC call on a stream of our HTTP/2 client (http2/connection.ts): the
// request's messages framed (a compression flag and a 4-byte length), the
// answer's messages cut out, the status read from the trailers, and a
// deadline. Failures read as grpc-js words them ("14 UNAVAILABLE: ..."), the
// words failureKind and callFailure in client.ts classify.

import { ownCopy } from '../bytes.js';
import type { ClientStream, Http2Connection, StreamAbort, StreamHandlers } from './http2/connection.js';
import type { HeaderField } from './http2/hpack.js';

/** A call that failed: gRPC's status code and grpc-js's wording of it. */
export class EtcdCallError extends Error {
  constructor(readonly code: number, details: string) {
    super(`${code} ${statusNames[code] ?? 'UNKNOWN'}: ${details}`);
  }
}

export const cancelled = 1;
export const deadlineExceeded = 4;
const unknown = 2;
const internal = 13;
const unavailable = 14;
const statusNames: Record<number, string> = {
  1: 'CANCELLED', 2: 'UNKNOWN', 3: 'INVALID_ARGUMENT', 4: 'DEADLINE_EXCEEDED', 5: 'NOT_FOUND', 6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED', 8: 'RESOURCE_EXHAUSTED', 9: 'FAILED_PRECONDITION', 10: 'ABORTED', 11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED', 13: 'INTERNAL', 14: 'UNAVAILABLE', 15: 'DATA_LOSS', 16: 'UNAUTHENTICATED',
};

/** What the opener of a call is told: each message of the answer, and how the call ended (undefined: OK). */
export interface CallHandlers {
  message(buf: Buffer): void;
  ended(err?: EtcdCallError): void;
}

/** A call as its opener sees it. */
export interface OpenCall {
  write(message: Buffer[], last: boolean): void;
  cancel(): void;
}

/** A call that failed before it was made: `handlers` are told so after the caller has the call in hand. */
export function failedCall(handlers: CallHandlers, err: EtcdCallError): OpenCall {
  queueMicrotask(() => handlers.ended(err));
  return { write: () => undefined, cancel: () => undefined };
}

/**
 * One gRPC call on an HTTP/2 stream: the messages that come are cut out and
 * handed over, the status is read from the trailers (or from the headers
 * of a trailers-only answer), and a deadline ends it. One object per call,
 * which is also the stream's handlers.
 */
export class GrpcCall implements StreamHandlers, OpenCall {
  private ended = false;
  private status: number | undefined;
  private details = '';
  private timer: NodeJS.Timeout | undefined;
  private stream: ClientStream | undefined;
  private readonly messages: MessageReader;

  constructor(
    private readonly handlers: CallHandlers,
    /** Whether values decoded from the answer are kept (see MessageReader). */
    keep: boolean,
    /** Told when the member failed to answer (it is skipped for a while). */
    private readonly memberFailed: (err: Error) => void,
    /** Called once when the call is over. */
    private readonly release: () => void,
  ) {
    this.messages = new MessageReader(keep, (message) => this.message(message));
  }

  start(session: Http2Connection, headerBlock: Buffer, deadline: number | undefined): void {
    this.stream = session.request(headerBlock, this);
    if (deadline !== undefined) this.timer = setTimeout(() => this.pastDeadline(), deadline - Date.now());
  }

  write(message: Buffer[], last: boolean): void {
    if (this.ended) return;
    const prefix = Buffer.allocUnsafe(5);
    prefix[0] = 0;
    prefix.writeUInt32BE(message.reduce((n, part) => n + part.length, 0), 1);
    this.stream!.send([prefix, ...message], last);
  }

  cancel(): void {
    this.stream!.cancel();
    this.end(new EtcdCallError(cancelled, 'Cancelled on client'));
  }

  onHeaders(fields: HeaderField[], endStream: boolean): void {
    for (const [name, value] of fields) {
      if (name === ':status') {
        if (value !== '200') this.status ??= value === '503' ? unavailable : unknown;
      } else if (name === 'grpc-status') {
        this.status = Number(value);
      } else if (name === 'grpc-message') {
        this.details = percentDecoded(value);
      }
    }
    if (endStream) this.finish();
  }

  onData(payload: Buffer, endStream: boolean): void {
    try {
      this.messages.push(payload);
    } catch (err) {
      if (!(err instanceof EtcdCallError)) throw err;
      this.end(err);
      this.stream!.cancel();
      return;
    }
    if (endStream) this.finish();
  }

  onAbort(abort: StreamAbort): void {
    // Refused (GOAWAY, REFUSED_STREAM): never processed, so another member may take it; otherwise the stream or the connection broke.
    this.memberFailed(new Error(abort.message));
    this.end(new EtcdCallError(unavailable, abort.kind === 'refused' ? abort.message
      : `${abort.connected ? 'Connection dropped' : 'No connection established'}: ${abort.message}`));
  }

  private message(message: Buffer): void {
    if (this.ended) return;
    try {
      this.handlers.message(message);
    } catch (err) {
      this.end(new EtcdCallError(internal, `an answer that could not be read: ${(err as Error).message}`));
      this.stream!.cancel();
    }
  }

  /** The answer is complete: its status says how the call ended. */
  private finish(): void {
    const { status, details } = this;
    if (status === 0) return this.end();
    if (status !== undefined) {
      if (status === unavailable) this.memberFailed(new Error(details));
      return this.end(new EtcdCallError(status, details || 'no details'));
    }
    this.memberFailed(new Error('the stream ended without a status'));
    this.end(new EtcdCallError(unavailable, 'Connection dropped: the stream ended without a status'));
  }

  private pastDeadline(): void {
    this.end(new EtcdCallError(deadlineExceeded, 'Deadline exceeded'));
    this.stream!.cancel();
  }

  private end(err?: EtcdCallError): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.release();
    this.handlers.ended(err);
  }
}

/** grpc-message is percent-encoded; one that is not valid is shown as it came. */
function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The largest message an answer may carry: etcd's Go client's default
 * (2^31 - 1 bytes, which upstream's API server keeps), far above what a
 * watch replay or a list of a large store carries; a peer that announces
 * more is refused before its bytes are gathered.
 */
export const maxReceiveMessageBytes = 2 ** 31 - 1;
const resourceExhausted = 8;

function checkedLength(length: number): number {
  if (length > maxReceiveMessageBytes) {
    throw new EtcdCallError(resourceExhausted, `grpc: received message larger than max (${length} vs. ${maxReceiveMessageBytes})`);
  }
  return length;
}

/**
 * Cuts gRPC's messages out of DATA payloads, which are valid only during
 * the call, so each message is handed over as a copy. With `keep`, the copy
 * is an allocation of its own: values decoded from it are kept (the watch
 * ring, the cache), and a small Buffer.from copy is a slice of Node's shared
 * pool, which a kept slice keeps whole (bytes.ts). A message over several
 * payloads is gathered in parts and joined once.
 */
class MessageReader {
  private parts: Buffer[] = [];
  private have = 0;
  private readonly copy: (bytes: Buffer) => Buffer;

  constructor(keep: boolean, private readonly onMessage: (message: Buffer) => void) {
    this.copy = keep ? ownCopy : (bytes) => Buffer.from(bytes);
  }

  push(chunk: Buffer): void {
    if (this.have > 0) {
      this.parts.push(ownCopy(chunk));
      this.have += chunk.length;
      if (this.have < 5) return;
      if (this.parts[0]!.length < 5) this.parts = [this.joined()];
      if (this.have < 5 + checkedLength(this.parts[0]!.readUInt32BE(1))) return;
      chunk = this.joined();
      this.parts = [];
      this.have = 0;
    }
    let at = 0;
    while (chunk.length - at >= 5) {
      const end = at + 5 + checkedLength(chunk.readUInt32BE(at + 1));
      if (end > chunk.length) break;
      this.onMessage(this.copy(chunk.subarray(at + 5, end)));
      at = end;
    }
    if (at < chunk.length) {
      this.parts.push(ownCopy(chunk.subarray(at)));
      this.have = chunk.length - at;
    }
  }

  private joined(): Buffer {
    const all = Buffer.allocUnsafeSlow(this.have);
    let at = 0;
    for (const part of this.parts) {
      all.set(part, at);
      at += part.length;
    }
    return all;
  }
}
