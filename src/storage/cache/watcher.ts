// One consumer of a watch cache (or of a direct backend watch). Events that
// can be handed over at once are; the rest wait in a bounded queue while the
// consumer is paused or still being given its replay. Delivery to one watcher
// never waits for another: a watcher whose queue overflows is ended with
// 'Unavailable' and dropped, the store and the other watchers go on.

import { StorageError } from '../backend.js';
import type { CacheEvent, CacheWatch, CacheWatchHandlers } from './types.js';
import type { IndexCondition } from './value-index.js';

/** Most events per onEvents call when handing over a backlog. */
const chunkSize = 1_000;
/** Chunks handed to one watcher per event-loop turn, so that a big replay does not starve I/O. */
const chunksPerTurn = 8;

export interface WatcherSetup {
  prefix: string;
  /** The indexed value the cache offers this watcher events of (all events under the prefix when absent). */
  index?: IndexCondition;
  handlers: CacheWatchHandlers;
  maxBuffered: number;
  /** Events at or below this revision are never delivered (they are in the replay or before the start). */
  liveFrom: number;
  /** Events to hand over first, in order (from the window); not counted against maxBuffered. */
  replay: CacheEvent[];
  /** Revision every event is delivered through when nothing waits (cache-served watchers). */
  caughtUpRevision?: () => number;
  /** Called once when the watch ends for any reason, to unregister it. */
  onEnd(watcher: CacheWatcher): void;
}

export class CacheWatcher implements CacheWatch {
  readonly prefix: string;
  readonly index: IndexCondition | undefined;
  fromBackend = false;
  private readonly handlers: CacheWatchHandlers;
  private readonly maxBuffered: number;
  private liveFrom: number;
  private replay: CacheEvent[];
  private replayPos = 0;
  private live: CacheEvent[] = [];
  private livePos = 0;
  private paused = false;
  private delivering = false;
  private ended = false;
  private failure: StorageError | undefined;
  private scheduled: NodeJS.Immediate | undefined;
  /** Revision of the last event handed over (or the start). */
  private delivered: number;
  private backendCancel: (() => void) | undefined;
  private caughtUpRevision: (() => number) | undefined;
  private onEnd: (watcher: CacheWatcher) => void;

  constructor(setup: WatcherSetup) {
    this.prefix = setup.prefix;
    this.index = setup.index;
    this.caughtUpRevision = setup.caughtUpRevision;
    this.onEnd = setup.onEnd;
    this.handlers = setup.handlers;
    this.maxBuffered = setup.maxBuffered;
    this.liveFrom = setup.liveFrom;
    this.delivered = setup.liveFrom;
    this.replay = setup.replay;
    if (this.replay.length > 0) this.schedule();
  }

  /** Serve this watcher from a direct backend watch; `cancel` stops that watch. */
  attachBackend(cancel: () => void): void {
    this.fromBackend = true;
    this.backendCancel = cancel;
  }

  /** Revision of the last event offered (or where the watch started). */
  get offeredThrough(): number {
    return this.liveFrom;
  }

  /** True until the watch is cancelled or has failed. */
  get open(): boolean {
    return !this.ended && !this.failure;
  }

  /**
   * Leave the direct backend watch for the cache: `catchUp` holds the cache's
   * events after offeredThrough, and the cache offers the later ones.
   */
  moveToCache(catchUp: CacheEvent[], caughtUpRevision: () => number, onEnd: (watcher: CacheWatcher) => void): void {
    this.stopBackend();
    this.fromBackend = false;
    this.caughtUpRevision = caughtUpRevision;
    this.onEnd = onEnd;
    this.offer(catchUp);
  }

  /** Events under this watcher's prefix, in order; those at or below liveFrom are skipped. */
  offer(events: CacheEvent[]): void {
    if (this.ended || this.failure || events.length === 0) return;
    if (events[0]!.revision <= this.liveFrom) {
      events = events.filter((e) => e.revision > this.liveFrom);
      if (events.length === 0) return;
    }
    this.liveFrom = events[events.length - 1]!.revision;
    if (!this.paused && !this.delivering && !this.hasBacklog()) {
      // The array may be shared with other watchers: hand each its own.
      this.deliver(events.slice());
      return;
    }
    for (const event of events) this.live.push(event);
    if (this.live.length - this.livePos > this.maxBuffered) {
      this.fail(new StorageError('Unavailable', `watcher too slow: more than ${this.maxBuffered} events waiting`));
      return;
    }
    this.schedule();
  }

  /** End the watch with `err` (delivered asynchronously); queued events are dropped. */
  fail(err: StorageError): void {
    if (this.ended || this.failure) return;
    this.failure = err;
    this.dropQueues();
    this.stopBackend();
    this.schedule();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.hasBacklog()) this.schedule();
  }

  cancel(): void {
    if (this.ended) return;
    this.finish();
  }

  bookmarkRevision(): number {
    const next = this.replayPos < this.replay.length ? this.replay[this.replayPos] : this.live[this.livePos];
    if (next) return next.revision - 1;
    return Math.max(this.delivered, this.caughtUpRevision?.() ?? 0);
  }

  private hasBacklog(): boolean {
    return this.replayPos < this.replay.length || this.livePos < this.live.length;
  }

  private schedule(): void {
    if (this.ended || this.scheduled !== undefined) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.pump();
    });
  }

  private pump(): void {
    if (this.ended || this.delivering) return;
    if (this.failure) {
      const err = this.failure;
      this.finish();
      try {
        this.handlers.onError(err);
      } catch (thrown) {
        process.emitWarning(`watch error handler threw: ${String(thrown)}`, 'WatchCacheWarning');
      }
      return;
    }
    for (let chunks = 0; !this.paused && !this.ended && !this.failure && this.hasBacklog(); chunks++) {
      if (chunks === chunksPerTurn) {
        this.schedule();
        return;
      }
      this.deliver(this.takeChunk());
    }
    // A failure raised while delivering (e.g. overflow) is reported now.
    if (this.failure) this.schedule();
  }

  private takeChunk(): CacheEvent[] {
    if (this.replayPos < this.replay.length) {
      const chunk = this.replay.slice(this.replayPos, this.replayPos + chunkSize);
      this.replayPos += chunk.length;
      if (this.replayPos === this.replay.length) {
        this.replay = [];
        this.replayPos = 0;
      }
      return chunk;
    }
    const chunk = this.live.slice(this.livePos, this.livePos + chunkSize);
    this.livePos += chunk.length;
    if (this.livePos === this.live.length) {
      this.live = [];
      this.livePos = 0;
    }
    return chunk;
  }

  private deliver(events: CacheEvent[]): void {
    this.delivered = events[events.length - 1]!.revision;
    this.delivering = true;
    try {
      this.handlers.onEvents(events);
    } catch (err) {
      // A failing handler must not stop delivery to the other watchers.
      process.emitWarning(`watch handler threw: ${String(err)}`, 'WatchCacheWarning');
    } finally {
      this.delivering = false;
    }
  }

  private dropQueues(): void {
    this.replay = [];
    this.replayPos = 0;
    this.live = [];
    this.livePos = 0;
  }

  private stopBackend(): void {
    const cancel = this.backendCancel;
    this.backendCancel = undefined;
    cancel?.();
  }

  private finish(): void {
    this.ended = true;
    this.dropQueues();
    this.stopBackend();
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.onEnd(this);
  }
}
