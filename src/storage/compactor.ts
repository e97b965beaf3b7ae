// Keeps a backend's history to a time window. Every tick it samples the
// current revision; the newest sample at least `retentionMs` old is the
// revision that was current back then, and history below it is compacted.

import type { Backend } from './backend.js';

/** What the compactor reads the time from and waits on; tests pass one that moves only when told. */
export interface CompactorClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: CompactorClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface CompactorOptions {
  /** Time between samples; defaults to a tenth of the retention (at least 100 ms). */
  intervalMs?: number;
  /** Told about failed compactions; they are retried on the next tick. */
  onError?(err: unknown): void;
  clock?: CompactorClock;
}

export interface Compactor {
  stop(): void;
  /** Settles when the tick under way (if any) has sampled and compacted. */
  settled(): Promise<void>;
}

interface Sample {
  at: number;
  revision: number;
}

export function startCompactor(backend: Backend, retentionMs: number, options: CompactorOptions = {}): Compactor {
  const intervalMs = options.intervalMs ?? Math.max(100, Math.min(retentionMs / 10, 60_000));
  const clock = options.clock ?? realClock;
  const samples: Sample[] = [];
  let stopped = false;
  let timer: unknown;
  let current: Promise<void> = Promise.resolve();

  async function tick(): Promise<void> {
    try {
      const now = clock.now();
      samples.push({ at: now, revision: await backend.currentRevision() });
      // The newest sample taken at least retentionMs ago marks the window's start.
      let cut = -1;
      while (cut + 1 < samples.length && samples[cut + 1]!.at <= now - retentionMs) cut++;
      if (cut < 0) return;
      const target = samples[cut]!.revision;
      samples.splice(0, cut);
      if (target > (await backend.compactedRevision())) await backend.compact(target);
    } catch (err) {
      options.onError?.(err);
    }
  }

  // The next tick is timed from the end of this one, so two never overlap.
  function run(): void {
    current = tick().then(() => {
      if (!stopped) timer = clock.setTimeout(run, intervalMs);
    });
  }
  run();
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    },
    settled: () => current,
  };
}
