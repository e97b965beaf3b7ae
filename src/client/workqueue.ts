// A controller's work queue, with the semantics of client-go's rate-limited
// queue, plus the worker loop that upstream controllers write by hand:
//
// - at most `workers` keys are synced at once, so a burst of events (10,000
//   namespaced objects going) waits in the queue instead of starting 10,000
//   syncs that starve the server of its event loop;
// - a key is queued once however often it is added while it waits, and a key
//   added while its sync runs is synced again after it (never twice at once);
// - a failed sync comes back after the rate limiter's delay, up to
//   `maxRetries` failures in a row, after which the failure is logged and the
//   key forgotten until its next event or resync;
// - shutDown stops taking keys and resolves once the running syncs are done.
//
// Every figure upstream's queues export is reported to an optional observer
// (workqueue_* on /metrics).

import { type Clock, type TimerHandle, realClock } from './clock.js';
import { controllerRateLimiter, type RateLimiter } from './ratelimit.js';

export type Sync = (key: string) => Promise<void>;

/** What a queue reports for the workqueue_* metrics (client-go's metrics provider, one per queue). */
export interface QueueObserver {
  /** A key entered the queue (not a duplicate). */
  added(): void;
  /** A worker took a key that waited `seconds`. */
  started(seconds: number): void;
  /** A sync took `seconds`. */
  finished(seconds: number): void;
  /** A failed key was requeued with backoff. */
  retried(): void;
  /** The queue shut down: its gauges no longer exist. */
  closed(): void;
}

/** The gauges of a queue, read when the metrics are collected. */
export interface QueueGauges {
  depth: number;
  /** Seconds of work in progress that has not finished yet, summed over the running syncs. */
  unfinishedSeconds: number;
  /** Seconds the longest-running sync has been running. */
  longestRunningSeconds: number;
}

export interface WorkQueueMetrics {
  queue(name: string, gauges: () => QueueGauges): QueueObserver;
}

export interface WorkQueueOptions {
  /** The queue's name: the `name` label of its metrics and the subject of its log lines. */
  name: string;
  /** Keys synced at once. */
  workers?: number;
  rateLimiter?: RateLimiter;
  /** Failures in a row before a key is given up (logged, then forgotten); Infinity retries forever. */
  maxRetries?: number;
  clock?: Clock;
  metrics?: WorkQueueMetrics;
  log?: (msg: string, extra?: object) => void;
  /** What the log calls a failing key's sync ("namespace sync failed"). */
  failure?: string;
  /** Says what to log of a failure (the key's object, say), or undefined to log nothing; the default logs the key. */
  describe?: (key: string, err: unknown) => object | undefined;
}

export const defaultWorkers = 5;
export const defaultMaxRetries = 15;

export class WorkQueue {
  readonly name: string;
  readonly workers: number;
  /** Keys waiting for a worker, in order, with when each was queued. */
  private readonly waiting = new Map<string, number>();
  /** Keys being synced, with when each sync began. */
  private readonly processing = new Map<string, number>();
  /** Keys added again while their sync ran: queued when it ends. */
  private readonly dirty = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: TimerHandle }>();
  private readonly limiter: RateLimiter;
  private readonly maxRetries: number;
  private readonly clock: Clock;
  private readonly observer?: QueueObserver;
  private readonly drained: (() => void)[] = [];
  private pumpScheduled = false;
  private shuttingDown = false;
  /** The most syncs that ever ran at once; never above `workers`. */
  peakRunning = 0;

  constructor(private readonly sync: Sync, private readonly options: WorkQueueOptions) {
    this.name = options.name;
    this.workers = Math.max(1, options.workers ?? defaultWorkers);
    this.clock = options.clock ?? realClock;
    this.limiter = options.rateLimiter ?? controllerRateLimiter(this.clock);
    this.maxRetries = options.maxRetries ?? defaultMaxRetries;
    this.observer = options.metrics?.queue(this.name, () => this.gauges());
  }

  /** Keys waiting for a worker. */
  get length(): number {
    return this.waiting.size;
  }

  /** Syncs running now. */
  get running(): number {
    return this.processing.size;
  }

  add(key: string): void {
    if (this.shuttingDown || this.waiting.has(key) || this.dirty.has(key)) return;
    this.observer?.added();
    if (this.processing.has(key)) {
      this.dirty.set(key, this.clock.now());
      return;
    }
    this.waiting.set(key, this.clock.now());
    this.schedulePump();
  }

  /** Adds `key` after `ms`; a key already waiting for an earlier time keeps it. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) this.clock.clearTimeout(pending.timer);
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Adds `key` after the rate limiter's delay for one more failure of it. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.observer?.retried();
    this.addAfter(key, this.limiter.when(key));
  }

  /** `key` is done with: its failure count starts again (delayed adds already set still happen). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** Takes no more keys, drops those waiting, and resolves once the running syncs are done. */
  shutDown(): Promise<void> {
    if (!this.shuttingDown) {
      this.shuttingDown = true;
      for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
      this.delayed.clear();
      this.waiting.clear();
      this.dirty.clear();
      this.observer?.closed();
    }
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private gauges(): QueueGauges {
    const now = this.clock.now();
    let unfinished = 0;
    let longest = 0;
    for (const since of this.processing.values()) {
      unfinished += now - since;
      longest = Math.max(longest, now - since);
    }
    return { depth: this.waiting.size, unfinishedSeconds: unfinished / 1000, longestRunningSeconds: longest / 1000 };
  }

  // Workers start on a later turn of the event loop: an informer handler that
  // adds a key never runs the sync inside itself.
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (!this.shuttingDown && this.processing.size < this.workers && this.waiting.size > 0) {
      const [key, queuedAt] = this.waiting.entries().next().value as [string, number];
      this.waiting.delete(key);
      const now = this.clock.now();
      this.processing.set(key, now);
      this.peakRunning = Math.max(this.peakRunning, this.processing.size);
      this.observer?.started((now - queuedAt) / 1000);
      void this.work(key);
    }
  }

  private async work(key: string): Promise<void> {
    const began = this.clock.now();
    try {
      await this.sync(key);
      this.limiter.forget(key);
    } catch (e) {
      this.failed(key, e);
    } finally {
      this.observer?.finished((this.clock.now() - began) / 1000);
      this.processing.delete(key);
      const again = this.dirty.get(key);
      if (again !== undefined) {
        this.dirty.delete(key);
        if (!this.shuttingDown && !this.waiting.has(key)) this.waiting.set(key, again);
      }
      if (this.shuttingDown && this.processing.size === 0) for (const resolve of this.drained.splice(0)) resolve();
      else this.pump();
    }
  }

  private failed(key: string, e: unknown): void {
    if (this.shuttingDown) return;
    const { log = () => undefined, failure = `${this.name} sync failed`, describe = () => ({ key, err: String(e) }) } = this.options;
    const said = describe(key, e);
    const retries = this.limiter.numRequeues(key);
    if (retries < this.maxRetries) {
      if (said) log(failure, { queue: this.name, ...said, retries });
      this.addRateLimited(key);
      return;
    }
    // Given up: the key's next event, or the informers' resync, brings it back.
    log(`${failure}; giving up after ${retries} retries`, { queue: this.name, ...(said ?? { key, err: String(e) }) });
    this.limiter.forget(key);
  }
}
