// The one place where storage failures become API errors. A lost race
// (another writer changed or created the key first) is not an error at all:
// the update loop runs again. The rest reach the client as a Status.

import { errors } from '../machinery/errors.js';
import { StorageError } from '../storage/backend.js';

/** Whether a failed write lost a compare-and-swap to another writer (the caller tries again). */
export function lostRace(e: unknown): boolean {
  return e instanceof StorageError && (e.code === 'RevisionMismatch' || e.code === 'KeyNotFound' || e.code === 'KeyExists');
}

/** Throws the API error a storage failure stands for; anything else is rethrown as it is (a 500). */
export function storageFailure(e: unknown): never {
  if (e instanceof StorageError) {
    switch (e.code) {
      case 'Unavailable':
        throw errors.serviceUnavailable(`the storage is unavailable: ${e.message}`);
      case 'Timeout':
        throw errors.timeout(`the storage did not answer in time: ${e.message}`, 1);
      case 'Compacted':
        throw errors.expired(`too old resource version: ${e.revision ?? ''}`);
      case 'FutureRevision':
        throw errors.tooLargeResourceVersion(e.revision ?? 0, e.revision ?? 0, 1);
      case 'TooLarge':
        // Nothing was written: the encoded object is over --max-stored-object-bytes (or the cluster store's own limit).
        throw errors.storedObjectTooLarge(e.message);
      default:
        break;
    }
  }
  throw e;
}
