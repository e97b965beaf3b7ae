// A Backend on an etcd v3 cluster, as upstream stores objects: guarded
// writes are transactions comparing the key's mod revision, reads are
// linearizable ranges (optionally at a revision, with a limit), watches run
// on one watch stream (watch.ts), and compaction asks etcd to compact.
// Several servers may share the cluster; each learns the others' writes
// through its watches and the others' compactions from etcd's answers.

import { ownCopy } from '../bytes.js';
import {
  Backend, defaultMaxValueBytes, KeyValue, RangeOptions, RangeResult, StorageError, Watch, WatchHandlers, WatchMemory, WatchOptions,
} from '../backend.js';
import {
  callFailure, connect, failureKind, EtcdConnectionOptions, isCompactedError, isFutureRevisionError, EtcdCodec,
} from './client.js';
import type { EtcdGrpc } from './grpc.js';
import { deadlineExceeded, EtcdCallError } from './grpc-call.js';
import type { Compare, RangeRequest, RangeResponse, RequestOp, TxnResponse } from './proto.js';
import { EtcdWatches } from './watch.js';
import { ExpiringPrefix, LeaseManager } from './leases.js';
import { rangeStart } from '../keys.js';
import { closedError } from '../revisions.js';
import { defaultHubBytes } from '../watch-hub.js';
import { checkValueSize, validMaxValueBytes } from '../write-plan.js';

export interface EtcdBackendOptions extends EtcdConnectionOptions {
  /** Prepended to every key in etcd ('' keeps the keys as the other backends write them). */
  keyPrefix?: string;
  /** Keys that etcd deletes a while after their last write (Events). */
  expiring?: ExpiringPrefix[];
  /** Backend revision = etcd revision - this; 0 (the default) keeps etcd's revisions (see EtcdCodec). */
  revisionOffset?: number;
  /** Most bytes a stored value may have (default: etcd's own default request limit, 1.5 MiB). */
  maxValueBytes?: number;
  /** Most bytes the recent events kept in memory for watchers may hold (values and previous values). */
  watchHubBytes?: number;
}

/** A key no object uses, read by health checks and to learn the head revision. */
const probeKey = '/\u0000health';
const healthTimeoutMs = 2_000;
/** Longest a write waits for etcd to confirm the watches made just before it. */
const watchConfirmWaitMs = 500;
/** Pauses between attempts of a call that failed on its way (a member down, an election under way). */
const retryDelaysMs = [20, 50, 100, 200, 400, 800, 1600];

/** The longest the first caller after a quiet spell waits for others to share its read of the head. */
const maxGatherMs = 2;

export class EtcdBackend implements Backend {
  readonly name = 'etcd';
  /** Every call to etcd (grpc.ts). */
  private readonly grpc: EtcdGrpc;
  private readonly codec: EtcdCodec;
  private readonly watches: EtcdWatches;
  /** The highest compacted revision known to this process. */
  private compacted = 0;
  /** Writes to one key run one after another, in call order. */
  private readonly keyChains = new Map<string, Promise<unknown>>();
  private closed = false;
  private readonly requestTimeoutMs: number;
  private readonly leases: LeaseManager;
  /** Callers of currentRevision waiting for the next read of the head, and whether one is on its way. */
  private headWaiters: { resolve(revision: number): void; reject(err: unknown): void }[] = [];
  private headInFlight = false;
  /** The first caller after a quiet spell waits a tick for others (see currentRevision). */
  private gathering = false;
  /** A caller asked since the gathering last looked. */
  private askedLately = false;
  private headReads = 0;
  /** The last failure to reach a member (a member skipped after one fails without saying why). */
  private lastCause: unknown;
  private readonly maxValueBytes: number;

  constructor(options: EtcdBackendOptions) {
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.maxValueBytes = validMaxValueBytes(options.maxValueBytes ?? defaultMaxValueBytes);
    this.grpc = connect(options);
    // A grant may repeat: one whose answer was lost leaves an unused lease, which expires by itself.
    const grant = (ttlSeconds: number) => this.call(async (_, deadline) => (await this.grpc.leaseGrant(ttlSeconds, deadline)).id);
    this.leases = new LeaseManager(grant, options.expiring ?? []);
    this.codec = new EtcdCodec(options.keyPrefix ?? '', options.revisionOffset);
    this.watches = new EtcdWatches(this.grpc, this.codec, () => this.compacted, (revision) => this.learnCompacted(revision),
      (after, through) => this.quietBetween(after, through), options.watchHubBytes ?? defaultHubBytes);
  }

  /** What the ring of recent events kept for watchers holds now, for the metrics. */
  get watchMemory(): WatchMemory {
    return this.watches.memory;
  }

  /**
   * The head, by a linearizable read. Every consistent read of the server
   * asks this, so callers share reads. A read serves only callers that asked
   * before it started (an older read could miss a write finished after it
   * started and before a caller asked). Requests sent together reach the
   * event loop over a millisecond or so (each is decrypted, parsed and
   * authenticated on the one thread first), so the first caller after a
   * quiet spell waits one timer tick (about 1 ms, a fraction of the read
   * itself on etcd) for the others to ask, then a turn of the loop at a
   * time while more still arrive (at most `maxGatherMs` in all). Callers
   * that ask while a read is on its way share the next one, which starts as
   * soon as it is back and the loop has read the sockets that were ready
   * with its answer (no timer: the end of that turn's poll).
   * Progress notifications are not trusted for this (etcd 3.4 may report a
   * revision its watch stream has not delivered yet).
   */
  currentRevision(): Promise<number> {
    if (this.closed) return Promise.reject(closedError(this.name));
    return new Promise<number>((resolve, reject) => {
      this.headWaiters.push({ resolve, reject });
      this.askedLately = true;
      if (this.headInFlight || this.gathering) return;
      this.gathering = true;
      this.askedLately = false;
      const first = performance.now();
      // After the tick, a turn at a time while callers still arrive (the last of a burst), within a bound.
      const look = () => {
        if (this.askedLately && performance.now() - first < maxGatherMs) {
          this.askedLately = false;
          setImmediate(look);
          return;
        }
        this.gathering = false;
        this.readHead();
      };
      // The first look comes after a poll of the sockets that follows the tick: a tick that fell due while
      // the loop was busy runs before the requests that arrived meanwhile are read.
      setTimeout(() => setImmediate(look), 0);
    });
  }

  /** Linearizable reads of the head made so far (for the revision-read metric). */
  get revisionReads(): number {
    return this.headReads;
  }

  private readHead(): void {
    const waiters = this.headWaiters;
    this.headWaiters = [];
    this.headInFlight = true;
    this.headReads++;
    this.call((_, deadline) => this.kvRange({ key: this.codec.key(probeKey), countOnly: true }, deadline)).then((res) => {
      const revision = this.codec.fromEtcd(res.revision);
      this.watches.requestProgress(revision);
      for (const waiter of waiters) waiter.resolve(revision);
    }, (err: unknown) => {
      for (const waiter of waiters) waiter.reject(err);
    }).finally(() => {
      this.headInFlight = false;
      if (this.headWaiters.length === 0) return;
      // The next read starts once this turn's poll of the sockets is done: the answer came in the middle of it, and
      // requests read after it in the same poll would otherwise wait for the read after next.
      this.gathering = true;
      setImmediate(() => {
        this.gathering = false;
        this.readHead();
      });
    });
  }

  /** The highest compaction this process made or learned of (from etcd's refusals, or another server's watch errors). */
  async compactedRevision(): Promise<number> {
    this.ensureOpen();
    return this.compacted;
  }

  /**
   * etcd does not tell its compacted revision directly: a watch from its
   * first revision is refused with it (on etcd's next sync, within 100 ms).
   */
  private async probeCompacted(): Promise<number> {
    const learned = await new Promise<number>((resolve) => {
      const probe = this.watches.watchEtcd(probeKey, { afterRevision: 0 }, {
        onEvents: () => undefined,
        onError: (err) => resolve(err.code === 'Compacted' ? err.revision ?? this.compacted : this.compacted),
      });
      setTimeout(() => { probe.cancel(); resolve(this.compacted); }, 300).unref();
    });
    this.learnCompacted(learned);
    return this.compacted;
  }

  async get(key: string, revision?: number): Promise<KeyValue | undefined> {
    this.ensureOpen();
    const at = checkRevision(revision);
    const res = await this.read((deadline) => this.kvRange({ key: this.codec.key(key), revision: at === undefined ? undefined : this.codec.toEtcd(at) }, deadline));
    const kv = res.kvs[0];
    return kv ? this.codec.fromKv(kv) : undefined;
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    this.ensureOpen();
    const at = checkRevision(options.revision);
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const bounds = this.codec.range(prefix, rangeStart(prefix, options.startKey));
    const res = await this.read((deadline) => this.kvRange({ key: bounds.key, rangeEnd: bounds.range_end, revision: at === undefined ? undefined : this.codec.toEtcd(at), limit }, deadline));
    return {
      items: res.kvs.map((kv) => this.codec.fromKv(kv)),
      revision: at ?? this.codec.fromEtcd(res.revision),
      more: res.more,
      count: res.count,
    };
  }

  create(key: string, value: Buffer): Promise<KeyValue> {
    try {
      checkValueSize({ kind: 'create', key, value }, this.maxValueBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    const copy = ownCopy(value);
    return this.write(key, async () => {
      const etcdKey = this.codec.key(key);
      const lease = await this.leases.leaseFor(key);
      return this.call(async (afterAmbiguous, deadline) => {
        const res = await this.txn(
          [{ key: etcdKey, target: 'create', result: 'equal', against: 0 }],
          [{ put: { key: etcdKey, value: copy, lease } }],
          etcdKey,
          deadline,
        );
        if (!res.succeeded) {
          const current = this.current(res);
          // An attempt whose answer was lost went through: the key holds exactly what we wrote.
          if (afterAmbiguous && current?.value.equals(copy)) return { ...current, value: copy };
          throw new StorageError('KeyExists', `${key} already exists`, current);
        }
        const revision = this.codec.fromEtcd(res.revision);
        return { key, value: copy, createRevision: revision, modRevision: revision };
      }, false, true);
    });
  }

  update(key: string, value: Buffer, expectedModRevision: number): Promise<KeyValue> {
    try {
      checkValueSize({ kind: 'update', key, value, expectedModRevision }, this.maxValueBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    const copy = ownCopy(value);
    return this.write(key, async () => {
      const etcdKey = this.codec.key(key);
      const lease = await this.leases.leaseFor(key);
      return this.call(async (afterAmbiguous, deadline) => {
        const res = await this.txn(
          [{ key: etcdKey, target: 'mod', result: 'equal', against: this.codec.toEtcd(expectedModRevision) }],
          [{ put: { key: etcdKey, value: copy, prevKv: true, lease } }],
          etcdKey,
          deadline,
        );
        if (!res.succeeded) {
          const current = this.current(res);
          if (afterAmbiguous && current?.value.equals(copy)) return { ...current, value: copy };
          throw this.guardFailure(key, res);
        }
        const prev = res.responses[0]?.prevKvs?.[0];
        const revision = this.codec.fromEtcd(res.revision);
        return { key, value: copy, createRevision: prev ? this.codec.fromEtcd(prev.createRevision) : revision, modRevision: revision };
      }, false, true);
    });
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.write(key, async () => {
      const etcdKey = this.codec.key(key);
      const guard: Compare[] = expectedModRevision === undefined
        ? [{ key: etcdKey, target: 'version', result: 'greater', against: 0 }]
        : [{ key: etcdKey, target: 'mod', result: 'equal', against: this.codec.toEtcd(expectedModRevision) }];
      // A delete cannot tell its own lost success from another's: it repeats only unsent attempts.
      const res = await this.call((_, deadline) => this.txn(guard, [{ deleteRange: { key: etcdKey, prevKv: true } }], etcdKey, deadline), false);
      if (!res.succeeded) throw this.guardFailure(key, res);
      const prev = res.responses[0]?.prevKvs?.[0];
      if (!prev) throw new StorageError('KeyNotFound', `${key} not found`);
      return { ...this.codec.fromKv(prev), modRevision: this.codec.fromEtcd(res.revision) };
    });
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    return this.watches.watch(prefix, options, handlers);
  }

  async compact(revision: number): Promise<void> {
    this.ensureOpen();
    if (!Number.isSafeInteger(revision) || revision < 0) {
      throw new TypeError(`compaction revision must be a non-negative integer, got ${revision}`);
    }
    if (revision <= this.compacted) return;
    try {
      await this.call((_, deadline) => this.grpc.compact(this.codec.toEtcd(revision), deadline));
      this.learnCompacted(revision);
    } catch (err) {
      // Already compacted further, by this server or another: nothing to do.
      if (isCompactedError(err)) return;
      if (isFutureRevisionError(err)) {
        const current = await this.currentRevision();
        throw new StorageError('FutureRevision', `cannot compact at ${revision}, beyond the current revision ${current}`, undefined, current);
      }
      throw callFailure(err);
    }
  }

  /** A linearizable read: fails when the cluster has no quorum, within 2 s (as upstream's health check). */
  async check(): Promise<void> {
    this.ensureOpen();
    const deadline = Date.now() + Math.min(healthTimeoutMs, this.requestTimeoutMs);
    // No pauses: a health check answers for this moment. But a member that cannot be reached, or whose
    // connection drops, says only that about itself (the failed call marks it skipped), so the next
    // member is asked at once, as upstream's client balances past a dead endpoint: one member down of
    // three is a healthy cluster. The probe is a read, so asking again changes nothing.
    for (let asked = 1; ; asked++) {
      try {
        await this.grpc.range({ key: this.codec.key(probeKey), countOnly: true }, deadline);
        return;
      } catch (err) {
        if (failureKind(err) === 'final' || asked >= this.grpc.memberCount || Date.now() >= deadline) throw callFailure(err);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.keyChains.values()]);
    this.watches.close(closedError(this.name));
    this.grpc.close();
  }

  /**
   * Whether no key under the store's prefix changed after `after` up to
   * `through`: nothing was modified or created in between, and every key
   * alive at `after` still is. (etcd counts before filtering, so the keys
   * themselves are read, without values.)
   */
  private async quietBetween(after: number, through: number): Promise<boolean> {
    const bounds = this.codec.range('');
    // etcd reads revision 0 as "now"; before its first write, at 1, nothing existed either.
    const from = Math.max(1, this.codec.toEtcd(after));
    const to = this.codec.toEtcd(through);
    const range = { key: bounds.key, rangeEnd: bounds.range_end };
    const [changed, before, kept] = await Promise.all([
      this.kvRange({ ...range, revision: to, keysOnly: true, minModRevision: from + 1 }),
      this.kvRange({ ...range, revision: from, countOnly: true }),
      this.kvRange({ ...range, revision: to, keysOnly: true, maxCreateRevision: from }),
    ]);
    return changed.kvs.length === 0 && kept.kvs.length === before.count;
  }

  private learnCompacted(revision: number): void {
    if (revision > this.compacted) this.compacted = revision;
  }

  /**
   * Runs `run`, again after a pause when a member failed or the cluster was
   * electing a leader. A failure that may have been applied is retried only
   * when the call is `repeatable` (a read) or recognises its own effect (a
   * write told `afterAmbiguous`, which then finds its own bytes in place).
   * Such a call gives each attempt a third of the request's time (`run`'s
   * `deadline`): a write a follower forwarded to a leader that just died is
   * lost, and etcd would answer it only after its own request timeout, while
   * a second attempt a moment later reaches the new leader.
   */
  private async call<T>(run: (afterAmbiguous: boolean, deadline: number) => Promise<T>, repeatable = true, recognisesOwnEffect = false): Promise<T> {
    let ambiguous = false;
    // A member skipped after failing says only that; the failure that made it skipped says why.
    let cause: unknown;
    const started = Date.now();
    const requestDeadline = started + this.requestTimeoutMs;
    const retriesAmbiguous = repeatable || recognisesOwnEffect;
    for (let attempt = 0; ; attempt++) {
      const deadline = retriesAmbiguous ? Math.min(requestDeadline, Date.now() + this.requestTimeoutMs / 3) : requestDeadline;
      try {
        return await run(ambiguous, deadline);
      } catch (err) {
        const attemptTimedOut = err instanceof EtcdCallError && err.code === deadlineExceeded && deadline < requestDeadline;
        const kind = attemptTimedOut ? 'ambiguous' : failureKind(err);
        cause = err;
        if (kind !== 'final') this.lastCause = err;
        const delay = retryDelaysMs[attempt];
        const mayRetry = kind === 'unsent' || (kind === 'ambiguous' && retriesAmbiguous);
        // Retries stay well inside the request's deadline.
        if (!mayRetry || delay === undefined || this.closed || Date.now() - started + delay > this.requestTimeoutMs / 2) throw callFailure(cause ?? this.lastCause ?? err);
        if (kind === 'ambiguous') ambiguous = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** A read at a revision: etcd's refusals become Compacted and FutureRevision with their bounds. */
  private async read(run: (deadline: number) => Promise<RangeResponse>): Promise<RangeResponse> {
    try {
      return await this.call((_, deadline) => run(deadline));
    } catch (err) {
      if (isCompactedError(err)) {
        const compacted = await this.probeCompacted();
        throw new StorageError('Compacted', `the requested revision has been compacted (compacted revision ${compacted})`, undefined, compacted);
      }
      if (isFutureRevisionError(err)) {
        const current = await this.currentRevision();
        throw new StorageError('FutureRevision', `the requested revision is newer than the current revision ${current}`, undefined, current);
      }
      throw callFailure(err);
    }
  }

  /** A guarded write; when the guard fails, the key's current value is read in the same transaction. */
  private txn(compare: Compare[], success: RequestOp[], key: Buffer, deadline: number): Promise<TxnResponse> {
    return this.grpc.txn({ compare, success, failure: [{ range: { key } }] }, deadline);
  }

  /** A Range by `deadline` (by default within the request's time). */
  private kvRange(req: RangeRequest, deadline = Date.now() + this.requestTimeoutMs): Promise<RangeResponse> {
    return this.grpc.range(req, deadline);
  }

  private current(res: TxnResponse): KeyValue | undefined {
    const kv = res.responses[0]?.range?.kvs[0];
    return kv ? this.codec.fromKv(kv) : undefined;
  }

  private guardFailure(key: string, res: TxnResponse): StorageError {
    const current = this.current(res);
    if (!current) return new StorageError('KeyNotFound', `${key} not found`);
    return new StorageError('RevisionMismatch', `${key} has mod revision ${current.modRevision}`, current);
  }

  /** Runs `op` after the writes to `key` called before it (and after etcd confirmed the watches made before it). */
  private write(key: string, op: () => Promise<KeyValue>): Promise<KeyValue> {
    if (this.closed) return Promise.reject(closedError(this.name));
    if (this.watches.confirming) {
      const confirmed = this.watches.confirmed(watchConfirmWaitMs);
      const run = op;
      op = () => confirmed.then(run);
    }
    const before = this.keyChains.get(key);
    const run = before ? before.then(op, op) : op();
    const settled = run.catch(() => undefined);
    this.keyChains.set(key, settled);
    void settled.then(() => {
      if (this.keyChains.get(key) === settled) this.keyChains.delete(key);
    });
    return run;
  }

  private ensureOpen(): void {
    if (this.closed) throw closedError(this.name);
  }
}

/** The revision to read at; undefined reads the current one. */
function checkRevision(revision: number | undefined): number | undefined {
  if (revision === undefined || revision === 0) return undefined;
  if (!Number.isSafeInteger(revision) || revision < 0) {
    throw new TypeError(`revision must be a non-negative integer, got ${revision}`);
  }
  return revision;
}
