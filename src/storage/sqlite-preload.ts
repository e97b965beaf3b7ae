// A restart reads the store file's live keys in a worker thread while the
// server's own thread loads its modules and sets itself up. Read on the
// server's thread, 100,000 objects of 2 KiB took about 0.4 s of it (SQLite's
// rows and an allocation per value) just when the controllers' first lists
// and the first requests wanted it; the worker hands each page over with the
// values' memory transferred, so this thread only wraps them (about 0.1 s).
// The store then answers range reads at the snapshot's revision from it
// (the watch caches' first reads of their roots), for a short while.

import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { KeyValue, RangeOptions, RangeResult } from './backend.js';
import { compareKeys, prefixEnd, rangeStart } from './keys.js';

/** The file of the file-backed store in a data dir. */
export function storeFile(dataDir: string): string {
  return join(dataDir, 'store.db');
}

/** What the worker posts: pages of rows in key order, then done (the file closed) or failed. */
export type PreloadMessage =
  | { page: { keys: string[]; modRevisions: Float64Array; createRevisions: Float64Array; values: ArrayBuffer[] } }
  | { done: { revision: number; complete: boolean } }
  | { failed: string };

/**
 * The live keys of a store file at one revision, in key order (the store's:
 * UTF-8 bytes): all of them, or, when the server wanted the file before the
 * worker was through, every key up to `through` (the last one read).
 */
export interface StoreSnapshot {
  path: string;
  revision: number;
  items: KeyValue[];
  through?: string;
}

export interface StorePreload {
  readonly path: string;
  /**
   * The snapshot, once the worker has closed the file (the store may then
   * take its lock): what it has read when it is not through within
   * `graceMs` (a loaded machine: the server does not wait long for it);
   * undefined when it read nothing: no file yet, held by another process,
   * or anything else (the store then reads as before).
   */
  snapshot(graceMs: number): Promise<StoreSnapshot | undefined>;
}

/** Starts reading the store file at `path` in a worker thread. Never throws. */
export function preloadFile(path: string): StorePreload {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const result = new Promise<StoreSnapshot | undefined>((resolve) => {
    const items: KeyValue[] = [];
    let worker: Worker;
    try {
      worker = new Worker(new URL('./sqlite-preload-worker.js', import.meta.url), { workerData: { path, stop } });
    } catch {
      return resolve(undefined);
    }
    worker.on('message', (message: PreloadMessage) => {
      if ('page' in message) {
        const { keys, modRevisions, createRevisions, values } = message.page;
        for (let i = 0; i < keys.length; i++) {
          items.push({ key: keys[i]!, value: Buffer.from(values[i]!), createRevision: createRevisions[i]!, modRevision: modRevisions[i]! });
        }
      } else if ('done' in message) {
        const { revision, complete } = message.done;
        if (complete) resolve({ path, revision, items });
        else resolve(items.length > 0 ? { path, revision, items, through: items[items.length - 1]!.key } : undefined);
      } else {
        resolve(undefined);
      }
    });
    // A worker that failed otherwise has released the file once it has exited.
    worker.on('error', () => undefined);
    worker.once('exit', () => resolve(undefined));
  });
  return {
    path,
    snapshot(graceMs) {
      const timer = setTimeout(() => Atomics.store(stop, 0, 1), graceMs);
      return result.finally(() => clearTimeout(timer));
    },
  };
}

/**
 * A range read of the snapshot, as the store answers it at the snapshot's
 * revision; undefined when a partial snapshot does not hold the answer (the
 * store then reads the file at that revision).
 */
export function snapshotRange(snapshot: StoreSnapshot, prefix: string, options: RangeOptions): RangeResult | undefined {
  const { items, through } = snapshot;
  const from = firstAtOrAfter(items, rangeStart(prefix, options.startKey));
  const upper = prefixEnd(prefix);
  const to = upper === undefined ? items.length : firstAtOrAfter(items, upper);
  const limit = options.limit && options.limit > 0 ? options.limit : 0;
  const end = limit > 0 ? Math.min(to, from + limit) : to;
  const more = end < to;
  // Keys after `through` were not read: the answer must not need them, nor their count.
  const known = through === undefined || (upper !== undefined && compareKeys(upper, through) <= 0) || (more && options.skipCount);
  if (!known) return undefined;
  const page = from < end ? items.slice(from, end) : [];
  const count = more && !options.skipCount ? to - from : page.length + (more ? 1 : 0);
  return { items: page, revision: snapshot.revision, more, count };
}

function firstAtOrAfter(items: KeyValue[], key: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(items[mid]!.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
