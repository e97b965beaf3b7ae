// The update loop every write to an existing object runs in, as upstream's
// GuaranteedUpdate: read the stored value, let an attempt compute and
// compare-and-swap the new one, and when another writer got in first, run
// the attempt again on the fresh value. An attempt answers `retry` for a
// lost race; anything else ends the loop.

import { errors, type Qualified } from '../machinery/errors.js';
import type { Backend, KeyValue } from '../storage/backend.js';
import type { CollectionReader } from './reader.js';
import { storageFailure } from './storage-errors.js';
import type { FinishWrite } from './hooks.js';

/**
 * A lost compare-and-swap means another writer got in first, so every round
 * makes progress somewhere: writes without a precondition retry until they
 * win. The bound only stops a broken backend from looping forever; N
 * concurrent writers need up to N rounds.
 */
const maxUpdateRetries = 10_000;

/** What an attempt answers when it lost the race and must run again. */
export const retry = Symbol('retry');
export type Attempt<T> = T | typeof retry;

/**
 * Runs `attempt` on the stored value of `key` (undefined when absent) until
 * it answers something other than `retry`. The first round starts from the
 * watch cache's copy when it has one, as upstream does with a cached object:
 * no read, and often no decoding. That copy may be a little behind, so
 * whatever the round concludes from it, a failure as well as a lost race, is
 * concluded again from the store.
 */
export async function updateLoop<T>(reader: CollectionReader, backend: Backend, qualified: Qualified, key: string, name: string,
  attempt: (current: KeyValue | undefined) => Promise<Attempt<T>>): Promise<T> {
  let current = reader.cachedValue(key);
  let fresh = current === undefined;
  if (fresh) current = await backend.get(key).catch(storageFailure);
  for (let round = 0; round < maxUpdateRetries; round++) {
    let result: Attempt<T>;
    try {
      result = await attempt(current);
    } catch (e) {
      if (fresh) throw e;
      result = retry;
    }
    if (result !== retry) return result;
    current = await backend.get(key).catch(storageFailure);
    fresh = true;
  }
  throw errors.staleObject(qualified, name);
}

/** What ends a write something reserved for: a hook's FinishWrite, or one that has nothing to do when the write stored. */
export type Finish = FinishWrite | ((stored: boolean) => Promise<void> | undefined);

/**
 * Runs `work`, the rest of a write something reserved for (a hook, an
 * admission plugin), and tells it whether the write stored (a failure or a
 * lost race: not). A finish with nothing to do answers no promise, and is
 * not waited for.
 */
export async function finishedBy<T>(finish: Finish | undefined, work: () => Promise<Attempt<T>>): Promise<Attempt<T>> {
  if (!finish) return work();
  let result: Attempt<T>;
  try {
    result = await work();
  } catch (e) {
    const finishing = finish(false);
    if (finishing) await finishing;
    throw e;
  }
  const finishing = finish(result !== retry);
  if (finishing) await finishing;
  return result;
}
