// A Backend held in memory: per key the list of its versions, a sorted key
// list for ranges, and the watch hub's ring as the global event log (kept
// whole until compaction). Used by tests and by servers run without a disk.
// Values are copied on write; what reads return is shared, so callers must
// not modify the buffers they get.

import {
  Backend, defaultMaxValueBytes, KeyValue, RangeOptions, RangeResult, StorageError, Watch, WatchHandlers, WatchOptions,
} from '../backend.js';
import { compareKeys, rangeStart } from '../keys.js';
import { closedError, readRevision } from '../revisions.js';
import { WatchHub } from '../watch-hub.js';
import { ownedWrite, planWrite, validMaxValueBytes, WriteOp } from '../write-plan.js';

export interface MemoryBackendOptions {
  /** Most bytes a stored value may have (default: etcd's 1.5 MiB). */
  maxValueBytes?: number;
}

/** One write to a key; a deletion keeps the last value with the delete's revision. */
interface Version {
  kv: KeyValue;
  deleted: boolean;
}

export class MemoryBackend implements Backend {
  readonly name = 'memory';
  private revision = 0;
  private compacted = 0;
  /** Versions of each key in revision order. */
  private readonly versions = new Map<string, Version[]>();
  /** Every key of `versions`, in byte order. */
  private sortedKeys: string[] = [];
  private readonly hub = new WatchHub({
    head: 0,
    compactedRevision: () => this.compacted,
    ringLimit: Infinity,
  });
  private closed = false;
  private readonly maxValueBytes: number;

  constructor(options: MemoryBackendOptions = {}) {
    this.maxValueBytes = validMaxValueBytes(options.maxValueBytes ?? defaultMaxValueBytes);
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
    return this.valueAt(key, readRevision(revision, this.revision, this.compacted));
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    this.ensureOpen();
    const revision = readRevision(options.revision, this.revision, this.compacted);
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const items: KeyValue[] = [];
    let count = 0;
    // Keys under a prefix are contiguous in byte order.
    for (let i = lowerBound(this.sortedKeys, rangeStart(prefix, options.startKey)); i < this.sortedKeys.length; i++) {
      const key = this.sortedKeys[i]!;
      if (!key.startsWith(prefix)) break;
      const kv = this.valueAt(key, revision);
      if (!kv) continue;
      count++;
      if (items.length < limit) items.push(kv);
    }
    return { items, revision, more: count > items.length, count };
  }

  create(key: string, value: Buffer): Promise<KeyValue> {
    return this.write({ kind: 'create', key, value });
  }

  update(key: string, value: Buffer, expectedModRevision: number): Promise<KeyValue> {
    return this.write({ kind: 'update', key, value, expectedModRevision });
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.write({ kind: 'delete', key, expectedModRevision });
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    return this.hub.watch(prefix, options, handlers);
  }

  async compact(revision: number): Promise<void> {
    this.ensureOpen();
    if (revision > this.revision) {
      throw new StorageError('FutureRevision', `cannot compact at ${revision}, beyond the current revision ${this.revision}`, undefined, this.revision);
    }
    if (revision <= this.compacted) return;
    this.compacted = revision;
    let removedKeys = false;
    for (const [key, list] of this.versions) {
      // Keep the newest version at or below `revision` (the state there) and all later ones.
      let keepFrom = 0;
      while (keepFrom + 1 < list.length && list[keepFrom + 1]!.kv.modRevision <= revision) keepFrom++;
      if (list[keepFrom]!.kv.modRevision <= revision && list[keepFrom]!.deleted) keepFrom++;
      if (keepFrom > 0) list.splice(0, keepFrom);
      if (list.length === 0) {
        this.versions.delete(key);
        removedKeys = true;
      }
    }
    if (removedKeys) this.sortedKeys = this.sortedKeys.filter((key) => this.versions.has(key));
    this.hub.discardThrough(revision);
  }

  async check(): Promise<void> {
    this.ensureOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.close(closedError(this.name));
  }

  private async write(asked: WriteOp): Promise<KeyValue> {
    this.ensureOpen();
    const op = ownedWrite(asked, this.maxValueBytes);
    const plan = planWrite(op, this.valueAt(op.key, this.revision), this.revision + 1);
    this.revision++;
    let list = this.versions.get(op.key);
    if (!list) {
      list = [];
      this.versions.set(op.key, list);
      this.sortedKeys.splice(lowerBound(this.sortedKeys, op.key), 0, op.key);
    }
    list.push(plan.next ? { kv: plan.next, deleted: false } : { kv: plan.result, deleted: true });
    this.hub.publish([plan.event]);
    return plan.result;
  }

  /** The key's value as of `revision`, undefined when absent then. */
  private valueAt(key: string, revision: number): KeyValue | undefined {
    const list = this.versions.get(key);
    if (!list) return undefined;
    // Binary search for the last version at or below `revision`.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.kv.modRevision <= revision) lo = mid + 1;
      else hi = mid;
    }
    const version = list[lo - 1];
    return version && !version.deleted ? version.kv : undefined;
  }

  private ensureOpen(): void {
    if (this.closed) throw closedError(this.name);
  }
}

/** Index of the first key not before `key` in byte order. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
