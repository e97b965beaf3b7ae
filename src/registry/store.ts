// The generic store: REST semantics of any declared kind over a Backend.
// Every write takes upstream's steps in upstream's order: decode and
// default → managed fields → mutating admission → the kind's preparation →
// validate → validating admission → write. A POST creates; every other
// write (PUT, each patch type, apply, a sub-resource's update, a view's or a
// controller's change) is a change from the stored object to the new one
// (changes.ts), run by one road in the update loop (updateloop.ts): when
// another writer got in first, the change, the field manager and admission
// run again on the fresh object, unless the client pinned a resourceVersion
// (then 409). Reads are the CollectionReader's.

import { randomUUID } from 'node:crypto';
import { ApiError, errors, FieldError, Qualified } from '../machinery/errors.js';
import { deepEqual } from '../machinery/equal.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../machinery/objectmeta.js';
import { rfc3339Now } from '../machinery/time.js';
import { isViewSubresource, type KindDefinition, type KubeObject, type PartSubresource } from '../api/kind.js';
import type { Backend, KeyValue } from '../storage/backend.js';
import type { CacheSet } from '../storage/cache/index.js';
import type { Admission, AdmissionRequest, OperationOptions } from '../admission/types.js';
import { admissionRequest, guardManagedFields, type AdmittedAt } from './admissionrequests.js';
import { admitAll } from '../admission/chain.js';
import { CollectionReader, ListOptions } from './reader.js';
import type { ActiveWatch, WatchSink } from './watch.js';
import { trackWrite } from './managed.js';
import { ServerOwnedFields, type CreateStamp } from './serverfields.js';
import { effectivePolicy } from './propagation.js';
import { checkPreconditions, planDeletion } from './deletion.js';
import { noteStored, parseResourceVersion, StoredList, StoredObject, toStoredBytes } from './objects.js';
import { lostRace, storageFailure } from './storage-errors.js';
import type { WriteHooks } from './hooks.js';
import { terminating } from './graceful.js';
import { dropEmptyCollections } from '../api/omitempty.js';
import { finishedBy, retry, updateLoop, type Attempt } from './updateloop.js';
import { applied, applyConfig, computed, decodeToStored, patched, replacement, type Change, type Changed } from './changes.js';
import {
  decodeOptions, deleteOperationOptions, operationOptions, serverManager,
  type AnsweredCreate, type DeleteOptions, type DeleteResult, type RequestScope, type Sent, type SentPatch, type WriteOptions, type WriteTarget,
} from './writeoptions.js';

export type { ListOptions } from './reader.js';
export type { FieldValidation } from '../api/decode.js';
export type { AnsweredCreate, DeleteOptions, DeleteResult, RequestScope, Sent, SentPatch, WriteOptions, WriteTarget } from './writeoptions.js';
export type { Change } from './changes.js';

/** One write as the road carries it: the operation's options, the request's scope, where it lands, its options as admission reports them. */
interface Write {
  opts: WriteOptions;
  scope: RequestScope;
  target: WriteTarget;
  reported: OperationOptions;
}

/** What a write answers: the object, and whether it was created (201). */
export interface Written {
  object: KubeObject;
  created: boolean;
}

export class ResourceStore {
  /** What the kind's writes do beside storing (see hooks.ts); none unless the server adds them. */
  private hooks: WriteHooks = {};

  readonly qualified: Qualified;
  readonly reader: CollectionReader;
  /** What the server owns in the objects of this kind, put back after every step a client or webhook acts in. */
  private readonly owned: ServerOwnedFields;

  private readonly openWatches = new Set<{ sink: WatchSink; watch?: ActiveWatch }>();

  constructor(
    readonly kind: KindDefinition,
    private readonly backend: Backend,
    private readonly admission: Admission = admitAll,
    /** Watch caches of the backend; without them every read goes to the store. */
    caches?: CacheSet,
  ) {
    this.reader = new CollectionReader(kind, backend, caches);
    this.qualified = this.reader.qualified;
    this.owned = new ServerOwnedFields(kind);
  }

  get namespaced(): boolean {
    return this.kind.scope === 'Namespaced';
  }

  /** Adds what this kind's writes do beside storing (a Service's addresses and ports). */
  useHooks(hooks: WriteHooks): void {
    this.hooks = hooks;
  }

  key(namespace: string | undefined, name: string): string {
    return this.reader.key(namespace, name);
  }

  // ---- reads (see reader.ts) ------------------------------------------------

  find(namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.reader.find(namespace, name);
  }

  get(namespace: string | undefined, name: string, resourceVersion?: string | null): Promise<KubeObject> {
    return this.reader.get(namespace, name, resourceVersion);
  }

  getStored(namespace: string | undefined, name: string, resourceVersion?: string | null): Promise<StoredObject> {
    return this.reader.getStored(namespace, name, resourceVersion);
  }

  list(namespace: string | undefined, opts: ListOptions): Promise<KubeObject> {
    return this.reader.list(namespace, opts);
  }

  listStored(namespace: string | undefined, opts: ListOptions): Promise<StoredList> {
    return this.reader.listStored(namespace, opts);
  }

  async watch(namespace: string | undefined, opts: ListOptions & { maxBuffered?: number }, sink: WatchSink): Promise<ActiveWatch> {
    const tracked = { sink, watch: undefined as ActiveWatch | undefined };
    const watch = await this.reader.watch(namespace, opts, {
      onEvents: (events) => sink.onEvents(events),
      onEnd: (err) => { this.openWatches.delete(tracked); sink.onEnd(err); },
    });
    tracked.watch = watch;
    this.openWatches.add(tracked);
    return { ...watch, stop: () => { this.openWatches.delete(tracked); watch.stop(); }, pause: () => watch.pause(), resume: () => watch.resume(), bookmarkRevision: () => watch.bookmarkRevision() };
  }

  /**
   * Ends every open watch of this store (its kind is no longer served as
   * it was: a custom resource's definition changed or went). Clients start
   * again, from a list, against what is served now.
   */
  closeWatches(why: string): void {
    for (const w of [...this.openWatches]) {
      this.openWatches.delete(w);
      w.watch?.stop();
      w.sink.onEnd(errors.gone(why));
    }
  }

  fieldValue(obj: KubeObject, field: string): string {
    return this.reader.fieldValue(obj, field);
  }

  // ---- the steps every write shares -------------------------------------------

  private invalid(obj: KubeObject, errs: FieldError[]): ApiError {
    return errors.invalid(this.kind.group, this.kind.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errs);
  }

  private metaRules() {
    return { namespaced: this.namespaced, nameCheck: this.kind.nameCheck };
  }

  /** Where a write is admitted: this store's kind, at the version its path names, through its sub-resource. */
  private admittedAt(target: WriteTarget): AdmittedAt {
    return { kind: this.kind, requestedAs: target.codec?.served, subresource: target.subresource, namespaced: this.namespaced };
  }

  /** The admission a write goes through: none when its request was admitted as a whole. */
  private admissionOf(scope: RequestScope): Admission {
    return scope.admitted ? admitAll : this.admission;
  }

  /** The managed fields of a non-apply write by the write's manager, at the version its path names. */
  private track(live: KubeObject | undefined, next: KubeObject, w: Write): Promise<KubeObject> {
    return trackWrite(this.kind, live, next, w.opts.manager ?? serverManager, w.target.subresource, w.target.codec, w.scope.clientGroup);
  }

  /**
   * Admission of a create that is answered, not stored (pods/eviction,
   * pods/binding, bindings, serviceaccounts/token), as upstream's create
   * handler: mutating plugins, then validating ones, before the sub-resource
   * acts. The object is the request's (an Eviction), of `on.kind`, while the
   * resource is the one the URL names (pods); the kind's own validation runs
   * on what mutating plugins left, which is the answer.
   */
  async admitAnswered(on: AnsweredCreate, name: string, namespace: string | undefined, object: KubeObject, opts: WriteOptions, scope: RequestScope): Promise<KubeObject> {
    const at: AdmittedAt = { kind: on.kind, resource: on.resource, subresource: on.subresource, namespaced: this.namespaced };
    const request = admissionRequest('CREATE', at, name, namespace, scope, operationOptions('CreateOptions', opts), object);
    await this.admission.mutate(request);
    const admitted = request.object ?? object;
    const errs = on.kind.strategy.validate?.(admitted) ?? [];
    if (errs.length) throw errors.invalid(on.kind.group, on.kind.kind, admitted.metadata?.name ?? '', errs);
    await this.admission.validate(request);
    return admitted;
  }

  /** Whether something still holds the object once deletion is asked: finalizers, or the kind's own rule. */
  private deletionHeld(obj: KubeObject): boolean {
    return (obj.metadata?.finalizers ?? []).length > 0 || terminating(obj) || (this.kind.strategy.holdsDeletion?.(obj) ?? false);
  }

  /** The update loop on the object `name`, with this store's reader and backend. */
  private loop<T>(namespace: string | undefined, name: string, attempt: (current: KeyValue | undefined) => Promise<Attempt<T>>): Promise<T> {
    return updateLoop(this.reader, this.backend, this.qualified, this.key(namespace, name), name, attempt);
  }

  /**
   * The stored object an update starts from, read-only: the cache's shared
   * decode of the value when a reader made one, else a decode of its own,
   * neither frozen nor left in the derived cache. The version it decodes is
   * the one the update replaces, so nobody would read it there again, and
   * freezing it cost more than decoding it (a 1 KiB ConfigMap: about 5 µs
   * to parse, 4 to 7 more to freeze).
   */
  private liveObject(current: KeyValue): KubeObject {
    return this.reader.stored(current).peekObject();
  }

  /**
   * Drops the empty maps and lists a built-in kind's typed encoding leaves
   * out (see api/omitempty.ts), in the object a write makes (never a stored
   * one). Custom kinds keep what they were sent.
   */
  private omitEmpty(obj: KubeObject): KubeObject {
    return this.kind.strategicMerge ? dropEmptyCollections(obj, this.kind.schema) : obj;
  }

  /** Writes `next` over `current` (or removes it when its deletion is complete); `retry` on a lost compare-and-swap. */
  private async commit(next: KubeObject, current: KeyValue, dryRun: boolean): Promise<Attempt<KubeObject>> {
    const meta = this.omitEmpty(next).metadata!;
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
  private async remove(obj: KubeObject, current: KeyValue): Promise<Attempt<KubeObject>> {
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

  // ---- writes ------------------------------------------------------------
  //
  // Upstream's steps in upstream's order: decode and default; managed fields
  // (what the client sent, so that nothing the server or a webhook adds later
  // belongs to a manager); mutating admission; the kind's preparation (uid,
  // times, generation, generated selectors, the write hooks' allocations);
  // validation; validating admission; the store. The preparation is also made
  // before mutating admission, so that webhooks see the uid and times a
  // create will have (and the parts a write may not change as stored); what
  // they return is prepared again.

  /** POST: creates the object (a taken name: 409 AlreadyExists). */
  async create(namespace: string | undefined, body: Sent, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<KubeObject> {
    const decoded = await decodeToStored(this.kind, body.value, decodeOptions(body, opts, scope), target.codec);
    const w: Write = { opts, scope, target, reported: operationOptions('CreateOptions', opts) };
    const created = await this.insert(namespace, { object: decoded, tracked: false }, w);
    // insert names the object (generateName) in place, so the name is known here.
    if (created === retry) throw errors.alreadyExists(this.qualified, decoded.metadata!.name);
    return created;
  }

  /** PUT: replaces the object (200), or creates it when absent and the kind allows that (201). Through a sub-resource only what it owns changes. */
  async update(namespace: string | undefined, name: string, body: Sent, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<Written> {
    const sent = await decodeToStored(this.kind, body.value, decodeOptions(body, opts, scope), target.codec);
    this.owned.placeAtName(sent, name);
    this.owned.placeInNamespace(sent, namespace);
    const meta = sent.metadata!;
    const pinned = parseResourceVersion(meta.resourceVersion);
    if (Number.isNaN(pinned)) {
      throw this.invalid(sent, [new FieldError('FieldValueInvalid', 'metadata.resourceVersion', 'must be a decimal number', meta.resourceVersion)]);
    }
    return this.write(meta.namespace, name, replacement(this.kind, sent, pinned, target.subresource), { opts, scope, target, reported: operationOptions('UpdateOptions', opts) });
  }

  /**
   * PATCH: json, merge and strategic patches change the stored object; an
   * apply merges by field ownership and creates the object when absent.
   */
  async patch(namespace: string | undefined, name: string, patch: SentPatch, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<Written> {
    const decode = decodeOptions(patch, opts, scope);
    const change = patch.type === 'apply'
      ? applied(this.kind, applyConfig(this.kind, this.owned, patch.value, name, namespace, decode, target.codec), {
        manager: opts.manager ?? serverManager, force: opts.force ?? false, subresource: target.subresource, codec: target.codec, clientGroup: scope.clientGroup,
      })
      : patched(this.kind, { ...patch, type: patch.type }, decode, target.codec);
    return this.write(namespace, name, change, { opts, scope, target, reported: operationOptions('PatchOptions', opts) });
  }

  /** A write computed from a copy of the stored object (a controller's, a sub-resource's such as binding): answers the object stored. */
  async updateWith(namespace: string | undefined, name: string, compute: (live: KubeObject) => KubeObject | Promise<KubeObject>, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<KubeObject> {
    return (await this.change(namespace, name, computed(compute), opts, scope, target)).object;
  }

  /** Any change run on the one road as an update (a view's write, which pins the version its view carried). */
  change(namespace: string | undefined, name: string, change: Change, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<Written> {
    return this.write(namespace, name, change, { opts, scope, target, reported: operationOptions('UpdateOptions', opts) });
  }

  /**
   * The one road of every write but a POST: `change` makes the new object
   * from the stored one, or the object to create when none is stored and it
   * creates, and runs again on the fresh object whenever another writer got
   * in first.
   */
  private write(namespace: string | undefined, name: string, change: Change, w: Write): Promise<Written> {
    return this.loop(namespace, name, async (current) => {
      const live = current && this.liveObject(current); // read-only: a change works on a copy
      if (!live && !change.creates) throw errors.notFound(this.qualified, name);
      const changed = await change.make(live);
      this.owned.placeAtName(changed.object, name);
      this.owned.placeInNamespace(changed.object, namespace);
      if (!current || !live) {
        const created = await this.insert(namespace, changed, w, name);
        return created === retry ? retry : { object: created, created: true };
      }
      if (changed.pinned !== undefined && changed.pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
      const { object: next, request } = await this.prepareUpdate(changed, live, w);
      const finish = await this.hooks.beginUpdate?.(next, live, { dryRun: w.opts.dryRun });
      const written = await finishedBy(finish, async () => {
        await this.validateUpdate(request, next, live, w);
        return this.commit(next, current, w.opts.dryRun);
      });
      return written === retry ? retry : { object: written, created: false };
    });
  }

  /**
   * Creates a decoded object (its managed fields already worked out when an
   * apply made it: `tracked`). `retry` when the name is taken.
   */
  private async insert(namespace: string | undefined, { object: decoded, tracked }: Changed, w: Write, urlName?: string): Promise<Attempt<KubeObject>> {
    const { opts, scope } = w;
    this.owned.placeInNamespace(decoded, namespace);
    this.omitEmpty(decoded);
    const strategy = this.kind.strategy;
    let obj = tracked ? decoded : await this.track(undefined, decoded, w);
    const managedFields = obj.metadata!.managedFields;
    const stamp: CreateStamp = { uid: randomUUID(), creationTimestamp: rfc3339Now() };
    this.owned.stampForCreate(obj, stamp, scope.user);
    const request = admissionRequest('CREATE', this.admittedAt({ codec: w.target.codec }), obj.metadata!.name ?? '', obj.metadata!.namespace, scope, w.reported, obj);
    const admission = this.admissionOf(scope);
    await admission.mutate(request);
    // When what follows fails or loses its race, plugins that reserved something for the request (quota) give it back.
    return finishedBy(async (stored) => { if (!stored) await admission.abandon?.(request); }, async () => {
      obj = request.object!;
      guardManagedFields(obj, managedFields, scope.warnings);
      // Whatever mutating admission returned, what the server owns is the server's again.
      if (urlName !== undefined) this.owned.placeAtName(obj, urlName);
      this.owned.placeInNamespace(obj, namespace);
      this.owned.stampForCreate(obj, stamp, scope.user);
      // As upstream, what a hook fills in (a Service's cluster IP) is nobody's field.
      const finish = await this.hooks.beginCreate?.(obj, { dryRun: opts.dryRun });
      return finishedBy(finish, async () => {
        const meta = this.omitEmpty(obj).metadata!;
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
   * An update's steps between its change and the write hooks: managed fields
   * (an apply's change made them), what the writer may not change put back,
   * mutating admission, and what the server owns put back again.
   */
  private async prepareUpdate({ object: changed, tracked }: Changed, old: KubeObject, w: Write): Promise<{ object: KubeObject; request: AdmissionRequest }> {
    const { scope, target } = w;
    const oldMeta = old.metadata!;
    const ownPart = this.ownPart(target);
    this.omitEmpty(changed);
    const keep = (obj: KubeObject) => this.withManagedFields(this.owned.keepServerOwned(obj, old, target.subresource, ownPart), obj.metadata!.managedFields);
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
    next = this.withManagedFields(this.owned.keepServerOwned(admitted, old, target.subresource, ownPart), admitted.metadata!.managedFields);
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
    const meta = next.metadata!;
    if (this.kind.tracksGeneration) {
      const { metadata: _a, status: _b, ...newBody } = next;
      const { metadata: _c, status: _d, ...oldBody } = old;
      meta.generation = (oldMeta.generation ?? 1) + (deepEqual(newBody, oldBody) ? 0 : 1);
    } else {
      delete meta.generation;
    }
    const errs = [...validateObjectMetaUpdate(meta, oldMeta, this.metaRules()), ...((ownPart?.validateUpdate ?? strategy.validateUpdate)?.(next, old) ?? [])];
    if (oldMeta.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter((f: string) => !(oldMeta.finalizers ?? []).includes(f));
      if (added.length) errs.push(new FieldError('FieldValueForbidden', 'metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, undefined, false));
    }
    const admission = this.admissionOf(w.scope);
    if (errs.length) {
      await admission.abandon?.(request);
      throw this.invalid(next, errs);
    }
    await admission.validate(request);
    w.scope.warnings.push(...(strategy.warnings?.(next, old) ?? []));
  }

  /**
   * DELETE: admitted on the stored object, then removed, or marked deleted
   * and kept while finalizers (or a pod's grace period) hold it.
   */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<DeleteResult> {
    const policy = effectivePolicy(options.propagationPolicy, options.orphanDependents);
    const reported = deleteOperationOptions(options);
    const dryRun = options.dryRun === true;
    return this.loop(namespace, name, async (current): Promise<Attempt<DeleteResult>> => {
      if (!current) throw errors.notFound(this.qualified, name);
      const obj = this.reader.decodeStored(current);
      checkPreconditions(this.qualified, obj, options);
      const request = admissionRequest('DELETE', this.admittedAt({ codec: target.codec }), name, namespace, scope, reported, undefined, obj);
      await this.admissionOf(scope).mutate(request);
      await this.admissionOf(scope).validate(request);
      const plan = planDeletion(this.kind.strategy, obj, options, policy, (o) => this.deletionHeld(o));
      if (plan.step === 'keep') return { object: obj, removed: false };
      if (plan.step === 'mark') {
        const written = await this.commit(obj, current, dryRun);
        return written === retry ? retry : { object: written, removed: !plan.held };
      }
      if (dryRun) return { object: obj, removed: true };
      const removed = await this.remove(obj, current);
      return removed === retry ? retry : { object: removed, removed: true };
    });
  }

  /** Deletes every object the list options select; answers with the list of what was deleted. */
  async deleteCollection(namespace: string | undefined, listOpts: ListOptions, options: DeleteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<KubeObject> {
    // The same selectors, paging and resourceVersion rules as a list: with a limit, one page goes.
    const list = await this.list(namespace, listOpts);
    const deleted: KubeObject[] = [];
    for (const item of list.items as KubeObject[]) {
      try {
        const r = await this.delete(item.metadata!.namespace, item.metadata!.name, options, scope, target);
        deleted.push(r.object);
      } catch (e) {
        if (e instanceof ApiError && e.reason === 'NotFound') continue; // deleted meanwhile
        throw e;
      }
    }
    return { ...list, items: deleted };
  }
}
