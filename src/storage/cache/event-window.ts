// The recent events under a root, oldest first, bounded by age, count and
// bytes. `completeAfter` is what makes replays safe: every event under the
// root with a revision above it is in the window (up to the cache's revision),
// so a watch from any revision at or above it can be served from memory, and
// an older one might miss events and must go to the backend.
//
// The byte bound is one budget shared by every window of a cache set
// (WindowBudget): when the events of all resources together hold more than
// it, the oldest event of any window goes first. Revisions are global (one
// store feed), so "oldest" is comparable across windows, and a resource that
// is written rarely keeps its events as long as a busy one's allow.

import type { CacheEvent } from './types.js';

/** Default bound of a cache set's windows together, in bytes (CacheEvent.windowBytes). */
export const defaultWindowBytes = 32 * 1024 * 1024;

export class WindowBudget {
  private readonly windows = new Set<EventWindow>();
  private total = 0;

  constructor(readonly maxBytes = defaultWindowBytes) {
    if (!(maxBytes >= 0)) throw new TypeError(`a window bound is a number of bytes, got ${maxBytes}`);
  }

  /** Bytes the events of every window hold now; never above maxBytes between calls. */
  get bytes(): number {
    return this.total;
  }

  /** @internal */
  join(window: EventWindow): void {
    this.windows.add(window);
  }

  /** @internal */
  leave(window: EventWindow): void {
    this.windows.delete(window);
  }

  /** @internal */
  change(delta: number): void {
    this.total += delta;
  }

  /** @internal Drop the oldest events of any window until the total fits. */
  trim(): void {
    while (this.total > this.maxBytes) {
      let oldest: EventWindow | undefined;
      for (const window of this.windows) {
        const first = window.oldestRevision;
        if (first !== undefined && (!oldest || first < oldest.oldestRevision!)) oldest = window;
      }
      if (!oldest) return;
      oldest.dropOldest();
    }
  }
}

export class EventWindow {
  private events: CacheEvent[] = [];
  /** When each event entered the window (performance.now()), parallel to `events`. */
  private times: number[] = [];
  /** Index of the oldest kept event (front removal without shifting every time). */
  private offset = 0;
  private complete = 0;
  private held = 0;

  constructor(
    private readonly maxAgeMs: number,
    private readonly maxEvents: number,
    private readonly budget: WindowBudget = new WindowBudget(Infinity),
  ) {
    budget.join(this);
  }

  /** Every event with a revision above this is held. */
  get completeAfter(): number {
    return this.complete;
  }

  get size(): number {
    return this.events.length - this.offset;
  }

  /** Bytes this window's events hold (CacheEvent.windowBytes). */
  get bytes(): number {
    return this.held;
  }

  /** Revision of the oldest event held; undefined when empty. */
  get oldestRevision(): number | undefined {
    return this.offset < this.events.length ? this.events[this.offset]!.revision : undefined;
  }

  /** Forget everything; the window is complete after `revision` (a fresh snapshot). */
  reset(revision: number): void {
    this.budget.change(-this.held);
    this.held = 0;
    this.events = [];
    this.times = [];
    this.offset = 0;
    this.complete = revision;
  }

  /** Forget everything and leave the budget (the cache stopped). */
  close(): void {
    this.reset(this.complete);
    this.budget.leave(this);
  }

  push(event: CacheEvent, now: number): void {
    this.events.push(event);
    this.times.push(now);
    const bytes = event.windowBytes;
    this.held += bytes;
    this.budget.change(bytes);
    if (this.size > this.maxEvents) this.dropFront(this.size - this.maxEvents);
    this.budget.trim();
  }

  /** Drop events older than the window's age. */
  expire(now: number): void {
    const cutoff = now - this.maxAgeMs;
    let n = 0;
    while (this.offset + n < this.times.length && this.times[this.offset + n]! <= cutoff) n++;
    if (n > 0) this.dropFront(n);
  }

  /** Events with revision > `after` whose key starts with `prefix`, in order. */
  eventsAfter(after: number, prefix: string): CacheEvent[] {
    const events = this.events;
    let lo = this.offset;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (events[mid]!.revision <= after) lo = mid + 1;
      else hi = mid;
    }
    const out: CacheEvent[] = [];
    for (let i = lo; i < events.length; i++) {
      const event = events[i]!;
      if (event.key.startsWith(prefix)) out.push(event);
    }
    return out;
  }

  /** @internal The budget's eviction: the oldest event goes. */
  dropOldest(): void {
    if (this.size > 0) this.dropFront(1);
  }

  private dropFront(n: number): void {
    this.complete = Math.max(this.complete, this.events[this.offset + n - 1]!.revision);
    let bytes = 0;
    for (let i = this.offset; i < this.offset + n; i++) {
      bytes += this.events[i]!.windowBytes;
      // The slot is dead: let the event (and the old value it may hold) go now.
      (this.events as (CacheEvent | undefined)[])[i] = undefined;
    }
    this.held -= bytes;
    this.budget.change(-bytes);
    this.offset += n;
    // Reclaim the dead front now and then, not on every drop.
    if (this.offset > 1024 && this.offset * 2 > this.events.length) {
      this.events.splice(0, this.offset);
      this.times.splice(0, this.offset);
      this.offset = 0;
    }
  }
}
