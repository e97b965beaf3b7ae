// Keeps a backend's history to a time window. Every tick it samples the
// current revision; the newest sample at least `retentionMs` old is the
// revision that was current back then, and history below it is compacted.

import type { Backend } from './backend.js';

export interface CompactorOptions {
  /** Time between samples; defaults to a tenth of the retention (at least 100 ms). */
  intervalMs?: number;
  /** Told about failed compactions; they are retried on the next tick. */
  onError?(err: unknown): void;
}

interface Sample {
  at: number;
  revision: number;
}

export function startCompactor(backend: Backend, retentionMs: number, options: CompactorOptions = {}): { stop(): void } {
  const intervalMs = options.intervalMs ?? Math.max(100, Math.min(retentionMs / 10, 60_000));
  const samples: Sample[] = [];
  let running = false;
  let stopped = false;

  async function tick(): Promise<void> {
    if (running || stopped) return;
    running = true;
    try {
      const now = Date.now();
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
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  void tick();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
