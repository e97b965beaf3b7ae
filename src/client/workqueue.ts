// A work queue for controllers: keys are processed one at a time each, a key
// added while queued is not queued twice, a failed key comes back later with
// growing delays, and a key can ask to be looked at again after a while.

export type Worker = (key: string) => Promise<void>;

/** The longest delay setTimeout keeps (2^31 - 1 ms); longer ones fire at once. */
const maxTimerMs = 2 ** 31 - 1;

export class WorkQueue {
  private readonly queued = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly worker: Worker, private readonly onError: (key: string, e: unknown) => void = () => undefined) {}

  add(key: string): void {
    if (this.stopped) return;
    if (this.running.has(key)) { this.dirty.add(key); return; }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    setImmediate(() => void this.run(key));
  }

  /** Looks at `key` again after `ms` (at most about 24 days: timers cannot wait longer, and a worker that looks early looks again). */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => { this.timers.delete(t); this.add(key); }, Math.min(ms, maxTimerMs));
    t.unref();
    this.timers.add(t);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  private async run(key: string): Promise<void> {
    this.queued.delete(key);
    if (this.stopped) return;
    this.running.add(key);
    try {
      await this.worker(key);
      this.failures.delete(key);
    } catch (e) {
      // A key that fails because the queue stopped under it (the server stopping) is no failure to report.
      if (this.stopped) return;
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      this.onError(key, e);
      this.addAfter(key, Math.min(50 * 2 ** n, 10_000));
    } finally {
      this.running.delete(key);
      if (this.dirty.delete(key)) this.add(key);
    }
  }
}
