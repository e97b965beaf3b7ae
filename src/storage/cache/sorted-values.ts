// The latest value of every key under a root, kept in byte order of the key
// as a list of chunks of at most a few hundred values each. A list is two
// binary searches and copies of the chunks between, so serving 10,000 items
// costs microseconds; a write is a binary search over the chunks' first keys,
// one in the chunk, and for a new or removed key a splice of that chunk only.
// (One array of every value cost each new key a move of the whole array: 27 µs
// at 30,000 keys, growing with the collection.) A get is a hash lookup in a
// map beside the chunks: keys under one root share a long prefix, which every
// comparison of a binary search walks again.

import { compareKeys, prefixEnd, rangeStart } from '../keys.js';
import type { CachedKeyValue } from './types.js';

export interface SortedSlice {
  items: CachedKeyValue[];
  /** Keys under the prefix from the start key on, including those returned. */
  count: number;
}

/** A place between values: before `chunks[chunk][index]`, or at the end of the last chunk. */
interface Position {
  chunk: number;
  index: number;
}

/** A chunk grown past this is split in two halves. */
const defaultChunkLimit = 512;

export class SortedValues {
  /** Never empty chunks; the first key of each is above every key of the one before. */
  private chunks: CachedKeyValue[][] = [];
  /** Absent when get() is not wanted (an index's groups): a map entry per value is most of their memory. */
  private readonly byKey: Map<string, CachedKeyValue> | undefined;
  private count = 0;

  /** `chunkLimit` is for tests, which split chunks with a few keys; `keyed`: get() by a map beside the chunks. */
  constructor(private readonly chunkLimit = defaultChunkLimit, keyed = true) {
    this.byKey = keyed ? new Map() : undefined;
  }

  get size(): number {
    return this.count;
  }

  /** Replace everything with `values` (a backend range, already in key order). */
  reset(values: CachedKeyValue[]): void {
    let ordered = values;
    for (let i = 1; i < values.length; i++) {
      if (compareKeys(values[i - 1]!.key, values[i]!.key) >= 0) {
        // Not expected from a conforming backend; sort rather than serve a wrong order (the last value of a key wins).
        const latest = new Map<string, CachedKeyValue>();
        for (const kv of values) latest.set(kv.key, kv);
        ordered = [...latest.values()].sort((a, b) => compareKeys(a.key, b.key));
        break;
      }
    }
    this.byKey?.clear();
    if (this.byKey) for (const kv of ordered) this.byKey.set(kv.key, kv);
    this.count = ordered.length;
    const half = this.chunkLimit >>> 1 || 1;
    this.chunks = [];
    for (let i = 0; i < ordered.length; i += half) this.chunks.push(ordered.slice(i, i + half));
  }

  get(key: string): CachedKeyValue | undefined {
    if (this.byKey) return this.byKey.get(key);
    const found = this.at(this.lowerBound(key));
    return found?.key === key ? found : undefined;
  }

  /** Store `kv`; returns the value it replaced. */
  put(kv: CachedKeyValue): CachedKeyValue | undefined {
    this.byKey?.set(kv.key, kv);
    if (this.chunks.length === 0) {
      this.chunks.push([kv]);
      this.count++;
      return undefined;
    }
    // A new key goes into the chunk whose keys it falls among, else the one before it.
    let at = this.lowerBound(kv.key);
    const found = this.at(at);
    if (found !== undefined && found.key === kv.key) {
      this.chunks[at.chunk]![at.index] = kv;
      return found;
    }
    if (at.chunk === this.chunks.length || (at.index === 0 && at.chunk > 0)) at = { chunk: at.chunk - 1, index: this.chunks[at.chunk - 1]!.length };
    const chunk = this.chunks[at.chunk]!;
    chunk.splice(at.index, 0, kv);
    this.count++;
    if (chunk.length > this.chunkLimit) this.chunks.splice(at.chunk + 1, 0, chunk.splice(chunk.length >>> 1));
    return undefined;
  }

  /** Remove `key`; returns the value it held. */
  remove(key: string): CachedKeyValue | undefined {
    const at = this.lowerBound(key);
    const old = this.at(at);
    if (old === undefined || old.key !== key) return undefined;
    const chunk = this.chunks[at.chunk]!;
    chunk.splice(at.index, 1);
    if (chunk.length === 0) this.chunks.splice(at.chunk, 1);
    this.byKey?.delete(key);
    this.count--;
    return old;
  }

  /** Keys under `prefix` from `startKey` (inclusive) on, at most `limit` (0: all). */
  range(prefix: string, startKey: string | undefined, limit: number): SortedSlice {
    const from = this.lowerBound(rangeStart(prefix, startKey));
    const end = prefixEnd(prefix);
    const to = end === undefined ? { chunk: this.chunks.length, index: 0 } : this.lowerBound(end);
    let count = 0;
    for (let c = from.chunk; c < to.chunk; c++) count += this.chunks[c]!.length;
    count = Math.max(0, count + to.index - from.index);
    const wanted = limit > 0 ? Math.min(count, limit) : count;
    if (wanted === 0) return { items: [], count };
    const first = this.chunks[from.chunk]!;
    if (from.index + wanted <= first.length) return { items: first.slice(from.index, from.index + wanted), count };
    const parts = [first.slice(from.index)];
    let taken = parts[0]!.length;
    for (let c = from.chunk + 1; taken < wanted; c++) {
      const chunk = this.chunks[c]!;
      const part = taken + chunk.length <= wanted ? chunk : chunk.slice(0, wanted - taken);
      parts.push(part);
      taken += part.length;
    }
    return { items: ([] as CachedKeyValue[]).concat(...parts), count };
  }

  private at(p: Position): CachedKeyValue | undefined {
    return this.chunks[p.chunk]?.[p.index];
  }

  /** The place of the first value whose key is not before `key`; past a chunk's end means the next chunk's start. */
  private lowerBound(key: string): Position {
    const chunks = this.chunks;
    // The last chunk whose first key is not after `key`.
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(chunks[mid]![0]!.key, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    const chunk = lo - 1;
    if (chunk < 0) return { chunk: 0, index: 0 };
    const values = chunks[chunk]!;
    let a = 0;
    let b = values.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (compareKeys(values[mid]!.key, key) < 0) a = mid + 1;
      else b = mid;
    }
    return a === values.length ? { chunk: chunk + 1, index: 0 } : { chunk, index: a };
  }
}
