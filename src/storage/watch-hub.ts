// Fans committed events out to watchers. Each watcher has a cursor (the last
// revision it has been shown); a drain, scheduled with setImmediate after
// every publish, moves each cursor forward. Recent events sit in a ring in
// memory, bounded in count and in bytes (each event holds its value and the
// previous one, so a count alone let large values hold gigabytes); a
// watcher whose cursor is older than the ring reads the backend's history in
// chunks. Delivery happens only from the drain, so handlers are
// never called concurrently nor from inside a write call, and a watcher sees
// every revision once, in order.

import { StorageError, Watch, WatchEvent, WatchHandlers, WatchMemory, WatchOptions } from './backend.js';
import { compactedError } from './revisions.js';

/** Events with revision in (after, upTo] for keys under `prefix`, in revision order. */
export type HistoryReader = (prefix: string, after: number, upTo: number, withPrevKv: boolean) => WatchEvent[];

/** Default bound of the bytes a hub's recent events hold, when its backend can read older ones back (the watch cache's window's default). */
export const defaultHubBytes = 32 * 1024 * 1024;

export interface WatchHubOptions {
  /** The latest revision already written when the hub starts. */
  head: number;
  compactedRevision(): number;
  /** Most events kept in memory; older ones come from `readHistory`. */
  ringLimit: number;
  /** Most bytes the kept events may hold (eventBytes); absent: no bound but the count. */
  maxBytes?: number;
  readHistory?: HistoryReader;
  /** Most revisions a watcher moves through per drain, which bounds a batch. */
  revisionsPerDrain?: number;
}

interface Watcher {
  prefix: string;
  withPrevKv: boolean;
  cursor: number;
  handlers: WatchHandlers;
  active: boolean;
  /** Set when the watch asked for history already compacted when it began. */
  refused?: StorageError;
}

export class WatchHub {
  private readonly ring: WatchEvent[] = [];
  /** Index in `ring` of the oldest kept event (front removal without shifting). */
  private ringOffset = 0;
  private head: number;
  private readonly watchers = new Set<Watcher>();
  private drainTimer: NodeJS.Immediate | undefined;
  private closedWith: StorageError | undefined;
  private readonly revisionsPerDrain: number;
  private readonly maxBytes: number;
  /** Bytes the kept events hold (eventBytes of each). */
  private held = 0;

  constructor(private readonly options: WatchHubOptions) {
    this.head = options.head;
    this.revisionsPerDrain = options.revisionsPerDrain ?? 1000;
    this.maxBytes = options.maxBytes ?? Infinity;
    if (!(this.maxBytes >= 0)) throw new TypeError(`a watch hub bound is a number of bytes, got ${options.maxBytes}`);
  }

  /** Number of watchers still open, for metrics and tests. */
  get size(): number {
    return this.watchers.size;
  }

  get memory(): WatchMemory {
    return { events: this.ring.length - this.ringOffset, bytes: this.held, limitBytes: this.maxBytes };
  }

  /** Revision of the oldest event held in memory (head + 1 when none). */
  private get ringStart(): number {
    return this.head + 1 - (this.ring.length - this.ringOffset);
  }

  /** Record committed events; they must continue the revision sequence. */
  publish(events: readonly WatchEvent[]): void {
    for (const event of events) {
      if (event.revision !== this.head + 1) {
        throw new Error(`watch hub: revision ${event.revision} does not follow ${this.head}`);
      }
      this.ring.push(event);
      this.held += eventBytes(event);
      this.head = event.revision;
    }
    const excess = this.ring.length - this.ringOffset - this.options.ringLimit;
    if (excess > 0) this.dropFront(excess);
    // Oldest first until the bytes fit; a watcher still short of them reads them back from the history.
    let over = this.held - this.maxBytes;
    let n = 0;
    for (let i = this.ringOffset; over > 0 && i < this.ring.length; i++, n++) over -= eventBytes(this.ring[i]!);
    if (n > 0) this.dropFront(n);
    if (events.length > 0) this.schedule();
  }

  /**
   * Forget events at or below `revision` (compaction). Events that a watcher
   * has not been shown yet stay until a later call, so a watch that was
   * current when the compaction came keeps going.
   */
  discardThrough(revision: number): void {
    let through = revision;
    for (const watcher of this.watchers) {
      if (watcher.active && !watcher.refused && watcher.cursor + 1 >= this.ringStart) through = Math.min(through, watcher.cursor);
    }
    const n = Math.min(through - this.ringStart + 1, this.ring.length - this.ringOffset);
    if (n > 0) this.dropFront(n);
    this.schedule();
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    const after = options.afterRevision;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new TypeError(`afterRevision must be a non-negative integer, got ${after}`);
    }
    const watcher: Watcher = { prefix, withPrevKv: options.prevKv === true, cursor: after, handlers, active: true };
    const compacted = this.options.compactedRevision();
    // Decided now: a compaction after this call must not fail a watch that was valid.
    if (after < compacted) watcher.refused = compactedError(after, compacted);
    this.watchers.add(watcher);
    this.schedule();
    return {
      cancel: () => {
        watcher.active = false;
        this.watchers.delete(watcher);
      },
    };
  }

  /** End every watch with `reason` (delivered asynchronously); later watches fail at once. */
  close(reason: StorageError): void {
    this.closedWith = reason;
    this.schedule();
  }

  private dropFront(n: number): void {
    for (let i = this.ringOffset; i < this.ringOffset + n; i++) {
      this.held -= eventBytes(this.ring[i]!);
      // The slot is dead: let the event and its values go now, not at the next reclaim.
      (this.ring as (WatchEvent | undefined)[])[i] = undefined;
    }
    this.ringOffset += n;
    // Reclaim the dead front now and then, not on every drop.
    if (this.ringOffset > 1024 && this.ringOffset * 2 > this.ring.length) {
      this.ring.splice(0, this.ringOffset);
      this.ringOffset = 0;
    }
  }

  private schedule(): void {
    if (this.drainTimer === undefined) this.drainTimer = setImmediate(() => this.drain());
  }

  private drain(): void {
    this.drainTimer = undefined;
    let unfinished = false;
    for (const watcher of [...this.watchers]) {
      if (!watcher.active) continue;
      if (this.closedWith) {
        this.end(watcher, this.closedWith);
        continue;
      }
      if (watcher.refused) {
        this.end(watcher, watcher.refused);
        continue;
      }
      // Behind the compaction and past what memory holds: the rows it needs may be gone.
      const compacted = this.options.compactedRevision();
      if (watcher.cursor < compacted && watcher.cursor + 1 < this.ringStart) {
        this.end(watcher, compactedError(watcher.cursor, compacted));
        continue;
      }
      if (watcher.cursor >= this.head) continue;
      let events: WatchEvent[];
      try {
        events = this.nextChunk(watcher);
      } catch (err) {
        this.end(watcher, asStorageError(err));
        continue;
      }
      if (events.length > 0) this.deliver(watcher, events);
      if (watcher.active && watcher.cursor < this.head) unfinished = true;
    }
    if (unfinished) this.schedule();
  }

  /** The watcher's next events, advancing its cursor over the revisions read. */
  private nextChunk(watcher: Watcher): WatchEvent[] {
    const from = watcher.cursor + 1;
    const ringStart = this.ringStart;
    if (from < ringStart) {
      const upTo = Math.min(ringStart - 1, watcher.cursor + this.revisionsPerDrain);
      const read = this.options.readHistory;
      if (!read) throw new Error(`watch hub: revisions from ${from} are neither in memory nor readable`);
      const events = read(watcher.prefix, watcher.cursor, upTo, watcher.withPrevKv);
      watcher.cursor = upTo;
      return events;
    }
    const upTo = Math.min(this.head, watcher.cursor + this.revisionsPerDrain);
    const events: WatchEvent[] = [];
    const base = this.ringOffset - ringStart;
    for (let rev = from; rev <= upTo; rev++) {
      const event = this.ring[base + rev]!;
      if (event.kv.key.startsWith(watcher.prefix)) {
        events.push(watcher.withPrevKv || !event.prevKv ? event : { type: event.type, kv: event.kv, revision: event.revision });
      }
    }
    watcher.cursor = upTo;
    return events;
  }

  private deliver(watcher: Watcher, events: WatchEvent[]): void {
    deliverSafely(watcher.handlers, events);
  }

  private end(watcher: Watcher, reason: StorageError): void {
    watcher.active = false;
    this.watchers.delete(watcher);
    endSafely(watcher.handlers, reason);
  }
}

/** The event, its key-value objects and the ring's slot, measured roughly on V8 (as the watch cache counts its window). */
const eventOverheadBytes = 400;

/** About what keeping `event` holds: both values' bytes (shared or not), the key and the objects around them. */
export function eventBytes(event: WatchEvent): number {
  return eventOverheadBytes + event.kv.key.length + event.kv.value.byteLength + (event.prevKv ? event.prevKv.value.byteLength : 0);
}

function asStorageError(err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  return new StorageError('Unavailable', `reading watch history failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** Hands events to a watcher; a failing handler must not stop delivery to the other watchers. */
export function deliverSafely(handlers: WatchHandlers, events: WatchEvent[]): void {
  try {
    handlers.onEvents(events);
  } catch (err) {
    process.emitWarning(`watch handler threw: ${String(err)}`, 'StorageWatchWarning');
  }
}

/** Tells a watcher its watch ended; a failing handler is a warning, not the end of the feed. */
export function endSafely(handlers: WatchHandlers, reason: StorageError): void {
  try {
    handlers.onError(reason);
  } catch (err) {
    process.emitWarning(`watch error handler threw: ${String(err)}`, 'StorageWatchWarning');
  }
}
