// The Backend interface: a small key-value store with etcd v3 semantics.
// One global revision counter; every write bumps it and the written key's
// modRevision becomes that revision. Implementations: memory, sqlite (and
// later etcd); all pass the one conformance suite in test/unit/storage.

export interface KeyValue {
  key: string;
  /** The stored bytes (JSON text of the object, as written). */
  value: Buffer;
  /** Revision at which this key was created (since its last deletion). */
  createRevision: number;
  /** Revision of the last write to this key. */
  modRevision: number;
}

export type WatchEventType = 'put' | 'delete';

export interface WatchEvent {
  type: WatchEventType;
  /** For a put, the new value; for a delete, the key with the last value and modRevision = the delete's revision. */
  kv: KeyValue;
  /** The value before this event, when there was one. */
  prevKv?: KeyValue;
  /** Revision of the write that produced this event. */
  revision: number;
}

export interface RangeOptions {
  /** Read as of this revision (0 or absent: current). Below the compacted revision: StorageError 'Compacted'. */
  revision?: number;
  /** Most keys to return; 0 or absent: all. */
  limit?: number;
  /** Start at this key (inclusive), which must lie under the prefix; for paging. */
  startKey?: string;
  /**
   * The caller does not read `count` (it pages through everything): a store
   * may skip counting the keys beyond the page, and `count` is then only a
   * lower bound. Counting them makes reading a root in pages quadratic.
   */
  skipCount?: boolean;
}

export interface RangeResult {
  items: KeyValue[];
  /** The revision the read was served at. */
  revision: number;
  /** True when keys beyond `limit` exist under the prefix at that revision. */
  more: boolean;
  /** Keys under the prefix at that revision from startKey on, including those returned. */
  count: number;
}

export interface WatchOptions {
  /** Deliver events with revision > this. Compacted history: the watch fails with 'Compacted'. */
  afterRevision: number;
  /** Also deliver prevKv on each event. */
  prevKv?: boolean;
}

export interface Watch {
  cancel(): void;
}

export interface WatchHandlers {
  /** Events in revision order; called in order, never concurrently. */
  onEvents(events: WatchEvent[]): void;
  /** The watch ended because of an error (e.g. Compacted); no more events follow. */
  onError(err: StorageError): void;
  /**
   * Every event up to `revision` has been delivered, though none of them was
   * under the prefix (a store shared with other writers tells this; optional).
   */
  onProgress?(revision: number): void;
}

export type StorageErrorCode =
  | 'KeyExists'          // create of a key that exists
  | 'KeyNotFound'        // update/delete of a missing key
  | 'RevisionMismatch'   // guarded write whose expected modRevision is stale
  | 'Compacted'          // read or watch below the compacted revision
  | 'FutureRevision'     // read at a revision the store has not reached
  | 'TooLarge'           // a value over the store's size limit (nothing written)
  | 'Unavailable'        // the store cannot be reached
  | 'Timeout';           // the store did not answer within the request's deadline

/** Most bytes a stored value may have by default: etcd's default request limit (--max-request-bytes, 1.5 MiB). */
export const defaultMaxValueBytes = 1_572_864;

/** What etcd answers a write over its request limit; every store refuses an oversize value with these words. */
export const tooLargeMessage = 'etcdserver: request is too large';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    /** For KeyExists / RevisionMismatch: the current value. */
    readonly current?: KeyValue,
    /** For Compacted / FutureRevision: the revision that bounds the request. */
    readonly revision?: number,
  ) {
    super(message);
  }
}

/** What a store keeps in memory of its recent events for watchers, for the metrics. */
export interface WatchMemory {
  events: number;
  /** About what the events hold: both values' bytes, the keys and the objects around them. */
  bytes: number;
  /** The bound of `bytes` (Infinity: the events are the store's only history, as in memory). */
  limitBytes: number;
}

export interface Backend {
  /** Short name for health checks and metrics, e.g. "sqlite". */
  readonly name: string;

  /** The recent events kept for watchers, when the store keeps them in this process. */
  readonly watchMemory?: WatchMemory;

  /** The latest revision (0 on an empty store). */
  currentRevision(): Promise<number>;

  /**
   * Round trips made so far to learn the current revision, for the metric
   * (a store that keeps its revision in this process makes none).
   */
  readonly revisionReads?: number;

  /** The revision below which history is gone (0: nothing compacted). */
  compactedRevision(): Promise<number>;

  /** Read one key, at the current or an older revision. */
  get(key: string, revision?: number): Promise<KeyValue | undefined>;

  /** Keys beginning with `prefix`, in byte order of the key. */
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;

  /** Create `key` if absent; StorageError 'KeyExists' otherwise. */
  create(key: string, value: Buffer): Promise<KeyValue>;

  /** Replace `key` if its modRevision equals `expectedModRevision`. */
  update(key: string, value: Buffer, expectedModRevision: number): Promise<KeyValue>;

  /**
   * Delete `key`, when given only if its modRevision equals `expectedModRevision`.
   * Resolves to the deleted value with modRevision set to the delete's revision.
   */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;

  /** Events for keys under `prefix` after `options.afterRevision`, then live. */
  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch;

  /** Drop history below `revision` (the latest value of every live key stays). */
  compact(revision: number): Promise<void>;

  /** Throws when the store is not usable; used by health checks. */
  check(): Promise<void>;

  close(): Promise<void>;
}
