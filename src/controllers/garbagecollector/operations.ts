// The collector's writes. Each reads the live object first and writes with a
// resourceVersion precondition, so a change made meanwhile by someone else
// is never overwritten: on a conflict the step is recomputed on the fresh
// object a few times, then left to the work queue's retry.

import { ApiClient, ApiObject, isConflict, isNotFound } from '../../client/types.js';
import { finalizersOf, ObjectIdentity, OwnerReference, ownerReferencesOf } from './references.js';
import { isDeepStrictEqual } from 'node:util';

const conflictRetries = 5;

export class GarbageCollectorStopped extends Error {
  constructor() {
    super('the garbage collector is stopped');
  }
}

export class Operations {
  constructor(private readonly client: ApiClient, private readonly running: () => boolean) {}

  private check(): void {
    if (!this.running()) throw new GarbageCollectorStopped();
  }

  /** The live object, or undefined when it is gone or another object (uid) took its name. */
  async get(id: ObjectIdentity): Promise<ApiObject | undefined> {
    this.check();
    const obj = await this.client.get(id.type, id.namespace, id.name);
    return obj?.metadata?.uid === id.uid ? obj : undefined;
  }

  /**
   * Deletes the object as last read (`latest`). The resourceVersion
   * precondition guards against an owner reference added meanwhile; when
   * only other fields changed, it is deleted by uid alone (as upstream).
   */
  async delete(id: ObjectIdentity, latest: ApiObject, policy: 'Orphan' | 'Background' | 'Foreground'): Promise<void> {
    this.check();
    const resourceVersion = latest.metadata?.resourceVersion;
    try {
      await this.client.delete(id.type, id.namespace, id.name, { propagationPolicy: policy, preconditions: { uid: id.uid, resourceVersion } });
      return;
    } catch (e) {
      if (!isConflict(e)) throw e;
      const live = await this.get(id);
      if (!live) return;
      if (!isDeepStrictEqual(ownerReferencesOf(live), ownerReferencesOf(latest))) throw e;
    }
    this.check();
    await this.client.delete(id.type, id.namespace, id.name, { propagationPolicy: policy, preconditions: { uid: id.uid } });
  }

  /** Rewrites the object's owner references with `change`; answers the object written (or as found when unchanged), undefined when gone. */
  async updateOwnerReferences(id: ObjectIdentity, change: (refs: readonly OwnerReference[]) => readonly OwnerReference[]): Promise<ApiObject | undefined> {
    return this.patchMetadata(id, (obj) => {
      const refs = ownerReferencesOf(obj);
      const next = change(refs);
      if (isDeepStrictEqual(next, refs)) return undefined;
      return { ownerReferences: next.length ? next : null };
    });
  }

  /** Removes references to the given owner uids. */
  removeOwnerReferences(id: ObjectIdentity, ownerUids: readonly string[]): Promise<ApiObject | undefined> {
    return this.updateOwnerReferences(id, (refs) => refs.filter((r) => !ownerUids.includes(r.uid)));
  }

  /** Turns blockOwnerDeletion off on every reference (breaks a foreground cycle). */
  unblockOwnerReferences(id: ObjectIdentity): Promise<ApiObject | undefined> {
    return this.updateOwnerReferences(id, (refs) => refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)));
  }

  /** Removes one finalizer; with none left on an object being deleted, the store removes the object. */
  async removeFinalizer(id: ObjectIdentity, finalizer: string): Promise<void> {
    await this.patchMetadata(id, (obj) => {
      const finalizers = finalizersOf(obj);
      if (!finalizers.includes(finalizer)) return undefined;
      const next = finalizers.filter((f) => f !== finalizer);
      return { finalizers: next.length ? next : null };
    });
  }

  /**
   * A JSON merge patch of metadata computed from the live object and pinned
   * to its resourceVersion (merge patches apply to every kind, custom ones
   * included). `compute` answers undefined when there is nothing to do.
   */
  private async patchMetadata(id: ObjectIdentity, compute: (obj: ApiObject) => Record<string, unknown> | undefined): Promise<ApiObject | undefined> {
    for (let attempt = 0; ; attempt++) {
      const obj = await this.get(id);
      if (!obj) return undefined;
      const metadata = compute(obj);
      if (!metadata) return obj;
      this.check();
      try {
        return await this.client.patch(id.type, id.namespace, id.name, 'merge', {
          metadata: { ...metadata, resourceVersion: obj.metadata!.resourceVersion },
        });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (!isConflict(e) || attempt + 1 >= conflictRetries) throw e;
      }
    }
  }
}
