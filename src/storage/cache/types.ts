// The shapes the watch cache hands to its consumers. The cache deals in keys,
// KeyValues and revisions only; what the bytes mean is the consumer's business.
// Both shapes carry a lazily created `memo` so that consumers can store what
// they derive (the decoded object, its encodings) once and share it between
// every list and every watcher that sees the same value or event; what is
// derived lives in the process's bounded derived cache (derived.ts), not as
// long as the value.

import type { KeyValue, StorageError, Watch } from '../backend.js';
import { ownBytes } from '../bytes.js';
import { derivedCache, Memo } from './derived.js';

/** A list or a watch narrowed to one group of an index (see value-index.ts). */
export interface IndexCondition {
  name: string;
  value: string;
}

/**
 * What a cached value was indexed under, kept in one slot: undefined when no
 * index has seen it; null (in no group) or the group's value for the first
 * index, one array slot per index (undefined: not seen) when there are more.
 * A scalar for the common single index: an array per value cost 48 bytes.
 */
export type IndexValues = string | null | (string | null | undefined)[] | undefined;

/** A stored value as the cache holds it. Never modify `value`: it is shared. */
export class CachedKeyValue implements KeyValue {
  #memo: Memo | undefined;
  /**
   * The values this version is grouped under by its cache's indexes (set by
   * the cache; read through value-index.ts's valueAt): the first index's
   * value itself while only it has seen the version, an array by index
   * position once another has.
   */
  indexValues: IndexValues = undefined;

  constructor(
    readonly key: string,
    readonly value: Buffer,
    readonly createRevision: number,
    readonly modRevision: number,
  ) {}

  /**
   * Per-version scratch space, shared by list/get results and the put event
   * that wrote this version (event.kv), e.g. the decoded object or its bytes.
   */
  get memo(): Memo {
    return (this.#memo ??= derivedCache.memo());
  }
}

/**
 * The cache's own copy of a backend KeyValue: the bytes are shared unless
 * they are a view into a larger allocation (see storage/bytes.ts).
 */
export function cachedKeyValue(kv: KeyValue): CachedKeyValue {
  return kv instanceof CachedKeyValue ? kv : new CachedKeyValue(kv.key, ownBytes(kv.value), kv.createRevision, kv.modRevision);
}

export type CacheEventType = 'put' | 'delete';

/**
 * One change under the cache's root. A put without prevKv created the key
 * (ADDED); a put with prevKv replaced a value (MODIFIED); a delete carries the
 * last value in `kv` (with modRevision = the delete's revision) and in `prevKv`.
 */
export class CacheEvent {
  #memo: Memo | undefined;
  readonly key: string;

  constructor(
    readonly type: CacheEventType,
    readonly kv: CachedKeyValue,
    readonly prevKv: CachedKeyValue | undefined,
    readonly revision: number,
  ) {
    this.key = kv.key;
  }

  /**
   * Per-event scratch space (e.g. the encoded watch frame per media type), so
   * that N watchers share one encoding. Distinct from kv.memo.
   */
  get memo(): Memo {
    return (this.#memo ??= derivedCache.memo());
  }

  /** About what keeping this event in the window holds: both values' bytes (shared or not) and the objects around them. */
  get windowBytes(): number {
    return eventOverheadBytes + this.kv.value.length + this.kv.key.length + (this.prevKv ? this.prevKv.value.length : 0);
  }
}

/** The event, its key-value objects and the window's slot, measured roughly on V8 (the buffers' headers included). */
const eventOverheadBytes = 400;

export interface CacheWatchHandlers {
  /** Events in revision order; called in order, never concurrently, never from inside watch(). */
  onEvents(events: CacheEvent[]): void;
  /** The watch ended ('Compacted', 'Unavailable' for a too slow watcher or a stopped cache); nothing follows. */
  onError(err: StorageError): void;
}

export interface CacheWatchOptions {
  /** Most events that may wait for this watcher (while paused or behind); beyond: 'Unavailable'. Default 10,000. */
  maxBuffered?: number;
  /**
   * Offer only events of objects that had or have this indexed value; the
   * consumer still filters them (the condition only narrows). Ignored when
   * the cache keeps no such index.
   */
  index?: IndexCondition;
}

export interface CacheWatch extends Watch {
  /** Stop handing events over (e.g. the socket's buffer is full); they queue up to maxBuffered. */
  pause(): void;
  /** Hand queued events over again (asynchronously). */
  resume(): void;
  /**
   * The revision a BOOKMARK may carry now: every event of this watch up to it
   * has been handed to onEvents.
   */
  bookmarkRevision(): number;
  /** True when served by a direct backend watch (the revision was older than the cache's window). */
  readonly fromBackend: boolean;
}

export interface CacheListOptions {
  /** First key to return (inclusive); must lie under the prefix. */
  startKey?: string;
  /** Most items to return; 0 or absent: all. */
  limit?: number;
  /** Only the values of one group of an index the cache keeps (see hasIndex). */
  index?: IndexCondition;
}

export interface CacheListResult {
  items: CachedKeyValue[];
  /** The revision the list is consistent at (the cache's revision). */
  revision: number;
  /** True when keys beyond `limit` exist under the prefix. */
  more: boolean;
  /** Keys under the prefix from startKey on, including those returned. */
  count: number;
}

export interface WatchCacheOptions {
  /** How long events stay in the window; default 5 minutes (the compaction interval). */
  historyWindowMs?: number;
  /** Most events in the window; default 100,000. */
  maxEvents?: number;
  /** Most bytes the window's events may hold (CacheEvent.windowBytes); default 32 MiB. */
  maxWindowBytes?: number;
  /** Default maxBuffered of watchers; default 10,000. */
  maxBuffered?: number;
}
