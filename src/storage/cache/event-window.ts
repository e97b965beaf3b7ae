// The recent events under a root, oldest first, bounded by age and count.
// `completeAfter` is what makes replays safe: every event under the root with
// a revision above it is in the window (up to the cache's revision), so a
// watch from any revision at or above it can be served from memory, and an
// older one might miss events and must go to the backend.

import type { CacheEvent } from './types.js';

export class EventWindow {
  private events: CacheEvent[] = [];
  /** When each event entered the window (performance.now()), parallel to `events`. */
  private times: number[] = [];
  /** Index of the oldest kept event (front removal without shifting every time). */
  private offset = 0;
  private complete = 0;

  constructor(
    private readonly maxAgeMs: number,
    private readonly maxEvents: number,
  ) {}

  /** Every event with a revision above this is held. */
  get completeAfter(): number {
    return this.complete;
  }

  get size(): number {
    return this.events.length - this.offset;
  }

  /** Forget everything; the window is complete after `revision` (a fresh snapshot). */
  reset(revision: number): void {
    this.events = [];
    this.times = [];
    this.offset = 0;
    this.complete = revision;
  }

  push(event: CacheEvent, now: number): void {
    this.events.push(event);
    this.times.push(now);
    if (this.size > this.maxEvents) this.dropFront(this.size - this.maxEvents);
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

  private dropFront(n: number): void {
    this.complete = Math.max(this.complete, this.events[this.offset + n - 1]!.revision);
    this.offset += n;
    // Reclaim the dead front now and then, not on every drop.
    if (this.offset > 1024 && this.offset * 2 > this.events.length) {
      this.events.splice(0, this.offset);
      this.times.splice(0, this.offset);
      this.offset = 0;
    }
  }
}
