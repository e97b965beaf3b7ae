// gRPC calls to etcd: Range and Txn, which every request makes, the watch
// stream, which brings every write back, and the rare Compact and
// LeaseGrant. The etcd3 package's path through @grpc/grpc-js (call objects,
// interceptors, filters, a promise chain and a circuit breaker per call) and
// its generic protobuf decoding cost about half the server CPU of a create on
// etcd, and Node's own HTTP/2 client most of what was left beyond SQLite's;
// this path is one stream of our own HTTP/2 client (http2/connection.ts) per
// call and the hand-written messages of proto.ts, the only client stack
// the server has (docs/perf/ has the measurement that decided it).
//
// Members are chosen as the etcd3 package chose them: a random one per
// call, skipping for a second a member that failed to answer; the watch
// stream uses the same connections. Each call is a GrpcCall
// (grpc-call.ts), whose failures read as grpc-js words them.

import { connect as netConnect, isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsOptions, type TLSSocket } from 'node:tls';
import { Http2Connection } from './http2/connection.js';
import { encodeHeaders, withLiteralField } from './http2/hpack.js';
import { CallHandlers, cancelled, deadlineExceeded, EtcdCallError, failedCall, GrpcCall, OpenCall } from './grpc-call.js';
import {
  decodeCompact, decodeLeaseGrant, decodeRange, decodeTxn, decodeWatchResponse, encodeCompact, encodeLeaseGrant, encodeRange, encodeTxn,
  encodeWatchRequest, LeaseGrantResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse, WatchRequest, WatchResponse,
} from './proto.js';

/** How long a member that failed to answer is skipped. */
const skipFailedMs = 1_000;
const keepaliveIntervalMs = 10_000;
const keepaliveTimeoutMs = 5_000;
const readBufferBytes = 64 * 1024;

/** An open Watch stream: requests go out as they are written. */
export interface EtcdWatchCall {
  write(req: WatchRequest): void;
  cancel(): void;
}

/** PEM bytes of the CA and of a client certificate and key. */
export interface EtcdTlsFiles {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

interface Member {
  url: URL;
  session?: Http2Connection;
  /** Each method's request header block for this member (its :authority and :scheme). */
  headerBlocks: Map<string, Buffer>;
  failedUntil: number;
  lastFailure?: Error;
  /** Calls open on the session: while there are any, it keeps the process alive. */
  calls: number;
}

export class EtcdGrpc {
  private readonly members: Member[];
  private closed = false;

  constructor(endpoints: string[], private readonly tls: EtcdTlsFiles | undefined) {
    this.members = endpoints.map((endpoint) => ({
      url: new URL(endpoint.includes('://') ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`),
      headerBlocks: new Map(), failedUntil: 0, calls: 0,
    }));
  }

  /** How many members calls are spread over. */
  get memberCount(): number {
    return this.members.length;
  }

  async range(req: RangeRequest, deadline: number): Promise<RangeResponse> {
    return decodeRange(await this.unary('/etcdserverpb.KV/Range', encodeRange(req), deadline, true));
  }

  async txn(req: TxnRequest, deadline: number): Promise<TxnResponse> {
    // What a Txn answers is read and dropped (a guard's current value, a put's previous one): no allocation of its own.
    return decodeTxn(await this.unary('/etcdserverpb.KV/Txn', encodeTxn(req), deadline, false));
  }

  /** Compacts etcd's history up to `revision` (not physical: etcd answers before it has freed the space); answers etcd's revision. */
  async compact(revision: number, deadline: number): Promise<number> {
    return decodeCompact(await this.unary('/etcdserverpb.KV/Compact', encodeCompact(revision, false), deadline, false));
  }

  /** A lease of `ttlSeconds`, its ID chosen by etcd. */
  async leaseGrant(ttlSeconds: number, deadline: number): Promise<LeaseGrantResponse> {
    const res = decodeLeaseGrant(await this.unary('/etcdserverpb.Lease/LeaseGrant', encodeLeaseGrant(ttlSeconds), deadline, false));
    if (res.error !== '') throw new EtcdCallError(9, res.error);
    return res;
  }

  /**
   * A Watch stream on one member: `handlers.response` gets each answer,
   * `handlers.ended` how the stream ended (undefined: etcd closed it cleanly).
   */
  watch(handlers: { response(res: WatchResponse): void; ended(err?: EtcdCallError): void }): EtcdWatchCall {
    const call = this.open('/etcdserverpb.Watch/Watch', undefined, true, {
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

  private session(member: Member): Http2Connection {
    const open = member.session;
    if (open?.usable) return open;
    // One that is going away finishes its streams by itself; new calls go on a new connection.
    const { hostname, port, protocol } = member.url;
    const host = hostname.replace(/^\[|\]$/g, '');
    const secure = protocol === 'https:';
    const tcpPort = Number(port || (secure ? 443 : 80));
    // Plain TCP reads into one buffer of the connection's own (onread): no stream machinery and no allocation per read.
    const readBuffer = secure ? undefined : Buffer.allocUnsafeSlow(readBufferBytes);
    const socket = secure
      ? tlsConnect({ ...this.tls as TlsOptions, host, port: tcpPort, servername: isIP(host) ? undefined : host, ALPNProtocols: ['h2'] })
      : netConnect({ host, port: tcpPort, onread: { buffer: readBuffer!, callback: (n) => { session.received(readBuffer!.subarray(0, n), true); return true; } } });
    const keepalive = setInterval(() => {
      // As the etcd3 package's channel did: a ping every 10 s, and a member that does not answer one in 5 s is dropped.
      const timeout = setTimeout(() => session.destroy(new Error('keepalive ping not answered')), keepaliveTimeoutMs);
      session.ping(() => clearTimeout(timeout));
    }, keepaliveIntervalMs);
    keepalive.unref();
    const session: Http2Connection = new Http2Connection(socket, {
      ownerReads: !secure,
      onClose: (err) => {
        clearInterval(keepalive);
        // Errors reach the streams; the session is made again on the next call.
        if (err) this.failed(member, err);
        if (member.session === session) member.session = undefined;
      },
    });
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      if (secure && (socket as TLSSocket).alpnProtocol !== 'h2') {
        session.destroy(new Error(`${member.url.host} did not agree to HTTP/2 over TLS (ALPN h2)`));
        return;
      }
      session.markConnected();
    });
    member.session = session;
    member.lastFailure = undefined;
    // An idle session does not keep the process alive (a call in progress does, see open).
    member.calls = 0;
    session.unref();
    return session;
  }

  private failed(member: Member, err: Error): void {
    member.failedUntil = Date.now() + skipFailedMs;
    member.lastFailure = err;
  }

  /** The request header block of `path` on `member`, built once: :method, :scheme, :path, :authority, content-type, te. */
  private headerBlock(member: Member, path: string): Buffer {
    let block = member.headerBlocks.get(path);
    if (!block) {
      block = encodeHeaders([
        [':method', 'POST'], [':scheme', member.url.protocol === 'https:' ? 'https' : 'http'], [':path', path],
        [':authority', member.url.host], ['content-type', 'application/grpc'], ['te', 'trailers'],
      ]);
      member.headerBlocks.set(path, block);
    }
    return block;
  }

  /** `keep`: values decoded from the answer are kept (each answer gets an allocation of its own, see MessageReader). */
  private unary(path: string, message: Buffer[], deadline: number, keep: boolean): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      let answer: Buffer | undefined;
      const call = this.open(path, deadline, keep, {
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
  private open(path: string, deadline: number | undefined, keep: boolean, handlers: CallHandlers): OpenCall {
    if (this.closed) return failedCall(handlers, new EtcdCallError(cancelled, 'the client is closed'));
    const member = this.pick();
    let block = this.headerBlock(member, path);
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return failedCall(handlers, new EtcdCallError(deadlineExceeded, 'Deadline exceeded before the call was made'));
      block = withLiteralField(block, 'grpc-timeout', `${Math.ceil(left)}m`);
    }
    const session = this.session(member);
    if (member.calls++ === 0) session.ref();
    const call = new GrpcCall(handlers, keep, (err) => this.failed(member, err), () => {
      if (member.session === session && --member.calls === 0) session.unref();
    });
    call.start(session, block, deadline);
    return call;
  }
}
