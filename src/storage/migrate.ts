// Copies every key of one store into another (a data folder into a cluster
// store, or back). The values are copied byte for byte, so objects keep
// their names, uids and creation times; they get the target's revisions.
// The source is read at one revision, a page at a time, so the copy is a
// consistent snapshot even if something writes meanwhile.

import type { Backend } from './backend.js';
import { StorageError } from './backend.js';

export interface CopyOptions {
  /** Keys read per page. Default 500. */
  pageSize?: number;
  /** Told after each page how many keys were copied so far. */
  onProgress?(copied: number, total: number): void;
}

export interface CopyResult {
  copied: number;
  /** The source revision the snapshot was read at. */
  revision: number;
}

/** Copies every key of `from` into `to`, which must hold none of them. */
export async function copyStore(from: Backend, to: Backend, options: CopyOptions = {}): Promise<CopyResult> {
  const pageSize = options.pageSize ?? 500;
  const existing = await to.range('', { limit: 1 });
  if (existing.count > 0) {
    throw new StorageError('KeyExists', `the target store is not empty (it holds ${existing.count} keys, such as ${existing.items[0]!.key})`);
  }
  let page = await from.range('', { limit: pageSize });
  const revision = page.revision;
  const total = page.count;
  let copied = 0;
  for (;;) {
    // Writes to distinct keys may run together; the target orders them.
    await Promise.all(page.items.map((kv) => to.create(kv.key, kv.value)));
    copied += page.items.length;
    options.onProgress?.(copied, total);
    if (!page.more) break;
    const last = page.items[page.items.length - 1]!.key;
    page = await from.range('', { limit: pageSize, revision, startKey: `${last}\u0000` });
  }
  return { copied, revision };
}
