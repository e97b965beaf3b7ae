// The latest value of every key under a root, as one array kept in byte
// order of the key. A list is two binary searches and a slice, so serving
// 10,000 items costs microseconds; a write is a binary search plus, for a new
// or removed key, one splice (a memmove, cheap at these sizes). A get is a
// hash lookup in a map beside the array: keys under one root share a long
// prefix, which every comparison of a binary search walks again.

import { compareKeys, prefixEnd, rangeStart } from '../keys.js';
import type { CachedKeyValue } from './types.js';

export interface SortedSlice {
  items: CachedKeyValue[];
  /** Keys under the prefix from the start key on, including those returned. */
  count: number;
}

export class SortedValues {
  private values: CachedKeyValue[] = [];
  private readonly byKey = new Map<string, CachedKeyValue>();

  get size(): number {
    return this.values.length;
  }

  /** Replace everything with `values` (a backend range, already in key order). */
  reset(values: CachedKeyValue[]): void {
    this.values = values;
    this.byKey.clear();
    for (const kv of values) this.byKey.set(kv.key, kv);
    for (let i = 1; i < values.length; i++) {
      if (compareKeys(values[i - 1]!.key, values[i]!.key) >= 0) {
        // Not expected from a conforming backend; sort rather than serve a wrong order.
        this.values = [...values].sort((a, b) => compareKeys(a.key, b.key));
        return;
      }
    }
  }

  get(key: string): CachedKeyValue | undefined {
    return this.byKey.get(key);
  }

  /** Store `kv`; returns the value it replaced. */
  put(kv: CachedKeyValue): CachedKeyValue | undefined {
    const i = this.lowerBound(kv.key);
    const old = this.values[i];
    this.byKey.set(kv.key, kv);
    if (old !== undefined && old.key === kv.key) {
      this.values[i] = kv;
      return old;
    }
    this.values.splice(i, 0, kv);
    return undefined;
  }

  /** Remove `key`; returns the value it held. */
  remove(key: string): CachedKeyValue | undefined {
    const i = this.lowerBound(key);
    const old = this.values[i];
    if (old === undefined || old.key !== key) return undefined;
    this.values.splice(i, 1);
    this.byKey.delete(key);
    return old;
  }

  /** Keys under `prefix` from `startKey` (inclusive) on, at most `limit` (0: all). */
  range(prefix: string, startKey: string | undefined, limit: number): SortedSlice {
    const from = this.lowerBound(rangeStart(prefix, startKey));
    const end = prefixEnd(prefix);
    const to = end === undefined ? this.values.length : this.lowerBound(end);
    const count = Math.max(0, to - from);
    const stop = limit > 0 ? Math.min(to, from + limit) : to;
    return { items: this.values.slice(from, Math.max(from, stop)), count };
  }

  /** Index of the first value whose key is not before `key`. */
  private lowerBound(key: string): number {
    const values = this.values;
    let lo = 0;
    let hi = values.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(values[mid]!.key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
