// How long a failed key waits before its next try, with the semantics of
// client-go's rate limiters: a per-key exponential backoff, an overall token
// bucket that caps the retry rate of the whole queue, and the larger of the
// two as the controllers' default.

import type { Clock } from './clock.js';
import { realClock } from './clock.js';

export interface RateLimiter {
  /** The delay before `key` may be tried again; each call counts as one more failure. */
  when(key: string): number;
  /** Failures of `key` counted so far. */
  numRequeues(key: string): number;
  /** `key` succeeded (or was given up): its count starts again. */
  forget(key: string): void;
}

/** base · 2^failures, at most `maxMs`. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(private readonly baseMs: number, private readonly maxMs: number) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long before n itself is a problem; min() caps it.
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}

/**
 * A token bucket of `burst` tokens refilled at `perSecond`: each call takes
 * one, reserving a future token when none is left, so the delays it hands
 * out grow with the number of retries waiting, whatever their keys.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(private readonly perSecond: number, private readonly burst: number, private readonly clock: Clock = realClock) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.perSecond) * 1000;
  }

  numRequeues(): number {
    return 0;
  }

  forget(): void {}
}

/** The longest delay of several limiters; requeues as the most counting one says. */
export class MaxOfRateLimiter implements RateLimiter {
  constructor(private readonly limiters: readonly RateLimiter[]) {}

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }
}

/** client-go's default controller rate limiter: 5 ms doubling to 1000 s per key, and 10 retries a second (burst 100) overall. */
export function controllerRateLimiter(clock: Clock = realClock, perItem = { baseMs: 5, maxMs: 1_000_000 }): RateLimiter {
  return new MaxOfRateLimiter([new ItemExponentialRateLimiter(perItem.baseMs, perItem.maxMs), new BucketRateLimiter(10, 100, clock)]);
}
