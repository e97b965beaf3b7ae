// What a single guarded write does, decided from the key's current value.
// Both backends run every write through planWrite so the guards agree.

import { KeyValue, StorageError, tooLargeMessage, WatchEvent } from './backend.js';
import { ownCopy } from './bytes.js';

export type WriteOp =
  | { kind: 'create'; key: string; value: Buffer }
  | { kind: 'update'; key: string; value: Buffer; expectedModRevision: number }
  | { kind: 'delete'; key: string; expectedModRevision?: number };

export interface WritePlan {
  /** What the write call resolves to (for a delete: the last value at the delete's revision). */
  result: KeyValue;
  /** The event watchers see. */
  event: WatchEvent;
  /** The value the key holds afterwards; undefined once deleted. */
  next: KeyValue | undefined;
}

/** Throws the StorageError the guard calls for, else describes the write at `revision`. */
export function planWrite(op: WriteOp, current: KeyValue | undefined, revision: number): WritePlan {
  const { key } = op;
  switch (op.kind) {
    case 'create': {
      if (current) throw new StorageError('KeyExists', `key ${key} already exists`, current);
      const kv: KeyValue = { key, value: op.value, createRevision: revision, modRevision: revision };
      return { result: kv, next: kv, event: { type: 'put', kv, revision } };
    }
    case 'update': {
      if (!current) throw new StorageError('KeyNotFound', `key ${key} not found`);
      checkGuard(current, op.expectedModRevision);
      const kv: KeyValue = { key, value: op.value, createRevision: current.createRevision, modRevision: revision };
      return { result: kv, next: kv, event: { type: 'put', kv, prevKv: current, revision } };
    }
    case 'delete': {
      if (!current) throw new StorageError('KeyNotFound', `key ${key} not found`);
      if (op.expectedModRevision !== undefined) checkGuard(current, op.expectedModRevision);
      const kv: KeyValue = { ...current, modRevision: revision };
      return { result: kv, next: undefined, event: { type: 'delete', kv, prevKv: current, revision } };
    }
  }
}

function checkGuard(current: KeyValue, expected: number): void {
  if (current.modRevision !== expected) {
    throw new StorageError(
      'RevisionMismatch',
      `key ${current.key} is at revision ${current.modRevision}, not ${expected}`,
      current,
    );
  }
}

/**
 * Throws 'TooLarge' when `op` would store more than `maxValueBytes`. Checked
 * before a write is queued, so a refused value takes no revision and never
 * reaches the store, its history or its watchers.
 */
export function checkValueSize(op: WriteOp, maxValueBytes: number): void {
  if (op.kind !== 'delete' && op.value.byteLength > maxValueBytes) {
    throw new StorageError('TooLarge', tooLargeMessage);
  }
}

/**
 * `op` as a store keeps it: its value checked against the limit first (a
 * refused value of tens of megabytes is not copied), then in an allocation
 * of its own (callers may reuse their buffers).
 */
export function ownedWrite(op: WriteOp, maxValueBytes: number): WriteOp {
  checkValueSize(op, maxValueBytes);
  return op.kind === 'delete' ? op : { ...op, value: ownCopy(op.value) };
}

/** A size limit as a store takes it: a positive whole number of bytes. */
export function validMaxValueBytes(maxValueBytes: number): number {
  if (!Number.isSafeInteger(maxValueBytes) || maxValueBytes <= 0) {
    throw new TypeError(`a stored value limit is a positive number of bytes, got ${maxValueBytes}`);
  }
  return maxValueBytes;
}
