// The connections to an etcd cluster (grpc.ts) and the
// translations the etcd backend shares: keys under a prefix, revisions, and
// gRPC failures as StorageErrors.

import { KeyValue, StorageError, tooLargeMessage } from '../backend.js';
import { EtcdGrpc } from './grpc.js';
import { deadlineExceeded, EtcdCallError } from './grpc-call.js';
import type { EtcdKv } from './proto.js';

export interface EtcdConnectionOptions {
  /** Client URLs (http:// or https://) of the members. */
  endpoints: string[];
  /** PEM bytes: the CA that signed the members' certificates, and a client certificate and key. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Deadline of each call; a call past it fails with 'Timeout'. */
  requestTimeoutMs: number;
}

/** Whether calls go over TLS: a CA or a client certificate was given. */
const isSecure = (tls: EtcdConnectionOptions['tls']): tls is NonNullable<EtcdConnectionOptions['tls']> =>
  tls !== undefined && (tls.ca !== undefined || tls.cert !== undefined);

/**
 * The members' connections, with the credentials. An endpoint that is an IP
 * address is dialled without a TLS server name (Node refuses one that is an
 * address) and its certificate is checked against the address.
 */
export function connect(options: EtcdConnectionOptions): EtcdGrpc {
  const { tls } = options;
  return new EtcdGrpc(options.endpoints, isSecure(tls) ? { ca: tls.ca, cert: tls.cert, key: tls.key } : undefined);
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

  /** A KeyValue decoded by proto.ts. */
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

const unsentPatterns = /No connection established|Stream refused|ECONNREFUSED|etcdserver: no leader|etcdserver: not capable|etcdserver: too many requests|Name resolution failed/i;
const ambiguousPatterns = /leader changed|request timed out|Connection dropped|ECONNRESET|RST_STREAM|Call cancelled|connection reset|socket hang up|14 UNAVAILABLE/i;

const pastDeadline = (err: unknown) => err instanceof EtcdCallError && err.code === deadlineExceeded;

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
