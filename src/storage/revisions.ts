// Checks shared by every backend so that they fail the same way.

import { StorageError } from './backend.js';

/**
 * The revision a read is served at: `requested` when given (non-zero),
 * otherwise the current one. Throws 'Compacted' below the compacted revision
 * and 'FutureRevision' above the current one.
 */
export function readRevision(requested: number | undefined, current: number, compacted: number): number {
  if (requested === undefined || requested === 0) return current;
  if (!Number.isSafeInteger(requested) || requested < 0) {
    throw new TypeError(`revision must be a non-negative integer, got ${requested}`);
  }
  if (requested < compacted) {
    throw new StorageError('Compacted', `revision ${requested} has been compacted (compacted revision ${compacted})`, undefined, compacted);
  }
  if (requested > current) {
    throw new StorageError('FutureRevision', `revision ${requested} is newer than the current revision ${current}`, undefined, current);
  }
  return requested;
}

export function compactedError(afterRevision: number, compacted: number): StorageError {
  return new StorageError('Compacted', `history after revision ${afterRevision} has been compacted (compacted revision ${compacted})`, undefined, compacted);
}

export function closedError(name: string): StorageError {
  return new StorageError('Unavailable', `the ${name} store is closed`);
}
