// A clock for tests: time moves only when the test says, and the timers due
// by then fire in order.

import type { Clock, TimerHandle } from '../../src/client/clock.js';

interface Timer extends TimerHandle {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(private current = 1_000_000) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const t: Timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(t);
    return t;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }

  /** Timers waiting, sorted by when they fire: their delays from now. */
  pending(): number[] {
    return this.timers.map((t) => t.at - this.current).sort((a, b) => a - b);
  }

  /** Moves time on by `ms`, firing each timer due on the way at its own time. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = end;
  }
}
