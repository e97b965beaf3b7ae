// The controllers' work queue and its rate limiters, on a fake clock: a
// bounded number of syncs at once, one sync per key however often it is
// added, backoff that doubles up to its cap, an overall retry bucket, forget,
// giving up after the retry limit (logged), and a shutdown that waits for the
// running syncs but starts no more.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue, type QueueGauges, type QueueObserver, type WorkQueueMetrics } from '../../../src/client/workqueue.js';
import { BucketRateLimiter, controllerRateLimiter, ItemExponentialRateLimiter } from '../../../src/client/ratelimit.js';
import { FakeClock } from '../../support/clock.js';

/** Lets the queue's workers (started on later turns of the event loop) run as far as they can. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A sync whose calls stay running until the test releases them. */
function heldSync() {
  const calls: string[] = [];
  const releases: (() => void)[] = [];
  let running = 0;
  let peak = 0;
  const sync = (key: string) => new Promise<void>((resolve) => {
    calls.push(key);
    running++;
    peak = Math.max(peak, running);
    releases.push(() => { running--; resolve(); });
  });
  return {
    sync, calls,
    get running() { return running; },
    get peak() { return peak; },
    releaseAll() { for (const r of releases.splice(0)) r(); },
  };
}

test('at most `workers` syncs run at once; the rest wait their turn and all are synced', async () => {
  const held = heldSync();
  const queue = new WorkQueue(held.sync, { name: 'bounded', workers: 3 });
  for (let i = 0; i < 10; i++) queue.add(`k${i}`);
  await settle();
  assert.equal(held.running, 3);
  assert.equal(queue.length, 7);
  while (held.calls.length < 10) {
    held.releaseAll();
    await settle();
  }
  held.releaseAll();
  await settle();
  assert.deepEqual(held.calls, Array.from({ length: 10 }, (_, i) => `k${i}`));
  assert.equal(held.peak, 3);
  assert.equal(queue.peakRunning, 3);
});

test('a key added while it waits is synced once; added while its sync runs, once more after it, never twice at once', async () => {
  const held = heldSync();
  const queue = new WorkQueue(held.sync, { name: 'dedup', workers: 4 });
  for (let i = 0; i < 5; i++) queue.add('a');
  await settle();
  assert.deepEqual(held.calls, ['a']);
  queue.add('a');
  queue.add('a');
  await settle();
  assert.deepEqual(held.calls, ['a'], 'not a second sync while the first runs');
  held.releaseAll();
  await settle();
  assert.deepEqual(held.calls, ['a', 'a'], 'one more sync for the adds made meanwhile');
  held.releaseAll();
  await settle();
  assert.equal(held.calls.length, 2);
  assert.equal(held.peak, 1);
});

test('per-key backoff doubles from its base and stops at its cap; forget starts it again', () => {
  const limiter = new ItemExponentialRateLimiter(5, 1000);
  const delays = Array.from({ length: 10 }, () => limiter.when('k'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
  assert.equal(limiter.numRequeues('k'), 10);
  assert.equal(limiter.when('other'), 5, 'keys back off independently');
  limiter.forget('k');
  assert.equal(limiter.numRequeues('k'), 0);
  assert.equal(limiter.when('k'), 5);
  // Far past the cap, the power of two does not overflow into something odd.
  for (let i = 0; i < 2000; i++) limiter.when('k');
  assert.equal(limiter.when('k'), 1000);
});

test('the overall bucket lets a burst through, then spaces retries at its rate, refilling with time', () => {
  const clock = new FakeClock();
  const bucket = new BucketRateLimiter(10, 100, clock);
  for (let i = 0; i < 100; i++) assert.equal(bucket.when(), 0);
  assert.equal(bucket.when(), 100);
  assert.equal(bucket.when(), 200);
  clock.advance(1_000);
  // Ten tokens came back, two of which were already promised.
  assert.equal(bucket.when(), 0);
  const limiter = controllerRateLimiter(clock);
  assert.equal(limiter.when('fresh'), 5, 'the default: the larger of the per-key and the overall delay');
});

test('a failing key is retried after the backoff delays, then given up and logged after maxRetries', async () => {
  const clock = new FakeClock();
  const logged: { msg: string; extra?: object }[] = [];
  let calls = 0;
  const queue = new WorkQueue(async () => { calls++; throw new Error('boom'); }, {
    name: 'retries', clock, maxRetries: 3, rateLimiter: new ItemExponentialRateLimiter(5, 1000),
    log: (msg, extra) => logged.push({ msg, extra }), failure: 'retries sync failed',
  });
  queue.add('k');
  await settle();
  assert.equal(calls, 1);
  for (const delay of [5, 10, 20]) {
    assert.deepEqual(clock.pending(), [delay]);
    clock.advance(delay - 1);
    await settle();
    assert.equal(calls, 1 + [5, 10, 20].indexOf(delay), `not before ${delay} ms`);
    clock.advance(1);
    await settle();
  }
  assert.equal(calls, 4);
  assert.deepEqual(clock.pending(), [], 'given up: no retry scheduled');
  assert.equal(queue.numRequeues('k'), 0, 'and forgotten');
  assert.equal(logged.length, 4);
  assert.match(logged[3]!.msg, /giving up after 3 retries/);
  assert.match(JSON.stringify(logged[3]!.extra), /boom/);
});

test('a success forgets the key\'s failures, and forget does so by hand', async () => {
  const clock = new FakeClock();
  let fail = true;
  const queue = new WorkQueue(async () => { if (fail) throw new Error('not yet'); }, {
    name: 'forget', clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000),
  });
  queue.add('k');
  await settle();
  clock.advance(5);
  await settle();
  assert.equal(queue.numRequeues('k'), 2);
  fail = false;
  clock.advance(10);
  await settle();
  assert.equal(queue.numRequeues('k'), 0);
  queue.addRateLimited('j');
  queue.addRateLimited('j');
  assert.equal(queue.numRequeues('j'), 2);
  queue.forget('j');
  assert.equal(queue.numRequeues('j'), 0);
});

test('addAfter keeps the earliest time asked for a key', async () => {
  const clock = new FakeClock();
  const held = heldSync();
  const queue = new WorkQueue(held.sync, { name: 'later', clock });
  queue.addAfter('k', 1_000);
  queue.addAfter('k', 300);
  queue.addAfter('k', 5_000);
  assert.deepEqual(clock.pending(), [300]);
  clock.advance(300);
  await settle();
  assert.deepEqual(held.calls, ['k']);
  held.releaseAll();
});

test('shutdown takes no more keys, drops the waiting ones and resolves once the running syncs are done', async () => {
  const clock = new FakeClock();
  const held = heldSync();
  const queue = new WorkQueue(held.sync, { name: 'drain', workers: 2, clock });
  for (const k of ['a', 'b', 'c', 'd']) queue.add(k);
  queue.addAfter('later', 100);
  await settle();
  assert.equal(held.running, 2);
  let drained = false;
  const done = queue.shutDown().then(() => { drained = true; });
  queue.add('e');
  await settle();
  assert.equal(drained, false, 'waits for the running syncs');
  assert.deepEqual(clock.pending(), [], 'delayed adds are cancelled');
  held.releaseAll();
  await done;
  await settle();
  assert.deepEqual(held.calls, ['a', 'b'], 'nothing started after the shutdown');
  assert.equal(queue.length, 0);
});

test('the metrics observer hears of adds, waits, work and retries; the gauges read the live queue', async () => {
  const clock = new FakeClock();
  const seen = { added: 0, started: [] as number[], finished: [] as number[], retried: 0, closed: 0 };
  let gauges: (() => QueueGauges) | undefined;
  const metrics: WorkQueueMetrics = {
    queue(name, read): QueueObserver {
      assert.equal(name, 'observed');
      gauges = read;
      return {
        added: () => { seen.added++; },
        started: (s) => { seen.started.push(s); },
        finished: (s) => { seen.finished.push(s); },
        retried: () => { seen.retried++; },
        closed: () => { seen.closed++; },
      };
    },
  };
  const held = heldSync();
  const queue = new WorkQueue(held.sync, { name: 'observed', workers: 1, clock, metrics });
  queue.add('a');
  queue.add('b');
  queue.add('b');
  assert.equal(seen.added, 2, 'a duplicate is not an add');
  assert.equal(gauges!().depth, 2);
  clock.advance(250);
  await settle();
  assert.deepEqual(seen.started, [0.25]);
  clock.advance(2_000);
  assert.deepEqual(gauges!(), { depth: 1, unfinishedSeconds: 2, longestRunningSeconds: 2 });
  held.releaseAll();
  await settle();
  assert.deepEqual(seen.finished, [2]);
  queue.addRateLimited('c');
  assert.equal(seen.retried, 1);
  held.releaseAll();
  await queue.shutDown();
  assert.equal(seen.closed, 1);
});
