// gRPC calls to etcd over node:http2: Range and Txn, which every request
// makes, and the watch stream, which brings every write back. The etcd3
// package's path through @grpc/grpc-js (call objects, interceptors, filters,
// a promise chain and a circuit breaker per call) and its generic protobuf
// decoding cost about half the server CPU of a create on etcd; this path is
// one HTTP/2 stream per call and the hand-written messages of etcd-proto.ts.
// Leases and compaction stay on the etcd3 package.
//
// Members are chosen as the etcd3 package chooses them: a random one per
// call, skipping for a second a member that failed to answer; the watch
// stream uses the same sessions. Failures read as grpc-js words them
// ("14 UNAVAILABLE: ..."), so failureKind and callFailure in etcd-client.ts
// classify both paths alike.

import { ownCopy } from './bytes.js';
import { connect, constants, ClientHttp2Session, ClientHttp2Stream, SecureClientSessionOptions } from 'node:http2';
import {
  decodeRange, decodeTxn, decodeWatchResponse, encodeRange, encodeTxn, encodeWatchRequest,
  RangeRequest, RangeResponse, TxnRequest, TxnResponse, WatchRequest, WatchResponse,
} from './etcd-proto.js';

/** A call that failed: gRPC's status code and grpc-js's wording of it. */
export class EtcdCallError extends Error {
  constructor(readonly code: number, details: string) {
    super(`${code} ${statusNames[code] ?? 'UNKNOWN'}: ${details}`);
  }
}

export const deadlineExceeded = 4;
const unavailable = 14;
const statusNames: Record<number, string> = {
  1: 'CANCELLED', 2: 'UNKNOWN', 3: 'INVALID_ARGUMENT', 4: 'DEADLINE_EXCEEDED', 5: 'NOT_FOUND', 6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED', 8: 'RESOURCE_EXHAUSTED', 9: 'FAILED_PRECONDITION', 10: 'ABORTED', 11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED', 13: 'INTERNAL', 14: 'UNAVAILABLE', 15: 'DATA_LOSS', 16: 'UNAUTHENTICATED',
};

/** How long a member that failed to answer is skipped. */
const skipFailedMs = 1_000;
const keepaliveIntervalMs = 10_000;
const keepaliveTimeoutMs = 5_000;

interface CallHandlers {
  message(buf: Buffer): void;
  ended(err?: EtcdCallError): void;
}

/** An open Watch stream: requests go out as they are written. */
export interface EtcdWatchCall {
  write(req: WatchRequest): void;
  cancel(): void;
}

interface Member {
  url: string;
  session?: ClientHttp2Session;
  /** Whether the current session ever connected (a failure before that sent nothing). */
  connected: boolean;
  failedUntil: number;
  lastFailure?: Error;
  /** Calls open on the session: while there are any, it keeps the process alive. */
  calls: number;
}

export class EtcdGrpc {
  private readonly members: Member[];
  private closed = false;

  constructor(endpoints: string[], private readonly tls: SecureClientSessionOptions | undefined) {
    this.members = endpoints.map((endpoint) => ({
      url: endpoint.includes('://') ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`, connected: false, failedUntil: 0, calls: 0,
    }));
  }

  async range(req: RangeRequest, deadline: number): Promise<RangeResponse> {
    return decodeRange(await this.unary('/etcdserverpb.KV/Range', encodeRange(req), deadline));
  }

  async txn(req: TxnRequest, deadline: number): Promise<TxnResponse> {
    return decodeTxn(await this.unary('/etcdserverpb.KV/Txn', encodeTxn(req), deadline));
  }

  /**
   * A Watch stream on one member: `handlers.response` gets each answer,
   * `handlers.ended` how the stream ended (undefined: etcd closed it cleanly).
   */
  watch(handlers: { response(res: WatchResponse): void; ended(err?: EtcdCallError): void }): EtcdWatchCall {
    const call = this.open('/etcdserverpb.Watch/Watch', undefined, {
      message: (buf) => handlers.response(decodeWatchResponse(buf)),
      ended: handlers.ended,
    });
    return { write: (req) => call.write(encodeWatchRequest(req), false), cancel: () => call.cancel() };
  }

  close(): void {
    this.closed = true;
    for (const member of this.members) member.session?.close();
  }

  /** A member to call: a random one of those not skipped, or the one skipped longest ago when all are. */
  private pick(): Member {
    const now = Date.now();
    const usable = this.members.filter((m) => m.failedUntil <= now);
    if (usable.length > 0) return usable[Math.floor(Math.random() * usable.length)]!;
    return this.members.reduce((a, b) => (a.failedUntil <= b.failedUntil ? a : b));
  }

  private session(member: Member): ClientHttp2Session {
    const open = member.session;
    if (open && !open.closed && !open.destroyed) return open;
    const session = connect(member.url, { ...this.tls, settings: { enablePush: false } });
    member.session = session;
    member.connected = false;
    member.lastFailure = undefined;
    session.once('connect', () => { member.connected = true; });
    // Errors reach the streams; the session is dropped and made again on the next call.
    session.on('error', (err) => this.failed(member, err));
    const forget = () => {
      clearInterval(keepalive);
      if (member.session === session) member.session = undefined;
    };
    session.on('close', forget);
    session.on('goaway', forget);
    // As the etcd3 package's channel: a ping every 10 s, and a member that does not answer one in 5 s is dropped.
    const keepalive = setInterval(() => {
      if (session.closed || session.destroyed || session.connecting) return;
      const timeout = setTimeout(() => session.destroy(new Error('keepalive ping not answered')), keepaliveTimeoutMs);
      if (!session.ping(() => clearTimeout(timeout))) clearTimeout(timeout);
    }, keepaliveIntervalMs);
    keepalive.unref();
    // An idle session does not keep the process alive (a call in progress does, see open).
    member.calls = 0;
    session.unref();
    return session;
  }

  private failed(member: Member, err: Error): void {
    member.failedUntil = Date.now() + skipFailedMs;
    member.lastFailure = err;
  }

  private unary(path: string, message: Buffer[], deadline: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      let answer: Buffer | undefined;
      const call = this.open(path, deadline, {
        message: (buf) => { answer ??= buf; },
        ended: (err) => {
          if (err) reject(err);
          else if (answer) resolve(answer);
          else reject(new EtcdCallError(13, 'an answer without a message'));
        },
      });
      call.write(message, true);
    });
  }

  /** A call on a member's stream: messages framed both ways, the status read from the trailers. */
  private open(path: string, deadline: number | undefined, handlers: CallHandlers): { write(message: Buffer[], last: boolean): void; cancel(): void } {
    let ended = false;
    let release = () => {};
    const end = (err?: EtcdCallError) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      release();
      handlers.ended(err);
    };
    let timer: NodeJS.Timeout | undefined;
    const failedCall = { write: () => undefined, cancel: () => undefined };
    if (this.closed) {
      queueMicrotask(() => end(new EtcdCallError(1, 'the client is closed')));
      return failedCall;
    }
    const headers: Record<string, string> = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' };
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) {
        queueMicrotask(() => end(new EtcdCallError(deadlineExceeded, 'Deadline exceeded before the call was made')));
        return failedCall;
      }
      headers['grpc-timeout'] = `${Math.ceil(left)}m`;
    }
    const member = this.pick();
    const session = this.session(member);
    const wasConnected = member.connected;
    if (member.calls++ === 0) session.ref();
    release = () => {
      if (member.session === session && --member.calls === 0) session.unref();
    };
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(headers);
    } catch (err) {
      this.failed(member, err as Error);
      queueMicrotask(() => end(new EtcdCallError(unavailable, `No connection established: ${(err as Error).message}`)));
      return failedCall;
    }
    if (deadline !== undefined) {
      timer = setTimeout(() => {
        end(new EtcdCallError(deadlineExceeded, 'Deadline exceeded'));
        stream.close(constants.NGHTTP2_CANCEL);
      }, deadline - Date.now());
    }
    let status: number | undefined;
    let details = '';
    let streamError: Error | undefined;
    let pending: Buffer | undefined;
    const readStatus = (h: Record<string, unknown>) => {
      if (h['grpc-status'] === undefined) return;
      status = Number(h['grpc-status']);
      details = decodeURIComponent(String(h['grpc-message'] ?? ''));
    };
    stream.on('response', (h) => {
      const httpStatus = Number(h[':status']);
      if (httpStatus !== 200) status ??= httpStatus === 503 ? unavailable : 2;
      readStatus(h);
    });
    stream.on('trailers', readStatus);
    stream.on('data', (chunk: Buffer) => {
      // Frames: a compression flag, a 4-byte length, the message (etcd does not compress).
      let buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
        const length = buf.readUInt32BE(1);
        if (ended) return;
        try {
          // Copied out: values decoded from it are kept (the watch ring), and a chunk may hold many messages.
          handlers.message(ownCopy(buf.subarray(5, 5 + length)));
        } catch (err) {
          end(new EtcdCallError(13, `an answer that could not be read: ${(err as Error).message}`));
          stream.close(constants.NGHTTP2_CANCEL);
          return;
        }
        buf = buf.subarray(5 + length);
      }
      pending = buf.length > 0 ? buf : undefined;
    });
    stream.on('error', (err) => { streamError = err; }); // the close below says what happened
    stream.on('close', () => {
      if (status === 0) return end();
      if (status !== undefined) {
        if (status === unavailable) this.failed(member, new Error(details));
        return end(new EtcdCallError(status, details || 'no details'));
      }
      // No status: the stream or the connection broke.
      const cause = streamError?.message ?? member.lastFailure?.message ?? `stream closed with code ${stream.rstCode}`;
      this.failed(member, new Error(cause));
      end(new EtcdCallError(unavailable, wasConnected || member.connected ? `Connection dropped: ${cause}` : `No connection established: ${cause}`));
    });
    return {
      write: (message, last) => {
        if (ended || stream.closed) return;
        const prefix = Buffer.allocUnsafe(5);
        prefix[0] = 0;
        prefix.writeUInt32BE(message.reduce((n, part) => n + part.length, 0), 1);
        const framed = Buffer.concat([prefix, ...message]);
        if (last) stream.end(framed);
        else stream.write(framed);
      },
      cancel: () => {
        if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
        end(new EtcdCallError(1, 'Cancelled on client'));
      },
    };
  }
}

