// Reading the store ahead while the server starts: for the embedded file, a
// worker thread reads its live keys while the server loads its modules
// (sqlite-preload.ts); other stores are not read ahead.

import type { BackendKind } from './kinds.js';
import { preloadFile, storeFile, type StorePreload } from './sqlite-preload.js';

export type { StorePreload, StoreSnapshot } from './sqlite-preload.js';

/** Starts reading the store of `kind` in `dataDir` ahead; undefined for a store that is not read ahead. */
export function preloadStore(kind: BackendKind, dataDir: string): StorePreload | undefined {
  return kind === 'sqlite' ? preloadFile(storeFile(dataDir)) : undefined;
}
