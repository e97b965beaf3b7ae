// Picks and opens a storage backend; the rest of the server sees only Backend.

import { join } from 'node:path';
import type { Backend } from './backend.js';
import { MemoryBackend } from './memory.js';
import { openSqliteBackend } from './sqlite.js';

export type BackendKind = 'sqlite' | 'memory';

/** The store for `kind`; the file-backed one lives at `${dataDir}/store.db`. */
export function openBackend(kind: BackendKind, dataDir: string): Backend {
  switch (kind) {
    case 'memory':
      return new MemoryBackend();
    case 'sqlite':
      return openSqliteBackend(join(dataDir, 'store.db'));
    default:
      throw new Error(`unknown storage backend ${String(kind)}`);
  }
}

export { startCompactor } from './compactor.js';
export type { CompactorOptions } from './compactor.js';
export { MemoryBackend } from './memory.js';
export { SqliteBackend, openSqliteBackend } from './sqlite.js';
export * from './backend.js';
