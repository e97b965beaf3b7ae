// One backend watch over every key, shared by the caches of one backend.
//
// Why not one watch per cache root: a backend delivers a prefix watch only
// the events under that prefix, so a cache would never learn that the store
// moved on elsewhere, and a list or watch at a revision written under another
// prefix would hang. Separate streams are not ordered against each other, so
// "the head is at R" (from currentRevision) cannot safely be applied to a
// cache whose own stream may still hold events at or below R. A single stream
// over all keys is totally ordered: once it has delivered revision R, every
// cache has applied everything up to R, whichever key R wrote.

import { Backend, StorageError, Watch, WatchEvent } from '../backend.js';

export interface FeedSubscriber {
  /** Key prefix of the events this subscriber wants. */
  readonly root: string;
  /** Events under `root` in revision order, then `through`: the feed has delivered every revision up to it. */
  feedEvents(events: WatchEvent[], through: number): void;
  /** The feed's watch failed: events may be lost until the next feedStarted. */
  feedLost(err: StorageError): void;
  /** The feed (re)started; subscribers re-read their state. */
  feedStarted(): void;
}

export interface StoreFeedOptions {
  /** First delay before restarting a failed watch; doubles up to 30 s. Default 100 ms. */
  retryMs?: number;
}

const maxRetryMs = 30_000;

export class StoreFeed {
  private readonly subscribers = new Set<FeedSubscriber>();
  private watch: Watch | undefined;
  private starting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private stopped = false;
  private seen = 0;

  constructor(
    private readonly backend: Backend,
    private readonly options: StoreFeedOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 100;
  }

  /** Every revision up to this has been delivered to the subscribers. */
  get revision(): number {
    return this.seen;
  }

  /** True while the backend watch runs. */
  get running(): boolean {
    return this.watch !== undefined;
  }

  /** Start watching (once; later calls share the first). Rejects when the backend cannot be read. */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new StorageError('Unavailable', 'the store feed is stopped'));
    if (this.watch) return Promise.resolve();
    this.starting ??= this.open().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Returns the unsubscribe function. */
  subscribe(subscriber: FeedSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.watch?.cancel();
    this.watch = undefined;
    this.subscribers.clear();
  }

  private async open(): Promise<void> {
    const head = await this.backend.currentRevision();
    if (this.stopped) return;
    this.seen = Math.max(this.seen, head);
    this.watch = this.backend.watch('', { afterRevision: head, prevKv: true }, {
      onEvents: (events) => this.dispatch(events),
      // Revisions written outside the backend's key space (another --etcd-prefix on the same etcd) come as progress.
      onProgress: (revision) => this.progress(revision),
      onError: (err) => this.lost(err),
    });
    this.retryMs = this.options.retryMs ?? 100;
    for (const subscriber of [...this.subscribers]) subscriber.feedStarted();
  }

  private dispatch(events: WatchEvent[]): void {
    if (events.length === 0) return;
    const subscribers = [...this.subscribers];
    const through = events[events.length - 1]!.revision;
    this.seen = Math.max(this.seen, through);
    for (const subscriber of subscribers) {
      const root = subscriber.root;
      const mine: WatchEvent[] = [];
      for (const event of events) if (event.kv.key.startsWith(root)) mine.push(event);
      subscriber.feedEvents(mine, through);
    }
  }

  /** The store reached `revision` with nothing more under any root: every subscriber is through it. */
  private progress(revision: number): void {
    if (revision <= this.seen) return;
    this.seen = revision;
    for (const subscriber of [...this.subscribers]) subscriber.feedEvents([], revision);
  }

  private lost(err: StorageError): void {
    this.watch = undefined;
    if (this.stopped) return;
    for (const subscriber of [...this.subscribers]) subscriber.feedLost(err);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = this.retryMs;
    this.retryMs = Math.min(maxRetryMs, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start().catch(() => {
        if (!this.stopped && !this.watch) this.scheduleRestart();
      });
    }, delay);
    this.retryTimer.unref();
  }
}
