// The connections to an etcd cluster (the etcd3 package over gRPC for leases
// and compaction, etcd-grpc.ts for reads, writes and watches) and the
// translations the etcd backend shares: keys under a prefix, revisions, and
// gRPC failures as StorageErrors.

import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type { Etcd3 } from 'etcd3';
import { circuitBreaker, ConsecutiveBreaker, handleWhen, noop } from 'cockatiel';
import { KeyValue, StorageError, tooLargeMessage } from './backend.js';
import { EtcdGrpc } from './etcd-grpc.js';
import { deadlineExceeded, EtcdCallError } from './etcd-grpc-call.js';
import type { EtcdKv } from './etcd-proto.js';

export interface EtcdConnectionOptions {
  /** Client URLs (http:// or https://) of the members. */
  endpoints: string[];
  /** PEM bytes: the CA that signed the members' certificates, and a client certificate and key. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Deadline of each call; a call past it fails with 'Timeout'. */
  requestTimeoutMs: number;
}

type Etcd3Module = typeof import('etcd3');
let loaded: Etcd3Module | undefined;
/**
 * The etcd3 package (gRPC and its protocol files), loaded at the first
 * connection: it costs ~90 ms of start-up that a server on the embedded
 * store never needs.
 */
export function etcd3(): Etcd3Module {
  loaded ??= createRequire(import.meta.url)('etcd3') as Etcd3Module;
  return loaded;
}

/** Whether calls go over TLS: a CA or a client certificate was given. */
const isSecure = (tls: EtcdConnectionOptions['tls']): tls is NonNullable<EtcdConnectionOptions['tls']> =>
  tls !== undefined && (tls.ca !== undefined || tls.cert !== undefined);

export function connect(options: EtcdConnectionOptions): Etcd3 {
  const { tls } = options;
  const secure = isSecure(tls);
  if (secure) refuseAddressesAsServerNames(options.endpoints);
  const { Etcd3, isRecoverableError } = etcd3();
  return new Etcd3({
    hosts: options.endpoints,
    credentials: secure ? { rootCertificate: tls.ca ?? Buffer.alloc(0), privateKey: tls.key, certChain: tls.cert } : undefined,
    // No blanket retries: a write whose answer was lost may have been applied.
    // A member that fails is skipped for a second, so the next call tries another.
    faultHandling: {
      global: noop,
      host: () => circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(1) }),
    },
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + options.requestTimeoutMs }),
    grpcOptions: {
      // Watch replays batch up to a thousand revisions: no 4 MiB ceiling (as upstream's client).
      'grpc.max_receive_message_length': -1,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
    },
  });
}

/** The calls every request makes (Range, Txn), to the same members with the same credentials. */
export function connectHotCalls(options: EtcdConnectionOptions): EtcdGrpc {
  const { tls } = options;
  return new EtcdGrpc(options.endpoints, isSecure(tls) ? { ca: tls.ca, cert: tls.cert, key: tls.key } : undefined);
}

/**
 * gRPC sends each endpoint's host as the TLS server name, and from Node 26 on
 * TLS refuses an IP address there (RFC 6066; Node 20 and 24 only warn), so a
 * TLS connection to an address could never be made: said at once, instead of
 * a store that stays unavailable.
 */
function refuseAddressesAsServerNames(endpoints: string[]): void {
  if (Number(process.versions.node.split('.')[0]) < 26) return;
  for (const endpoint of endpoints) {
    const host = new URL(endpoint.includes('://') ? endpoint : `https://${endpoint}`).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      throw new StorageError('Unavailable', `${endpoint}: over TLS on Node ${process.versions.node} an etcd endpoint must name a host ` +
        'its certificate carries (such as https://localhost:2379), not an IP address: gRPC sends the host as the TLS server name, ' +
        'which Node 26 and later refuse for IP addresses');
    }
  }
}

/**
 * Maps Backend keys to etcd keys under `prefix` and back, and revisions:
 * a Backend revision is the etcd revision less `revisionOffset`. The server
 * uses 0 (resourceVersions are etcd revisions, as upstream). A new etcd is
 * at revision 1 before its first write; an offset of 1 makes it start at 0,
 * as every other store does (the shared conformance suite runs that way).
 */
export class EtcdCodec {
  private readonly prefix: Buffer;

  constructor(prefix: string, private readonly revisionOffset = 0) {
    this.prefix = Buffer.from(prefix);
  }

  toEtcd(revision: number): number {
    return revision + this.revisionOffset;
  }

  fromEtcd(revision: string | number): number {
    return Number(revision) - this.revisionOffset;
  }

  key(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key)]);
  }

  /** [start, end) of the etcd keys whose Backend key begins with `prefix`. */
  range(prefix: string, start?: string): { key: Buffer; range_end: Buffer } {
    const from = this.key(start ?? prefix);
    // etcd wants a key: "\0" is the lowest there is.
    return { key: from.length > 0 ? from : Buffer.from([0]), range_end: byteSuccessor(this.key(prefix)) };
  }

  /** The Backend key of an etcd key (which lies under the prefix, since every request does). */
  unkey(key: Buffer): string {
    return key.subarray(this.prefix.length).toString();
  }

  /** A KeyValue decoded by etcd-proto.ts. */
  fromKv(kv: EtcdKv): KeyValue {
    return { key: this.unkey(kv.key), value: kv.value, createRevision: this.fromEtcd(kv.createRevision), modRevision: this.fromEtcd(kv.modRevision) };
  }
}

/** The smallest key above every key that starts with `prefix`; "\0" (no bound) for an unbounded prefix. */
function byteSuccessor(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

export const isCompactedError = (err: unknown): boolean => /required revision has been compacted/.test(String((err as Error)?.message));
export const isFutureRevisionError = (err: unknown): boolean => /required revision is a future revision/.test(String((err as Error)?.message));

/**
 * How a failed call may be retried: 'unsent' never reached a member that
 * could act on it (safe to repeat), 'ambiguous' may have been applied (a
 * read may repeat; a write only if it can recognise its own effect), and
 * 'final' will fail the same way again.
 */
export type FailureKind = 'unsent' | 'ambiguous' | 'final';

const unsentPatterns = /No connection established|Stream refused|ECONNREFUSED|circuit breaker is open|etcdserver: no leader|etcdserver: not capable|etcdserver: too many requests|Name resolution failed/i;
const ambiguousPatterns = /leader changed|request timed out|Connection dropped|ECONNRESET|RST_STREAM|Call cancelled|connection reset|socket hang up|14 UNAVAILABLE/i;

/** Whether `err` is a deadline error of either path (the etcd3 package's only once it is loaded). */
const pastDeadline = (err: unknown) => (err instanceof EtcdCallError && err.code === deadlineExceeded)
  || (loaded !== undefined && err instanceof loaded.GRPCDeadlineExceededError);

export function failureKind(err: unknown): FailureKind {
  if (err instanceof StorageError || pastDeadline(err)) return 'final';
  const message = err instanceof Error ? err.message : String(err);
  if (unsentPatterns.test(message)) return 'unsent';
  if (ambiguousPatterns.test(message)) return 'ambiguous';
  return 'final';
}

/** A failed call as a StorageError: 'Timeout' past the deadline, 'Unavailable' otherwise. */
export function callFailure(err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // Over etcd's --max-request-bytes (or gRPC's receive limit just above it): the same refusal as our own limit's.
  if (/request is too large|message larger than max/i.test(message)) return new StorageError('TooLarge', tooLargeMessage);
  if (pastDeadline(err) || /deadline exceeded|request timed out/i.test(message)) {
    return new StorageError('Timeout', `etcd did not answer in time: ${message}`);
  }
  return new StorageError('Unavailable', `etcd is unavailable: ${message}`);
}
