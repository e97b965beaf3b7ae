// Waiting for what controllers do in their own time: poll until it holds,
// failing with what was awaited (and the last value seen) when it never does.
// The one poller of the suite: a test that waits for a condition uses it
// rather than a fixed sleep or a loop of its own.

import assert from 'node:assert/strict';

type Answer<T> = T | undefined | false;

/**
 * Between polls. Not shorter: a wait that ends within a millisecond or two of
 * its condition lets some tests race what the server does right after (a
 * retry scheduled once an answer is read), which 50 ms has always covered.
 */
const pauseMs = 50;

/**
 * Polls `check` until it answers a value other than undefined or false, at
 * most `ms`; answers that value. A check that throws fails the wait at once
 * (wrap it to retry through errors).
 */
export async function eventually<T>(what: string, check: () => Promise<Answer<T>> | Answer<T>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) assert.fail(`timed out waiting for: ${what} (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}
