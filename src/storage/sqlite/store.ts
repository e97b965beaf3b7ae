// A Backend on one SQLite file (WAL). Writes are queued and committed
// together, one transaction per event-loop turn (group commit); each caller's
// guard is checked inside the transaction against the state its predecessors
// in the batch left. The commit only hands the WAL frames to the OS; the WAL
// is then made durable by an fdatasync on libuv's thread pool, so the event
// loop keeps serving while the disk works, and the writes that arrive
// meanwhile wait to be committed together once it is done. Callers get their
// answers, readers see the writes and watchers their events only once the
// writes are durable, in commit order: what can be observed is what survives
// a crash (as with synchronous=FULL, the fallback when the WAL file cannot be
// opened).
// This process is the file's only writer (the file is locked exclusively), so
// watchers are fed in-process after each commit, from memory while the events
// are recent and from the table for older revisions.

import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  Backend, defaultMaxValueBytes, KeyValue, RangeOptions, RangeResult, StorageError, Watch, WatchEvent, WatchHandlers, WatchMemory, WatchOptions,
} from '../backend.js';
import { prefixEnd, rangeStart } from '../keys.js';
import { closedError, readRevision } from '../revisions.js';
import { DriverName, isBusy, openDatabase, SqlDatabase } from './driver.js';
import { HistoryRow, metaKeys, prepareStatements, schema, schemaVersion, Statements, VersionRow } from './schema.js';
import { defaultHubBytes, WatchHub } from '../watch-hub.js';
import { ownedWrite, planWrite, validMaxValueBytes, WritePlan, WriteOp } from '../write-plan.js';

export interface SqliteBackendOptions {
  /** Most bytes a stored value may have (default: etcd's 1.5 MiB). */
  maxValueBytes?: number;
  /** Most bytes the recent events kept in memory for watchers may hold (values and previous values). */
  watchHubBytes?: number;
}

/** Most recent events kept in memory for watchers, whatever their size; older ones are read from the table. */
const ringLimit = 4_096;
/** Revisions swept per compaction transaction, so that writes are not held up long. */
const sweepChunk = 5_000;
/** Bound for the "no upper bound" case: every TEXT sorts below a BLOB. */
const aboveAllText = Buffer.alloc(0);
/** What a tombstone row stores as its value: the deleted value is in its prev_revision row. */
const noValue = Buffer.alloc(0);
/** Range reads of at least this many rows (or unbounded) map the file while they run; shorter ones gain less than the mapping costs. */
const mappedReadRows = 256;
/** How much of the file a long read may map (SQLite maps at most the file's size). */
const mappedReadBytes = 2 ** 34;

interface QueuedWrite {
  op: WriteOp;
  resolve(kv: KeyValue): void;
  reject(err: unknown): void;
}

/** A committed transaction whose callers wait for it to be durable. */
interface CommittedBatch {
  writes: QueuedWrite[];
  outcomes: (WritePlan | StorageError)[];
  events: WatchEvent[];
  /** The latest revision once this batch is applied. */
  revision: number;
}

export class SqliteBackend implements Backend {
  readonly name = 'sqlite';
  private readonly db: SqlDatabase;
  private readonly sql: Statements;
  /** Latest durable revision: what reads are served at and watchers have seen. */
  private revision: number;
  /** Latest revision in the file, durable or not; writes are planned on it. */
  private committed: number;
  /** The WAL file, synced after commits; undefined: every commit syncs itself (synchronous=FULL). */
  private walFd: number | undefined;
  /** A committed batch is on its way to the disk (an fdatasync of the WAL runs). */
  private syncing = false;
  /** Keys that batch wrote: their newest row is not durable yet. */
  private readonly undurable = new Set<string>();
  /** Callers waiting for that batch to be durable. */
  private syncWaiters: (() => void)[] = [];
  /** Set when the WAL could not be synced: nothing written since can be trusted, so the store stops. */
  private failure: StorageError | undefined;
  private compacted: number;
  private readonly hub: WatchHub;
  private queue: QueuedWrite[] = [];
  private flushTimer: NodeJS.Immediate | undefined;
  /** Compactions run one after another. */
  private compaction: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly maxValueBytes: number;

  constructor(readonly path: string, driver?: DriverName, options: SqliteBackendOptions = {}) {
    this.maxValueBytes = validMaxValueBytes(options.maxValueBytes ?? defaultMaxValueBytes);
    mkdirSync(dirname(path), { recursive: true });
    this.db = openDatabase(path, driver);
    try {
      // A short busy timeout: the only other holder would be another server on the same file.
      this.db.exec('PRAGMA busy_timeout = 500');
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = FULL');
      // One writer, this process: hold the lock for the connection's life.
      this.db.exec('PRAGMA locking_mode = EXCLUSIVE');
      this.db.exec('PRAGMA temp_store = MEMORY');
      this.db.exec(schema);
      // Take the write lock now, so a second server on the same file fails at open.
      this.db.exec('BEGIN IMMEDIATE; COMMIT');
      this.sql = prepareStatements(this.db);
      this.initMeta();
      this.revision = this.committed = this.sql.lastRevision.get()!.rev;
      this.compacted = this.readMeta(metaKeys.compacted);
      this.walFd = openWal(`${path}-wal`);
      // We sync the WAL ourselves after each commit (off the event loop); SQLite still syncs around checkpoints.
      if (this.walFd !== undefined) this.db.exec('PRAGMA synchronous = NORMAL');
    } catch (err) {
      if (this.walFd !== undefined) closeSync(this.walFd);
      this.db.close();
      if (isBusy(err)) {
        throw new StorageError('Unavailable', `${path} is locked: another process has the store open`);
      }
      throw err;
    }
    this.hub = new WatchHub({
      head: this.revision,
      compactedRevision: () => this.compacted,
      ringLimit,
      maxBytes: options.watchHubBytes ?? defaultHubBytes,
      readHistory: (prefix, after, upTo, withPrevKv) => this.readHistory(prefix, after, upTo, withPrevKv),
    });
  }

  /** What the recent events kept for watchers hold now, for the metrics. */
  get watchMemory(): WatchMemory {
    return this.hub.memory;
  }

  async currentRevision(): Promise<number> {
    this.ensureOpen();
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    this.ensureOpen();
    return this.compacted;
  }

  async get(key: string, revision?: number): Promise<KeyValue | undefined> {
    this.ensureOpen();
    // A key with a write on its way to the disk: wait for it (about one fsync), so
    // that an update loop reads what its compare-and-swap will be checked against.
    if (this.undurable.has(key)) {
      await this.afterSync();
      this.ensureOpen();
    }
    const at = readRevision(revision, this.revision, this.compacted);
    // The newest row is durable unless the key was written again meanwhile.
    const row = at === this.revision && !this.undurable.has(key) ? this.sql.latest.get(key) : this.sql.atRevision.get(key, at);
    return toLiveValue(key, row);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    this.ensureOpen();
    const revision = readRevision(options.revision, this.revision, this.compacted);
    const bounds = { lower: rangeStart(prefix, options.startKey), upper: prefixEnd(prefix) ?? aboveAllText, revision };
    // SQLite binds a number past 2^53 as a REAL, which LIMIT refuses; no page is that long anyway.
    const limit = options.limit && options.limit > 0 ? Math.min(options.limit, 2 ** 31) : -1;
    // One row past the limit tells whether there is more.
    const page = { ...bounds, limit: limit < 0 ? -1 : limit + 1 };
    const rows = limit < 0 || limit >= mappedReadRows ? this.mapped(() => this.sql.rangePage.all(page)) : this.sql.rangePage.all(page);
    const more = limit >= 0 && rows.length > limit;
    if (more) rows.length = limit;
    const items = rows.map((row): KeyValue => ({
      key: row.name, value: row.value, createRevision: row.create_revision, modRevision: row.id,
    }));
    const count = more && !options.skipCount ? this.sql.rangeCount.get(bounds)!.n : items.length + (more ? 1 : 0);
    return { items, revision, more, count };
  }

  /**
   * Runs a long read with the file memory-mapped: SQLite then reads pages in
   * place instead of copying each through read() into its page cache, which
   * took about 40 % of loading 100,000 objects of 2 KiB at a restart. The
   * mapping is dropped after, because mapped pages count as the process's
   * resident memory and the cache already holds the values once.
   */
  private mapped<T>(read: () => T): T {
    this.db.exec(`PRAGMA mmap_size = ${mappedReadBytes}`);
    try {
      return read();
    } finally {
      this.db.exec('PRAGMA mmap_size = 0');
    }
  }

  create(key: string, value: Buffer): Promise<KeyValue> {
    return this.enqueue({ kind: 'create', key, value });
  }

  update(key: string, value: Buffer, expectedModRevision: number): Promise<KeyValue> {
    return this.enqueue({ kind: 'update', key, value, expectedModRevision });
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.enqueue({ kind: 'delete', key, expectedModRevision });
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    return this.hub.watch(prefix, options, handlers);
  }

  compact(revision: number): Promise<void> {
    const run = this.compaction.then(() => this.compactNow(revision));
    this.compaction = run.catch(() => undefined);
    return run;
  }

  async check(): Promise<void> {
    this.ensureOpen();
    if (this.failure) throw this.failure;
    try {
      this.sql.ping.get();
    } catch (err) {
      throw unavailable('the store does not answer', err);
    }
  }

  /** Commits queued writes and waits for them to be durable, ends watches, and releases the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // What was asked before the close is still written (new writes are refused from here on).
    while (this.syncing || this.queue.length > 0) {
      if (this.syncing) {
        await this.afterSync();
        continue;
      }
      clearImmediate(this.flushTimer);
      this.flush();
    }
    await this.compaction;
    this.hub.close(closedError(this.name));
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.db.close();
  }

  private enqueue(asked: WriteOp): Promise<KeyValue> {
    if (this.closed) return Promise.reject(closedError(this.name));
    if (this.failure) return Promise.reject(this.failure);
    let op: WriteOp;
    try {
      op = ownedWrite(asked, this.maxValueBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<KeyValue>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Writes queue up while a batch is on its way to the disk; they go together once it is there. */
  private scheduleFlush(): void {
    if (!this.syncing && this.queue.length > 0) this.flushTimer ??= setImmediate(() => this.flush());
  }

  /** Apply every queued write in one transaction; each caller is answered once it is durable. */
  private flush(): void {
    this.flushTimer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (this.failure) {
      for (const write of batch) write.reject(this.failure);
      return;
    }
    const outcomes: (WritePlan | StorageError)[] = [];
    let revision = this.committed;
    try {
      this.db.transaction(() => {
        for (const { op } of batch) {
          // Reads inside the transaction see the rows written earlier in the batch.
          const current = toLiveValue(op.key, this.sql.latest.get(op.key));
          let plan: WritePlan;
          try {
            plan = planWrite(op, current, revision + 1);
          } catch (err) {
            outcomes.push(err as StorageError);
            continue;
          }
          revision++;
          this.insertRow(op, plan, revision);
          outcomes.push(plan);
        }
      });
    } catch (err) {
      const failure = unavailable('the write could not be committed', err);
      for (const write of batch) write.reject(failure);
      return;
    }
    this.committed = revision;
    const events: WatchEvent[] = [];
    for (const outcome of outcomes) {
      if (outcome instanceof StorageError) continue;
      events.push(outcome.event);
      this.undurable.add(outcome.event.kv.key);
    }
    const committed: CommittedBatch = { writes: batch, outcomes, events, revision };
    if (this.walFd === undefined) {
      this.settle(committed); // synchronous=FULL: the commit was durable when it returned
      return;
    }
    // One batch on its way to the disk at a time: the sync covers this commit, and
    // what arrives meanwhile is committed after it, in one transaction of its own.
    this.syncing = true;
    fdatasync(this.walFd, (err) => {
      this.syncing = false;
      if (err) this.fail(unavailable('the write-ahead log could not be synced', err), committed);
      else this.settle(committed);
      const waiting = this.syncWaiters;
      this.syncWaiters = [];
      for (const wake of waiting) wake();
      this.scheduleFlush();
    });
  }

  /** A durable batch: readers and watchers see it, its callers get their answers. */
  private settle(b: CommittedBatch): void {
    this.revision = b.revision;
    this.undurable.clear();
    b.writes.forEach((write, i) => {
      const outcome = b.outcomes[i]!;
      if (outcome instanceof StorageError) write.reject(outcome);
      else write.resolve(outcome.result);
    });
    this.hub.publish(b.events);
  }

  /**
   * The WAL could not be made durable: what was written since the last good
   * sync may or may not be on disk, so every caller fails, watches end, and
   * the store refuses further writes until it is opened again.
   */
  private fail(failure: StorageError, b: CommittedBatch): void {
    this.failure = failure;
    for (const write of [...b.writes, ...this.queue]) write.reject(failure);
    this.queue = [];
    this.hub.close(failure);
  }

  /** Resolves when the batch on its way to the disk is there (or failed). */
  private afterSync(): Promise<void> {
    if (!this.syncing) return Promise.resolve();
    return new Promise((wake) => this.syncWaiters.push(wake));
  }

  private insertRow(op: WriteOp, plan: WritePlan, revision: number): void {
    const prev = plan.event.prevKv;
    if (op.kind === 'delete') {
      this.sql.insert.run(revision, op.key, 0, 1, prev!.createRevision, prev!.modRevision, noValue);
    } else {
      this.sql.insert.run(revision, op.key, prev ? 0 : 1, 0, plan.result.createRevision, prev?.modRevision ?? 0, op.value);
    }
  }

  private async compactNow(revision: number): Promise<void> {
    this.ensureOpen();
    if (!Number.isSafeInteger(revision) || revision < 0) {
      throw new TypeError(`compaction revision must be a non-negative integer, got ${revision}`);
    }
    if (revision > this.revision) {
      throw new StorageError('FutureRevision', `cannot compact at ${revision}, beyond the current revision ${this.revision}`, undefined, this.revision);
    }
    if (revision > this.compacted) {
      // Refuse old reads first; the rows go afterwards, a chunk at a time.
      this.sql.setMeta.run(metaKeys.compacted, revision);
      this.compacted = revision;
      this.hub.discardThrough(revision);
    }
    let swept = this.readMeta(metaKeys.swept);
    while (swept < this.compacted && !this.closed) {
      const upTo = Math.min(this.compacted, swept + sweepChunk);
      this.db.transaction(() => {
        this.sql.sweepSuperseded.run({ after: swept, upTo });
        this.sql.sweepTombstones.run({ after: swept, upTo });
        this.sql.setMeta.run(metaKeys.swept, upTo);
      });
      swept = upTo;
      if (swept < this.compacted) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private readHistory(prefix: string, after: number, upTo: number, withPrevKv: boolean): WatchEvent[] {
    const rows = this.sql.history.all({ lower: prefix, upper: prefixEnd(prefix) ?? aboveAllText, after, upTo });
    return rows.map((row) => historyEvent(row, withPrevKv));
  }

  private initMeta(): void {
    const version = this.sql.getMeta.get(metaKeys.schema)?.value;
    if (version === undefined) this.sql.setMeta.run(metaKeys.schema, schemaVersion);
    else if (version !== schemaVersion) {
      throw new Error(`${this.path}: schema version ${version}, this build reads ${schemaVersion}`);
    }
  }

  private readMeta(name: string): number {
    return this.sql.getMeta.get(name)?.value ?? 0;
  }

  private ensureOpen(): void {
    if (this.closed) throw closedError(this.name);
  }
}

/** A descriptor of the WAL file to sync, or undefined when it cannot be opened (then SQLite syncs each commit). */
function openWal(path: string): number | undefined {
  try {
    return openSync(path, 'r+');
  } catch {
    return undefined;
  }
}

/** Open (creating if needed) the store in the file at `path`. */
export function openSqliteBackend(path: string, driver?: DriverName, options?: SqliteBackendOptions): SqliteBackend {
  return new SqliteBackend(path, driver, options);
}

function toLiveValue(key: string, row: VersionRow | undefined): KeyValue | undefined {
  if (!row || row.deleted) return undefined;
  return { key, value: row.value, createRevision: row.create_revision, modRevision: row.id };
}

function historyEvent(row: HistoryRow, withPrevKv: boolean): WatchEvent {
  const prevKv: KeyValue | undefined = row.prev_id === null ? undefined : {
    key: row.name, value: row.prev_value!, createRevision: row.prev_create_revision!, modRevision: row.prev_id,
  };
  if (row.deleted) {
    // A tombstone carries no value: the event shows the deleted value at the delete's revision.
    const kv: KeyValue = { key: row.name, value: prevKv?.value ?? Buffer.alloc(0), createRevision: row.create_revision, modRevision: row.id };
    return withPrevKv && prevKv ? { type: 'delete', kv, prevKv, revision: row.id } : { type: 'delete', kv, revision: row.id };
  }
  const kv: KeyValue = { key: row.name, value: row.value, createRevision: row.create_revision, modRevision: row.id };
  return withPrevKv && prevKv ? { type: 'put', kv, prevKv, revision: row.id } : { type: 'put', kv, revision: row.id };
}

function unavailable(message: string, cause: unknown): StorageError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StorageError('Unavailable', `${message}: ${detail}`);
}
