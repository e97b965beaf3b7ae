// The watch cache of one resource key root (e.g. /registry/serviceaccounts/):
// the latest value of every key under it, kept current from the store feed,
// plus a window of recent events that watches replay from. Lists, gets and
// watches are served from memory; a watch from a revision older than the
// window goes to the backend, which may still hold that history (right after
// a restart the window is empty) and answers 'Compacted' when it does not.
//
// It knows nothing of kinds, objects or selectors: consumers filter events
// and encode them, storing what they derive in the events' and values' memo.
// Consumers may also declare indexes (value-index.ts): a value read from each
// stored value, by which lists and watches are narrowed.

import { Backend, KeyValue, StorageError, WatchEvent } from '../backend.js';
import { EventWindow, WindowBudget } from './event-window.js';
import { FeedSubscriber, StoreFeed } from './feed.js';
import { FreshnessWaiters } from './freshness.js';
import { SortedValues } from './sorted-values.js';
import {
  CacheEvent, CacheListOptions, CacheListResult, CachedKeyValue, cachedKeyValue, CacheWatch, CacheWatchHandlers,
  CacheWatchOptions, WatchCacheOptions,
} from './types.js';
import { CacheWatcher } from './watcher.js';
import { CacheIndexDeclaration, IndexCondition, triggers, unknown, ValueIndex, valueAt } from './value-index.js';

const defaults = { historyWindowMs: 5 * 60_000, maxEvents: 100_000, maxBuffered: 10_000 };
/** First delay before re-reading the root after a failed reload; doubles up to 30 s. */
const reloadRetryMs = 200;
/** Keys per store read while the cache loads its root. */
const loadPageSize = 1_000;

export interface WatchCacheSetup extends WatchCacheOptions {
  /** The shared store feed (see CacheSet); without one the cache opens its own. */
  feed?: StoreFeed;
  /** The byte bound shared with the other caches of a set; without one the cache has its own of maxWindowBytes. */
  budget?: WindowBudget;
}

export class WatchCache implements FeedSubscriber {
  readonly root: string;
  private readonly feed: StoreFeed;
  private readonly ownsFeed: boolean;
  private readonly values = new SortedValues();
  private readonly window: EventWindow;
  private readonly maxBuffered: number;
  /** Watchers served from memory, grouped by prefix so that each prefix filters a batch once. */
  private readonly watchers = new Map<string, Set<CacheWatcher>>();
  /** The indexes consumers declared, by name. */
  private readonly indexes = new Map<string, ValueIndex>();
  /** Memory-served watchers narrowed to one indexed value: index name → value → watchers. */
  private readonly indexedWatchers = new Map<string, Map<string, Set<CacheWatcher>>>();
  /** Watchers served by a direct backend watch. */
  private readonly fallbacks = new Set<CacheWatcher>();
  private readonly freshness = new FreshnessWaiters();
  private current = 0;
  /** Every watcher has been offered every event up to this revision. */
  private fannedOut = 0;
  private ready = false;
  /** Feed events that arrive while the root is being read. */
  private buffer: WatchEvent[] | undefined;
  /** Bumped by every (re)load and loss, so a stale read is dropped. */
  private generation = 0;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private reloadDelay = reloadRetryMs;
  /** Settles start() once the first load completes, even one redone after a feed loss. */
  private firstReady: { promise: Promise<void>; resolve(): void; reject(err: unknown): void };

  constructor(
    private readonly backend: Backend,
    root: string,
    options: WatchCacheSetup = {},
  ) {
    if (!root.endsWith('/')) throw new TypeError(`a cache root ends with "/", got ${JSON.stringify(root)}`);
    this.root = root;
    this.window = new EventWindow(
      options.historyWindowMs ?? defaults.historyWindowMs,
      options.maxEvents ?? defaults.maxEvents,
      options.budget ?? new WindowBudget(options.maxWindowBytes),
    );
    this.maxBuffered = options.maxBuffered ?? defaults.maxBuffered;
    this.ownsFeed = options.feed === undefined;
    this.feed = options.feed ?? new StoreFeed(backend);
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => undefined);
    this.firstReady = { promise, resolve, reject };
  }

  /** The latest revision the cache has applied: its state is the store's state under the root at it. */
  get revision(): number {
    return this.current;
  }

  /** False before start() completes and while reloading after the store watch failed. */
  get isReady(): boolean {
    return this.ready;
  }

  /** Bytes the events in this cache's window hold (see CacheEvent.windowBytes). */
  get windowBytes(): number {
    return this.window.bytes;
  }

  /** Number of open watchers (memory and backend-served), for metrics and tests. */
  get watcherCount(): number {
    let n = this.fallbacks.size;
    for (const group of this.watchers.values()) n += group.size;
    for (const byValue of this.indexedWatchers.values()) for (const group of byValue.values()) n += group.size;
    return n;
  }

  /**
   * Keep an index (once per name: a second declaration of a name is
   * ignored). Declared on a running cache, it is built from the values at
   * once; events already in the window are offered to all its watchers.
   */
  addIndex(declaration: CacheIndexDeclaration): void {
    if (this.indexes.has(declaration.name)) return;
    const index = new ValueIndex(declaration, this.indexes.size);
    this.indexes.set(declaration.name, index);
    if (this.ready) index.reset(this.values.range(this.root, undefined, 0).items);
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Read the root and follow the store; resolves once ready. Later calls share the first. */
  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  /** The revision a BOOKMARK may carry now, for a watcher with nothing queued. */
  bookmarkRevision(): number {
    return this.fannedOut;
  }

  /** Resolves once the cache is ready at `revision` or later; 'FutureRevision' after `timeoutMs`. */
  waitUntilFresh(revision: number, timeoutMs = 3000): Promise<void> {
    checkRevision(revision);
    if (this.stopped) return Promise.reject(stoppedError());
    if (this.ready && this.current >= revision) return Promise.resolve();
    return this.freshness.wait(revision, timeoutMs, () => this.current);
  }

  /** Values under `prefix` (the root or a folder below it) in key order, at `revision`. */
  list(prefix: string, options: CacheListOptions = {}): CacheListResult {
    this.ensureReady();
    this.checkPrefix(prefix);
    const index = options.index && this.indexFor(options.index);
    const { items, count } = index
      ? index.range(options.index!.value, prefix, options.startKey, options.limit ?? 0)
      : this.values.range(prefix, options.startKey, options.limit ?? 0);
    return { items, revision: this.current, more: count > items.length, count };
  }

  get(key: string): CachedKeyValue | undefined {
    this.ensureReady();
    this.checkPrefix(key);
    return this.values.get(key);
  }

  /**
   * Events under `prefix` with revision > `afterRevision`: first those the
   * window holds, then live ones. Older than the window: a backend watch.
   */
  watch(prefix: string, afterRevision: number, handlers: CacheWatchHandlers, options: CacheWatchOptions = {}): CacheWatch {
    checkRevision(afterRevision);
    this.checkPrefix(prefix);
    const maxBuffered = options.maxBuffered ?? this.maxBuffered;
    const condition = options.index && this.indexFor(options.index) ? options.index : undefined;
    if (this.stopped) {
      const watcher = new CacheWatcher({ prefix, handlers, maxBuffered, liveFrom: afterRevision, replay: [], onEnd: () => {} });
      watcher.fail(stoppedError());
      return watcher;
    }
    if (this.ready) this.window.expire(performance.now());
    if (!this.ready || afterRevision < this.window.completeAfter) return this.watchBackend(prefix, afterRevision, handlers, maxBuffered, condition);
    const watcher = new CacheWatcher({
      prefix,
      index: condition,
      handlers,
      maxBuffered,
      liveFrom: Math.max(afterRevision, this.current),
      replay: this.replayFor(afterRevision, prefix, condition),
      caughtUpRevision: () => this.fannedOut,
      onEnd: (w) => this.unregister(w),
    });
    this.register(watcher);
    return watcher;
  }

  /** End every watch with 'Unavailable', fail pending waits, stop following the store. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ready = false;
    this.generation++;
    clearTimeout(this.reloadTimer);
    this.unsubscribe?.();
    if (this.ownsFeed) this.feed.stop();
    const err = stoppedError();
    this.failAll(err);
    this.window.close();
    for (const watcher of [...this.fallbacks]) watcher.fail(err);
    this.freshness.rejectAll(err);
    this.firstReady.reject(err);
  }

  // ---- FeedSubscriber ----------------------------------------------------

  feedEvents(events: WatchEvent[], through: number): void {
    if (this.stopped) return;
    if (this.buffer) {
      for (const event of events) this.buffer.push(event);
      return;
    }
    if (this.ready) this.apply(events, through);
  }

  feedLost(err: StorageError): void {
    if (this.stopped) return;
    this.generation++;
    this.ready = false;
    this.buffer = undefined;
    clearTimeout(this.reloadTimer);
    // Events are being missed: memory-served watchers cannot continue gaplessly.
    this.failAll(new StorageError('Unavailable', `the watch cache lost its store watch: ${err.message}`));
  }

  feedStarted(): void {
    if (!this.stopped && this.starting) this.reload();
  }

  // ---- internals ---------------------------------------------------------

  private async begin(): Promise<void> {
    try {
      await this.feed.start();
      if (this.stopped) throw stoppedError();
      this.unsubscribe = this.feed.subscribe(this);
      await this.load();
      // A feed loss during the first read redoes it (feedStarted); wait for that.
      await this.firstReady.promise;
    } catch (err) {
      this.stop();
      throw err;
    }
  }

  /** Read the root afresh; feed events that arrive meanwhile are applied after it. */
  private async load(): Promise<void> {
    const generation = ++this.generation;
    this.ready = false;
    this.buffer = [];
    const snapshot = await this.readRoot(generation);
    if (!snapshot) return;
    const values = snapshot.items;
    this.values.reset(values);
    // Key order as the values keep it (reset sorts an out-of-order range).
    const ordered = this.indexes.size > 0 ? this.values.range(this.root, undefined, 0).items : values;
    for (const index of this.indexes.values()) index.reset(ordered);
    this.window.reset(snapshot.revision);
    this.current = Math.max(this.current, snapshot.revision);
    const buffered = this.buffer;
    this.buffer = undefined;
    this.ready = true;
    this.reloadDelay = reloadRetryMs;
    this.firstReady.resolve();
    this.apply(buffered.filter((e) => e.revision > snapshot.revision), Math.max(this.feed.revision, this.current));
  }

  /**
   * Everything under the root at one revision, read in pages with a turn of
   * the event loop between them: a large root (a restart with tens of
   * thousands of objects) does not hold requests up while it loads.
   * Undefined when a newer load or a stop overtook this one.
   */
  private async readRoot(generation: number): Promise<{ items: CachedKeyValue[]; revision: number } | undefined> {
    for (;;) {
      try {
        return await this.readRootOnce(generation);
      } catch (err) {
        // The first page's revision was compacted while later pages were read: start over.
        if (!(err instanceof StorageError && err.code === 'Compacted')) throw err;
      }
    }
  }

  private async readRootOnce(generation: number): Promise<{ items: CachedKeyValue[]; revision: number } | undefined> {
    const overtaken = () => generation !== this.generation || this.stopped;
    const first = await this.backend.range(this.root, { limit: loadPageSize, skipCount: true });
    // The cache's own values page by page: the store's KeyValues die young instead of living (and being promoted) until the last page.
    const items = first.items.map(cachedKeyValue);
    for (let more = first.more; more;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (overtaken()) return undefined;
      const after = `${items[items.length - 1]!.key}\0`;
      const page = await this.backend.range(this.root, { revision: first.revision, startKey: after, limit: loadPageSize, skipCount: true });
      for (const kv of page.items) items.push(cachedKeyValue(kv));
      more = page.more;
    }
    return overtaken() ? undefined : { items, revision: first.revision };
  }

  private reload(): void {
    clearTimeout(this.reloadTimer);
    this.load().catch(() => {
      // Retried while the feed runs; a feed restart also triggers a reload.
      if (this.stopped || !this.feed.running) return;
      this.reloadTimer = setTimeout(() => this.reload(), this.reloadDelay);
      this.reloadTimer.unref();
      this.reloadDelay = Math.min(30_000, this.reloadDelay * 2);
    });
  }

  /** Apply feed events (under the root, in order) and offer them to the watchers. */
  private apply(events: WatchEvent[], through: number): void {
    const now = performance.now();
    this.window.expire(now);
    // Several events may share one revision (an etcd transaction): compare with the start.
    const floor = this.current;
    const fresh: CacheEvent[] = [];
    for (const event of events) {
      if (event.revision > floor) fresh.push(this.applyOne(event, now));
    }
    this.current = Math.max(this.current, through, fresh.length > 0 ? fresh[fresh.length - 1]!.revision : 0);
    if (fresh.length > 0) this.fanOut(fresh);
    this.fannedOut = this.current;
    this.freshness.advance(this.current);
  }

  private applyOne(event: WatchEvent, now: number): CacheEvent {
    const kv = cachedKeyValue(event.kv);
    let cacheEvent: CacheEvent;
    if (event.type === 'put') {
      // The cache's own previous value: what its consumers have seen (and memoized).
      const old = this.values.put(kv);
      for (const index of this.indexes.values()) index.put(kv, old);
      cacheEvent = new CacheEvent('put', kv, old, event.revision);
    } else {
      const old = this.values.remove(kv.key);
      for (const index of this.indexes.values()) index.remove(kv, old);
      cacheEvent = new CacheEvent('delete', kv, old ?? (event.prevKv && cachedKeyValue(event.prevKv)), event.revision);
    }
    this.window.push(cacheEvent, now);
    return cacheEvent;
  }

  private fanOut(events: CacheEvent[]): void {
    for (const [prefix, group] of this.watchers) {
      const matching = prefix === this.root ? events : events.filter((e) => e.key.startsWith(prefix));
      if (matching.length === 0) continue;
      for (const watcher of group) watcher.offer(matching);
    }
    if (this.indexedWatchers.size > 0) this.fanOutIndexed(events);
  }

  /**
   * Each event to the watchers of the value its object had and of the one
   * it has (upstream's trigger values): a pod moving from node A to B
   * reaches A's watchers and B's, no other node's.
   */
  private fanOutIndexed(events: CacheEvent[]): void {
    const offers = new Map<CacheWatcher, CacheEvent[]>();
    const offerTo = (group: Set<CacheWatcher> | undefined, event: CacheEvent) => {
      if (!group) return;
      for (const watcher of group) {
        if (!event.key.startsWith(watcher.prefix)) continue;
        const list = offers.get(watcher);
        if (list) list.push(event);
        else offers.set(watcher, [event]);
      }
    };
    for (const [name, byValue] of this.indexedWatchers) {
      const position = this.indexes.get(name)!.position;
      for (const event of events) {
        const now = valueAt(event.kv, position);
        const before = event.prevKv ? valueAt(event.prevKv, position) : undefined;
        if (now === unknown || before === unknown) {
          for (const group of byValue.values()) offerTo(group, event);
          continue;
        }
        if (now !== undefined) offerTo(byValue.get(now), event);
        if (before !== undefined && before !== now) offerTo(byValue.get(before), event);
      }
    }
    for (const [watcher, list] of offers) watcher.offer(list);
  }

  /** The window's events after `afterRevision` under `prefix` that a watcher narrowed by `condition` is offered. */
  private replayFor(afterRevision: number, prefix: string, condition: IndexCondition | undefined): CacheEvent[] {
    const events = this.window.eventsAfter(afterRevision, prefix);
    if (!condition) return events;
    const position = this.indexes.get(condition.name)!.position;
    return events.filter((e) => triggers(e, position, condition.value));
  }

  private indexFor(condition: IndexCondition): ValueIndex | undefined {
    return this.indexes.get(condition.name);
  }

  private watchBackend(
    prefix: string, afterRevision: number, handlers: CacheWatchHandlers, maxBuffered: number, index: IndexCondition | undefined,
  ): CacheWatch {
    // Served from the store, the watcher sees every event under its prefix (its consumer filters them) until it moves to the cache.
    const watcher = new CacheWatcher({
      prefix, index, handlers, maxBuffered, liveFrom: afterRevision, replay: [], onEnd: (w) => this.fallbacks.delete(w),
    });
    this.fallbacks.add(watcher);
    try {
      const backendWatch = this.backend.watch(prefix, { afterRevision, prevKv: true }, {
        onEvents: (events) => {
          watcher.offer(events.map(fromBackendEvent));
          this.tryHandOver(watcher);
        },
        onError: (err) => watcher.fail(err),
      });
      watcher.attachBackend(() => backendWatch.cancel());
    } catch (err) {
      watcher.fail(err instanceof StorageError ? err : new StorageError('Unavailable', String(err)));
    }
    return watcher;
  }

  /**
   * Once a backend-served watcher has reached the cache's window, serve it
   * from memory: its events then share the cache's encodings.
   */
  private tryHandOver(watcher: CacheWatcher): void {
    if (!this.ready || !watcher.open) return;
    const through = watcher.offeredThrough;
    this.window.expire(performance.now());
    if (through < this.window.completeAfter) return;
    this.fallbacks.delete(watcher);
    this.register(watcher);
    watcher.moveToCache(this.replayFor(through, watcher.prefix, watcher.index), () => this.fannedOut, (w) => this.unregister(w));
  }

  private register(watcher: CacheWatcher): void {
    const groups = this.groupsOf(watcher, true)!;
    const name = watcher.index?.value ?? watcher.prefix;
    let group = groups.get(name);
    if (!group) groups.set(name, (group = new Set()));
    group.add(watcher);
  }

  private unregister(watcher: CacheWatcher): void {
    const groups = this.groupsOf(watcher, false);
    const name = watcher.index?.value ?? watcher.prefix;
    const group = groups?.get(name);
    if (!group) return;
    group.delete(watcher);
    if (group.size === 0) groups!.delete(name);
    if (watcher.index && groups!.size === 0) this.indexedWatchers.delete(watcher.index.name);
  }

  /** The groups a watcher belongs among: by prefix, or by value of its index. */
  private groupsOf(watcher: CacheWatcher, create: boolean): Map<string, Set<CacheWatcher>> | undefined {
    if (!watcher.index) return this.watchers;
    let byValue = this.indexedWatchers.get(watcher.index.name);
    if (!byValue && create) this.indexedWatchers.set(watcher.index.name, (byValue = new Map()));
    return byValue;
  }

  private failAll(err: StorageError): void {
    for (const group of this.watchers.values()) for (const watcher of group) watcher.fail(err);
    for (const byValue of this.indexedWatchers.values()) for (const group of byValue.values()) for (const watcher of group) watcher.fail(err);
  }

  private ensureReady(): void {
    if (this.stopped) throw stoppedError();
    if (!this.ready) throw new StorageError('Unavailable', `the watch cache of ${this.root} is not ready`);
  }

  private checkPrefix(prefix: string): void {
    if (!prefix.startsWith(this.root)) throw new TypeError(`${prefix} is outside the cache root ${this.root}`);
  }
}

function fromBackendEvent(event: WatchEvent): CacheEvent {
  return new CacheEvent(event.type, cachedKeyValue(event.kv), event.prevKv && cachedKeyValue(event.prevKv), event.revision);
}

function checkRevision(revision: number): void {
  if (!Number.isSafeInteger(revision) || revision < 0) throw new TypeError(`revision must be a non-negative integer, got ${revision}`);
}

function stoppedError(): StorageError {
  return new StorageError('Unavailable', 'the watch cache is stopped');
}
