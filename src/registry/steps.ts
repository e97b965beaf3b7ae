// The steps of a write between its change and the store, in upstream's
// order: managed fields (what the client sent, so that nothing the server or
// a webhook adds later belongs to a manager); mutating admission; the
// kind's preparation (uid, times, generation, generated selectors, the write
// hooks' allocations); validation; validating admission; the commit. What
// the server owns is also put in place before mutating admission, so that
// webhooks see the uid and times a create will have (and the parts a write
// may not change as stored), and again on what they return; the kind's
// preparation runs once, after admission (serverfields.ts). The store's
// roads (store.ts) choose which object is written; these steps are the same
// for every road.

import { randomUUID } from 'node:crypto';
import { ApiError, errors, FieldError } from '../machinery/errors.js';
import { deepEqual } from '../machinery/equal.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../machinery/objectmeta.js';
import { rfc3339Now } from '../machinery/time.js';
import { isViewSubresource, type KindDefinition, type KubeObject, type PartSubresource } from '../api/kind.js';
import { asTypedEncoding } from '../api/omitempty.js';
import type { Backend, KeyValue } from '../storage/backend.js';
import type { Admission, AdmissionRequest, OperationOptions } from '../admission/types.js';
import { admitAll } from '../admission/chain.js';
import { admissionRequest, guardManagedFields, type AdmittedAt } from './admissionrequests.js';
import { trackWrite } from './managed.js';
import { noteStored, toStoredBytes } from './objects.js';
import { lostRace, storageFailure } from './storage-errors.js';
import type { WriteHooks } from './hooks.js';
import { terminating } from './graceful.js';
import { finishedBy, retry, type Attempt, type Finish } from './updateloop.js';
import type { Changed } from './changes.js';
import type { ServerOwnedFields, CreateStamp } from './serverfields.js';
import { serverManager, type RequestScope, type WriteOptions, type WriteTarget } from './writeoptions.js';

/** One write as the steps carry it: the operation's options, the request's scope, where it lands, its options as admission reports them. */
export interface Write {
  opts: WriteOptions;
  scope: RequestScope;
  target: WriteTarget;
  reported: OperationOptions;
}

export class WriteSteps {
  /** What the kind's writes do beside storing (see hooks.ts); none unless the server adds them. */
  hooks: WriteHooks = {};

  constructor(
    private readonly kind: KindDefinition,
    private readonly backend: Backend,
    private readonly admission: Admission,
    /** What the server owns in the objects of this kind, put back after every step a client or webhook acts in. */
    private readonly owned: ServerOwnedFields,
    /** The storage key of an object of the kind. */
    private readonly key: (namespace: string | undefined, name: string) => string,
  ) {}

  private get namespaced(): boolean {
    return this.kind.scope === 'Namespaced';
  }

  private invalid(obj: KubeObject, errs: FieldError[]): ApiError {
    return errors.invalid(this.kind.group, this.kind.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errs);
  }

  private metaRules() {
    return { namespaced: this.namespaced, nameCheck: this.kind.nameCheck };
  }

  /** Where a write is admitted: this store's kind, at the version its path names, through its sub-resource. */
  admittedAt(target: WriteTarget): AdmittedAt {
    return { kind: this.kind, requestedAs: target.codec?.served, subresource: target.subresource, namespaced: this.namespaced };
  }

  /** The admission a write goes through: none when its request was admitted as a whole. */
  admissionOf(scope: RequestScope): Admission {
    return scope.admitted ? admitAll : this.admission;
  }

  /** The managed fields of a non-apply write by the write's manager, at the version its path names. */
  private track(live: KubeObject | undefined, next: KubeObject, w: Write): Promise<KubeObject> {
    return trackWrite(this.kind, live, next, w.opts.manager ?? serverManager, w.target.subresource, w.target.codec, w.scope.clientGroup);
  }

  /**
   * What ends a write admission may have reserved for (quota): when it was
   * not stored, plugins give back what they reserved; when it was, nothing
   * to do (and no promise to wait for).
   */
  private releaseUnlessStored(admission: Admission, request: AdmissionRequest): Finish | undefined {
    return admission.abandon ? (stored) => (stored ? undefined : admission.abandon!(request)) : undefined;
  }

  /** Whether something still holds the object once deletion is asked: finalizers, or the kind's own rule. */
  deletionHeld(obj: KubeObject): boolean {
    return (obj.metadata?.finalizers ?? []).length > 0 || terminating(obj) || (this.kind.strategy.holdsDeletion?.(obj) ?? false);
  }

  /**
   * Shapes the object a write makes (never a stored one) as a built-in
   * kind's typed encoding writes it (see api/omitempty.ts): without the empty
   * maps and lists it leaves out, and with `fill` the value structs it always
   * writes. The client's fields are worked out without those structs, so an
   * empty one the server fills later (a Job's template labels) is nobody's:
   * an apply that no longer names it cannot remove what the server put in.
   * Custom kinds keep what they were sent.
   */
  private omitEmpty(obj: KubeObject, fill = true): KubeObject {
    return this.kind.strategicMerge ? asTypedEncoding(obj, this.kind.schema, fill) : obj;
  }

  /**
   * Writes `next` over `current` (or removes it when its deletion is
   * complete); `retry` on a lost compare-and-swap. `shaped` when the update's
   * steps already shaped it.
   */
  async commit(next: KubeObject, current: KeyValue, dryRun: boolean, shaped = false): Promise<Attempt<KubeObject>> {
    const meta = (shaped ? next : this.omitEmpty(next)).metadata!;
    delete meta.resourceVersion;
    // Nothing holds an object being deleted any more: remove it now.
    const finishDeletion = meta.deletionTimestamp && !this.deletionHeld(next);
    const bytes = toStoredBytes(next);
    if (dryRun || (!finishDeletion && bytes.equals(current.value))) {
      meta.resourceVersion = String(current.modRevision); // nothing to write (or a dry run): as upstream, no new version
      return dryRun ? next : noteStored(next, current);
    }
    if (finishDeletion) return this.remove(next, current);
    try {
      const kv = await this.backend.update(current.key, bytes, current.modRevision);
      meta.resourceVersion = String(kv.modRevision);
      return noteStored(next, { ...kv, value: bytes });
    } catch (e) {
      if (lostRace(e)) return retry;
      return storageFailure(e);
    }
  }

  /** Removes the stored object `current` (answered as `obj`, at the revision of its removal); `retry` on a lost compare-and-swap. */
  async remove(obj: KubeObject, current: KeyValue): Promise<Attempt<KubeObject>> {
    try {
      const kv = await this.backend.delete(current.key, current.modRevision);
      obj.metadata!.resourceVersion = String(kv.modRevision);
      await this.hooks.afterDelete?.(obj);
      return obj;
    } catch (e) {
      if (lostRace(e)) return retry;
      return storageFailure(e);
    }
  }

  /**
   * Creates a decoded object (its managed fields already worked out when an
   * apply made it: `tracked`). `retry` when the name is taken.
   */
  async insert(namespace: string | undefined, { object: decoded, tracked }: Changed, w: Write, urlName?: string): Promise<Attempt<KubeObject>> {
    const { opts, scope } = w;
    this.owned.placeInNamespace(decoded, namespace);
    this.omitEmpty(decoded, false);
    const strategy = this.kind.strategy;
    let obj = tracked ? decoded : await this.track(undefined, decoded, w);
    const managedFields = obj.metadata!.managedFields;
    const stamp: CreateStamp = { uid: randomUUID(), creationTimestamp: rfc3339Now() };
    this.owned.stampForCreate(obj, stamp);
    const request = admissionRequest('CREATE', this.admittedAt({ codec: w.target.codec }), obj.metadata!.name ?? '', obj.metadata!.namespace, scope, w.reported, obj);
    const admission = this.admissionOf(scope);
    await admission.mutate(request);
    // When what follows fails or loses its race, plugins that reserved something for the request (quota) give it back.
    return finishedBy(this.releaseUnlessStored(admission, request), async () => {
      obj = request.object!;
      guardManagedFields(obj, managedFields, scope.warnings);
      // Whatever mutating admission returned, what the server owns is the server's again.
      if (urlName !== undefined) this.owned.placeAtName(obj, urlName);
      this.owned.placeInNamespace(obj, namespace);
      this.owned.prepareForCreate(obj, stamp, scope.user);
      // As upstream, what a hook fills in (a Service's cluster IP) is nobody's field.
      const finish = await this.hooks.beginCreate?.(obj, { dryRun: opts.dryRun });
      return finishedBy(finish, async () => {
        const meta = this.omitEmpty(obj).metadata!;
        const loading = strategy.load?.(obj); // most kinds load nothing: no turn of the microtask queue for them
        if (loading) await loading;
        const errs = [...validateObjectMeta(meta, this.metaRules()), ...(strategy.validate?.(obj) ?? [])];
        if (errs.length) throw this.invalid(obj, errs);
        await admission.validate(request);
        scope.warnings.push(...(strategy.warnings?.(obj) ?? []));
        const key = this.key(meta.namespace, meta.name);
        try {
          if (opts.dryRun) {
            if (!(await this.backend.get(key))) return obj;
          } else {
            const bytes = toStoredBytes(obj);
            const kv = await this.backend.create(key, bytes);
            meta.resourceVersion = String(kv.modRevision);
            return noteStored(obj, { ...kv, value: bytes });
          }
        } catch (e) {
          if (!lostRace(e)) return storageFailure(e);
        }
        decoded.metadata!.name = meta.name; // the name that is taken, for the caller's AlreadyExists
        return retry;
      });
    });
  }

  /**
   * An update's steps from its change to the store: its managed fields and
   * mutating admission (prepareUpdate), the write hooks, validation and
   * validating admission, the commit over `current`; `retry` on a lost race.
   */
  async update(changed: Changed, live: KubeObject, current: KeyValue, w: Write): Promise<Attempt<KubeObject>> {
    const { object: next, request } = await this.prepareUpdate(changed, live, w);
    const admission = this.admissionOf(w.scope);
    // When what follows fails or loses its race (the loop admits the change anew), plugins that reserved something (quota) give it back.
    return finishedBy(this.releaseUnlessStored(admission, request), async () => {
      const finish = await this.hooks.beginUpdate?.(next, live, { dryRun: w.opts.dryRun });
      return finishedBy(finish, async () => {
        await this.validateUpdate(request, next, live, w);
        return this.commit(next, current, w.opts.dryRun, true);
      });
    });
  }

  /**
   * An update's steps between its change and the write hooks: managed fields
   * (an apply's change made them), what the writer may not change put back,
   * mutating admission, and what the server owns put back again.
   */
  private async prepareUpdate({ object: changed, tracked }: Changed, old: KubeObject, w: Write): Promise<{ object: KubeObject; request: AdmissionRequest }> {
    const { scope, target } = w;
    const oldMeta = old.metadata!;
    const ownPart = this.ownPart(target);
    this.omitEmpty(changed, false);
    // Before admission the kind's preparation runs only through a part, whose fields are worked out on what it keeps.
    const keep = (obj: KubeObject) => this.withManagedFields(this.owned.keepServerOwned(obj, old, target.subresource, ownPart, ownPart !== undefined), obj.metadata!.managedFields);
    // Through a part sub-resource the writer changes only that part: its fields are worked out on what is kept of the request.
    let next = tracked ? keep(changed) : ownPart ? await this.track(old, keep(changed), w) : keep(await this.track(old, changed, w));
    const managedFields = next.metadata!.managedFields;
    const request = admissionRequest('UPDATE', this.admittedAt(target), next.metadata!.name, next.metadata!.namespace, scope, w.reported, next, old);
    await this.admissionOf(scope).mutate(request);
    const admitted = request.object!;
    guardManagedFields(admitted, managedFields, scope.warnings);
    // Whatever mutating admission returned: the URL names the object, and what the server owns is the server's again.
    this.owned.placeAtName(admitted, oldMeta.name);
    this.owned.placeInNamespace(admitted, oldMeta.namespace);
    next = this.withManagedFields(this.owned.keepServerOwned(admitted, old, target.subresource, ownPart, true), admitted.metadata!.managedFields);
    request.object = next;
    return { object: next, request };
  }

  /** The part sub-resource a write goes through (status, finalize), when it does. */
  private ownPart(target: WriteTarget): PartSubresource | undefined {
    const part = target.subresource !== undefined ? this.kind.subresources[target.subresource] : undefined;
    return part && !isViewSubresource(part) ? part : undefined;
  }

  /** `obj` with `managedFields` (a sub-resource's write starts from the stored object, whose entries it must not keep). */
  private withManagedFields(obj: KubeObject, managedFields: unknown): KubeObject {
    if (managedFields === undefined) delete obj.metadata!.managedFields;
    else obj.metadata!.managedFields = managedFields;
    return obj;
  }

  /** The last steps of an update before it is stored: generation, validation, validating admission, warnings. */
  private async validateUpdate(request: AdmissionRequest, next: KubeObject, old: KubeObject, w: Write): Promise<void> {
    const strategy = this.kind.strategy;
    const ownPart = this.ownPart(w.target);
    const oldMeta = old.metadata!;
    // Shaped before the generation compares it with the stored object, which was shaped when written.
    const meta = this.omitEmpty(next).metadata!;
    if (this.kind.tracksGeneration) {
      const { metadata: _a, status: _b, ...newBody } = next;
      const { metadata: _c, status: _d, ...oldBody } = old;
      meta.generation = (oldMeta.generation ?? 1) + (deepEqual(newBody, oldBody) ? 0 : 1);
    } else {
      delete meta.generation;
    }
    // A part with rules of its own (a status that checks only itself) needs nothing the kind's rules load.
    if (!ownPart?.validateUpdate) {
      const loading = strategy.load?.(next);
      if (loading) await loading;
    }
    const errs = [...validateObjectMetaUpdate(meta, oldMeta, this.metaRules()), ...((ownPart?.validateUpdate ?? strategy.validateUpdate)?.(next, old) ?? [])];
    if (oldMeta.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter((f: string) => !(oldMeta.finalizers ?? []).includes(f));
      if (added.length) errs.push(new FieldError('FieldValueForbidden', 'metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, undefined, false));
    }
    if (errs.length) throw this.invalid(next, errs);
    await this.admissionOf(w.scope).validate(request);
    w.scope.warnings.push(...(strategy.warnings?.(next, old) ?? []));
  }
}
