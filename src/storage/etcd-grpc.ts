// Unary gRPC calls to etcd over node:http2, for the calls every request makes
// (KV.Range and KV.Txn). The etcd3 package's path through @grpc/grpc-js (call
// objects, interceptors, filters, a promise chain and a circuit breaker per
// call) and its generic protobuf decoding cost a create on etcd about twice
// the server CPU of the same create on SQLite; this path is one HTTP/2
// stream and the hand-written messages of etcd-proto.ts. Watches, leases and
// compaction stay on the etcd3 package.
//
// Members are chosen as the etcd3 package chooses them: a random one per
// call, skipping for a second a member that failed to answer. Failures read
// as grpc-js words them ("14 UNAVAILABLE: ..."), so failureKind and
// callFailure in etcd-client.ts classify both paths alike.

import { connect, constants, ClientHttp2Session, ClientHttp2Stream, SecureClientSessionOptions } from 'node:http2';
import {
  decodeRange, decodeTxn, encodeRange, encodeTxn, RangeRequest, RangeResponse, TxnRequest, TxnResponse,
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

interface Member {
  url: string;
  session?: ClientHttp2Session;
  /** Whether the current session ever connected (a failure before that sent nothing). */
  connected: boolean;
  failedUntil: number;
  lastFailure?: Error;
}

export class EtcdGrpc {
  private readonly members: Member[];
  private closed = false;

  constructor(endpoints: string[], private readonly tls: SecureClientSessionOptions | undefined) {
    this.members = endpoints.map((endpoint) => ({
      url: endpoint.includes('://') ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`, connected: false, failedUntil: 0,
    }));
  }

  async range(req: RangeRequest, deadline: number): Promise<RangeResponse> {
    return decodeRange(await this.unary('/etcdserverpb.KV/Range', encodeRange(req), deadline));
  }

  async txn(req: TxnRequest, deadline: number): Promise<TxnResponse> {
    return decodeTxn(await this.unary('/etcdserverpb.KV/Txn', encodeTxn(req), deadline));
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
    session.on('close', () => { if (member.session === session) member.session = undefined; });
    session.on('goaway', () => { if (member.session === session) member.session = undefined; });
    // An idle session does not keep the process alive.
    session.unref();
    return session;
  }

  private failed(member: Member, err: Error): void {
    member.failedUntil = Date.now() + skipFailedMs;
    member.lastFailure = err;
  }

  private unary(path: string, message: Buffer[], deadline: number): Promise<Buffer> {
    if (this.closed) return Promise.reject(new EtcdCallError(1, 'the client is closed'));
    const member = this.pick();
    const session = this.session(member);
    const wasConnected = member.connected;
    return new Promise<Buffer>((resolve, reject) => {
      const left = deadline - Date.now();
      if (left <= 0) {
        reject(new EtcdCallError(deadlineExceeded, 'Deadline exceeded before the call was made'));
        return;
      }
      let stream: ClientHttp2Stream;
      try {
        stream = session.request({
          ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': `${Math.ceil(left)}m`,
        });
      } catch (err) {
        this.failed(member, err as Error);
        reject(new EtcdCallError(unavailable, `No connection established: ${(err as Error).message}`));
        return;
      }
      const chunks: Buffer[] = [];
      let status: number | undefined;
      let details = '';
      let settled = false;
      const timer = setTimeout(() => {
        finish(new EtcdCallError(deadlineExceeded, 'Deadline exceeded'));
        stream.close(constants.NGHTTP2_CANCEL);
      }, left);
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) return reject(err);
        try {
          resolve(unframe(Buffer.concat(chunks)));
        } catch (bad) {
          reject(bad);
        }
      };
      const readStatus = (headers: Record<string, unknown>) => {
        if (headers['grpc-status'] === undefined) return;
        status = Number(headers['grpc-status']);
        details = decodeURIComponent(String(headers['grpc-message'] ?? ''));
      };
      stream.on('response', (headers) => {
        const httpStatus = Number(headers[':status']);
        if (httpStatus !== 200) status ??= httpStatus === 503 ? unavailable : 2;
        readStatus(headers);
      });
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      let streamError: Error | undefined;
      stream.on('error', (err) => { streamError = err; }); // the close below says what happened
      stream.on('close', () => {
        if (status === 0) return finish();
        if (status !== undefined) {
          if (status === unavailable) this.failed(member, new Error(details));
          return finish(new EtcdCallError(status, details || 'no details'));
        }
        // No status: the stream or the connection broke.
        const cause = streamError?.message ?? member.lastFailure?.message ?? `stream closed with code ${stream.rstCode}`;
        this.failed(member, new Error(cause));
        finish(new EtcdCallError(unavailable, wasConnected || member.connected
          ? `Connection dropped: ${cause}`
          : `No connection established: ${cause}`));
      });
      const prefix = Buffer.allocUnsafe(5);
      prefix[0] = 0;
      prefix.writeUInt32BE(message.reduce((n, part) => n + part.length, 0), 1);
      stream.end(Buffer.concat([prefix, ...message]));
    });
  }
}

/** The message of a unary answer: one gRPC frame (uncompressed, as etcd sends). */
function unframe(body: Buffer): Buffer {
  if (body.length < 5) throw new EtcdCallError(13, 'an answer without a message');
  if (body[0] !== 0) throw new EtcdCallError(13, 'a compressed answer, which was not asked for');
  return body.subarray(5, 5 + body.readUInt32BE(1));
}
