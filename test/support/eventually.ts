// Waiting for what controllers do in their own time: poll until it holds,
// failing with what was awaited (and the last value seen) when it never does.

import assert from 'node:assert/strict';

/** Polls `check` until it answers a value other than undefined or false, at most `ms`; answers that value. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    last = value;
    if (Date.now() >= deadline) assert.fail(`timed out waiting for: ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
