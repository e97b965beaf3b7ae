// Verified tokens by the SHA-256 of their text, so that a token costs one
// signature check, not one per request. Bounded (the least recently used
// entry goes first) and never kept past the token's own expiry. The token
// itself is not kept: a heap dump does not hand out credentials.

import { hash } from 'node:crypto';

export function tokenHash(token: string): string {
  // The one-shot form: about half the cost of createHash on every request.
  return hash('sha256', token, 'base64url');
}

export class VerifiedTokenCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly maxEntries = 4096) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value kept for `hash` while `now` (ms) is before its `until`. */
  get(hash: string, now: number): V | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    this.entries.delete(hash);
    if (now >= entry.until) return undefined;
    this.entries.set(hash, entry); // most recently used last
    return entry.value;
  }

  /** Keeps `value` until `until` (ms; Infinity for tokens that never expire). */
  set(hash: string, value: V, until: number): void {
    this.entries.delete(hash);
    this.entries.set(hash, { value, until });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(hash: string): void {
    this.entries.delete(hash);
  }
}
