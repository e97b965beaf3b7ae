// Callers waiting for the cache to reach a revision ("not older than" reads,
// watches from a resourceVersion the cache has not seen yet). Each waits at
// most its timeout, then fails with 'FutureRevision', which the server turns
// into 504 "Too large resource version" with Retry-After.

import { StorageError } from '../backend.js';

interface Waiter {
  revision: number;
  resolve(): void;
  reject(err: StorageError): void;
  timer: NodeJS.Timeout;
}

export class FreshnessWaiters {
  private readonly waiters = new Set<Waiter>();

  get size(): number {
    return this.waiters.size;
  }

  /** Resolves once advance() reports `revision` or more; `current()` words the timeout error. */
  wait(revision: number, timeoutMs: number, current: () => number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        revision,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const now = current();
          reject(new StorageError('FutureRevision', `Too large resource version: ${revision}, current: ${now}`, undefined, now));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Release every waiter at or below `revision`. */
  advance(revision: number): void {
    if (this.waiters.size === 0) return;
    for (const waiter of this.waiters) {
      if (waiter.revision <= revision) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** Fail every waiter (the cache stopped). */
  rejectAll(err: StorageError): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
    }
    this.waiters.clear();
  }
}
