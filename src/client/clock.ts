// The clock the controller kit reads and sets its timers on. Injectable, so
// that tests of backoff, delayed requeues and resyncs move time instead of
// waiting for it.

export interface TimerHandle {
  /** Lets the process exit while the timer waits (as Node's timers). */
  unref?(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The longest delay setTimeout keeps (2^31 - 1 ms); longer ones would fire at once. */
export const maxTimerMs = 2 ** 31 - 1;

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), maxTimerMs));
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
