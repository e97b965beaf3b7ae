// Memory back after a burst of work. V8 grows its heap for a burst (tens of
// thousands of writes leave decoded objects, request state and controller
// work behind) and gives the pages back only when its memory reducer runs,
// which on a server whose controllers and timers keep it from looking idle
// can be a minute or more later: the heap held 229 MB 5 s after a load of
// 10,000 ServiceAccounts and 137 MB once the reducer ran at 65 s. And an
// ordinary full collection frees objects but keeps the pages they were
// scattered over (280 MB of heap for 140 MB in use). So the server's
// process collects once, itself, when a busy spell is over: after seconds
// whose event loop was mostly busy, ten seconds in a row that were nearly
// idle run one full collection that also compacts (V8's
// --compact-on-every-full-gc, set for that one collection), which gives the
// emptied pages back. It pauses the loop for a few hundred milliseconds at a
// moment nothing was asked for ten seconds. Only the CLI's process does this
// (a test process runs many servers).

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How often the event loop's use is looked at. */
const intervalMs = 2_000;
/** A spell this busy (share of the interval the loop ran) leaves garbage worth collecting. */
const busyShare = 0.3;
/** Below this the loop counts as idle. */
const idleShare = 0.05;
/**
 * Idle looks in a row before the collection: long enough that a pause
 * between phases of work (a client's think time, a benchmark's other side)
 * does not pay for a compaction and then for growing the heap again.
 */
const idleLooks = 5;

/** V8's full collection with compaction, reached without starting node with --expose-gc; undefined where that is refused. */
function compactingCollection(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc !== 'function') return undefined;
    return () => {
      setFlagsFromString('--compact-on-every-full-gc');
      try {
        (gc as () => void)();
      } finally {
        setFlagsFromString('--no-compact-on-every-full-gc');
      }
    };
  } catch {
    return undefined;
  }
}

/** Starts watching the event loop; answers a stop. `onCollect` hears how long each collection took. */
export function collectWhenIdle(onCollect?: (ms: number) => void): () => void {
  const gc = compactingCollection();
  if (!gc) return () => undefined;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let busySince = false;
  let idleTurns = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (share >= busyShare) {
      busySince = true;
      idleTurns = 0;
      return;
    }
    if (!busySince) return;
    idleTurns = share < idleShare ? idleTurns + 1 : 0;
    if (idleTurns < idleLooks) return;
    busySince = false;
    idleTurns = 0;
    const started = performance.now();
    gc();
    onCollect?.(performance.now() - started);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
