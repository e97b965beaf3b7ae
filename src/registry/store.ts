// The generic store: REST semantics of any declared kind over a Backend.
// Every write takes upstream's steps in upstream's order: decode and
// default → managed fields → mutating admission → the kind's preparation →
// validate → validating admission → write. Every write but a plain create
// (update, patch, apply, a sub-resource's update, deletion) runs in one
// update loop: read the stored object, compute the new one from it,
// compare-and-swap; when another writer got in first, compute again from the
// fresh object, unless the client pinned a resourceVersion (then 409). Reads
// are the CollectionReader's.

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
import { codecFor, type VersionCodec } from '../api/codec.js';
import { CollectionReader, ListOptions } from './reader.js';
import { decodeForWrite, decodeSent } from '../api/decode.js';
import type { ActiveWatch, WatchSink } from './watch.js';
import { trackApply, trackWrite } from './managed.js';
import { ServerOwnedFields, type CreateStamp } from './serverfields.js';
import { applyPatch, patchPrecondition, PatchType } from './patch.js';
import { applyPolicyFinalizers, effectivePolicy } from './propagation.js';
import { noteStored, parseResourceVersion, StoredList, StoredObject, toStoredBytes } from './objects.js';
import { lostRace, storageFailure } from './storage-errors.js';
import type { FinishWrite, WriteHooks } from './hooks.js';
import { beforeGracefulDelete, terminating } from './graceful.js';
import { clone } from '../machinery/patch/json.js';
import { dropEmptyCollections } from '../api/omitempty.js';

export type { ListOptions } from './reader.js';
export type { FieldValidation } from '../api/decode.js';
export type { AnsweredCreate, DeleteOptions, DeleteResult, PatchOptions, WriteOptions, WriteTarget } from './writeoptions.js';
import { operationOptions, serverManager, type AnsweredCreate, type DeleteOptions, type DeleteResult, type PatchOptions, type WriteOptions, type WriteTarget } from './writeoptions.js';

/**
 * A lost compare-and-swap means another writer got in first, so every round
 * makes progress somewhere: writes without a precondition retry until they
 * win, as upstream's GuaranteedUpdate does. The bound only stops a broken
 * backend from looping forever; N concurrent writers need up to N rounds.
 */
const maxUpdateRetries = 10_000;

/** What a write makes of the stored object: the object to store, and whether its managed fields are worked out already (an apply's). */
interface Changed {
  object: KubeObject;
  tracked: boolean;
}

/** A write's change: from the stored object (undefined when absent) to the new one. */
type Change = (live: KubeObject | undefined) => Promise<Changed>;

/** What an attempt of the update loop answers when it lost the race and must run again. */
const retry = Symbol('retry');
type Attempt<T> = T | typeof retry;

/**
 * Runs `work`, the rest of a write something reserved for (a hook, an
 * admission plugin), and tells it whether the write stored (a failure or a
 * lost race: not).
 */
async function finishedBy<T>(finish: FinishWrite | undefined, work: () => Promise<Attempt<T>>): Promise<Attempt<T>> {
  if (!finish) return work();
  let result: Attempt<T>;
  try {
    result = await work();
  } catch (e) {
    await finish(false);
    throw e;
  }
  await finish(result !== retry);
  return result;
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

  // ---- decoding and validation --------------------------------------------

  /** The codec of the version a write names (undefined: the stored version). */
  private codecOf(opts: WriteOptions): VersionCodec | undefined {
    const at = opts.requestedAs;
    return at && at !== this.kind ? codecFor(this.kind, at.group, at.version) : undefined;
  }

  /** A body to write, sent at the version the write names: decoded there, converted to the stored one, defaulted. */
  decode(body: unknown, opts: WriteOptions): KubeObject {
    return decodeForWrite(this.kind, body, opts, this.codecOf(opts));
  }

  /**
   * At a version converted later (a conversion webhook), the body's
   * conversion is made before `decode` needs it: one review per write.
   */
  private async convertAhead(body: unknown, opts: WriteOptions): Promise<void> {
    const codec = this.codecOf(opts);
    if (codec?.convertsLater) await codec.aheadToStored(decodeSent(this.kind, body, { ...opts, warnings: [] }, codec));
  }

  private invalid(obj: KubeObject, errs: FieldError[]): ApiError {
    return errors.invalid(this.kind.group, this.kind.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errs);
  }

  private metaRules() {
    return { namespaced: this.namespaced, nameCheck: this.kind.nameCheck };
  }

  /** Where this store's writes are admitted: its kind, at the version the request named, through `subresource`. */
  private admittedAt(opts: WriteOptions, subresource?: string): AdmittedAt {
    return { kind: this.kind, requestedAs: opts.requestedAs, subresource, namespaced: this.namespaced };
  }

  /**
   * Admission of a create that is answered, not stored (pods/eviction,
   * pods/binding, bindings, serviceaccounts/token), as upstream's create
   * handler: mutating plugins, then validating ones, before the sub-resource
   * acts. The object is the request's (an Eviction), of `on.kind`, while the
   * resource is the one the URL names (pods); the kind's own validation runs
   * on what mutating plugins left, which is the answer.
   */
  async admitAnswered(on: AnsweredCreate, name: string, namespace: string | undefined, object: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const at: AdmittedAt = { kind: on.kind, resource: on.resource, subresource: on.subresource, namespaced: this.namespaced };
    const request = admissionRequest('CREATE', at, name, namespace, opts, operationOptions('CreateOptions', opts), object);
    await this.admission.mutate(request);
    const admitted = request.object ?? object;
    const errs = on.kind.strategy.validate?.(admitted) ?? [];
    if (errs.length) throw errors.invalid(on.kind.group, on.kind.kind, admitted.metadata?.name ?? '', errs);
    await this.admission.validate(request);
    return admitted;
  }

  /** The admission a write goes through: none when its request was admitted as a whole. */
  private admissionOf(opts: WriteOptions): Admission {
    return opts.admitted ? admitAll : this.admission;
  }

  /** Whether something still holds the object once deletion is asked: finalizers, or the kind's own rule. */
  private deletionHeld(obj: KubeObject): boolean {
    return (obj.metadata?.finalizers ?? []).length > 0 || terminating(obj) || (this.kind.strategy.holdsDeletion?.(obj) ?? false);
  }

  // ---- the update loop -------------------------------------------------------

  /**
   * Runs `attempt` on the stored value (undefined when absent) until it
   * answers something other than `retry`, which it does when its
   * compare-and-swap lost to another writer. The first round starts from the
   * watch cache's copy when it has one, as upstream's GuaranteedUpdate does
   * with a cached object: no read, and often no decoding. That copy may be a
   * little behind, so whatever the round concludes from it, a failure as
   * well as a lost race, is concluded again from the store.
   */
  private async updateLoop<T>(key: string, name: string, attempt: (current: KeyValue | undefined) => Promise<Attempt<T>>): Promise<T> {
    let current = this.reader.cachedValue(key);
    let fresh = current === undefined;
    if (fresh) current = await this.backend.get(key).catch(storageFailure);
    for (let round = 0; round < maxUpdateRetries; round++) {
      let result: Attempt<T>;
      try {
        result = await attempt(current);
      } catch (e) {
        if (fresh) throw e;
        result = retry;
      }
      if (result !== retry) return result;
      current = await this.backend.get(key).catch(storageFailure);
      fresh = true;
    }
    throw errors.staleObject(this.qualified, name);
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
  private async commit(key: string, next: KubeObject, current: KeyValue, opts: WriteOptions): Promise<Attempt<KubeObject>> {
    const meta = this.omitEmpty(next).metadata!;
    delete meta.resourceVersion;
    // Nothing holds an object being deleted any more: remove it now.
    const finishDeletion = meta.deletionTimestamp && !this.deletionHeld(next);
    const bytes = toStoredBytes(next);
    if (opts.dryRun || (!finishDeletion && bytes.equals(current.value))) {
      meta.resourceVersion = String(current.modRevision); // nothing to write (or a dry run): as upstream, no new version
      return opts.dryRun ? next : noteStored(next, current);
    }
    try {
      if (finishDeletion) {
        const kv = await this.backend.delete(key, current.modRevision);
        meta.resourceVersion = String(kv.modRevision);
        await this.hooks.afterDelete?.(next);
        return next;
      }
      const kv = await this.backend.update(key, bytes, current.modRevision);
      meta.resourceVersion = String(kv.modRevision);
      return noteStored(next, { ...kv, value: bytes });
    } catch (e) {
      if (lostRace(e)) return retry;
      return storageFailure(e);
    }
  }

  // ---- writes ------------------------------------------------------------
  //
  // Every write takes upstream's steps in upstream's order: decode and
  // default; managed fields (what the client sent, so that nothing the server
  // or a webhook adds later belongs to a manager); mutating admission; the
  // kind's preparation (uid, times, generation, generated selectors, the write
  // hooks' allocations); validation; validating admission; the store. The
  // preparation is also made before mutating admission, so that webhooks see
  // the uid and times a create will have (and the parts a write may not
  // change as stored); what they return is prepared again. PUT,
  // every patch type, apply, a sub-resource's update and a controller's
  // change are one road (`write`), differing only in their change function.

  async create(namespace: string | undefined, body: unknown, opts: WriteOptions): Promise<KubeObject> {
    await this.convertAhead(body, opts);
    const decoded = this.decode(body, opts);
    const created = await this.insert(namespace, { object: decoded, tracked: false }, opts);
    // insert names the object (generateName) in place, so the name is known here.
    if (created === retry) throw errors.alreadyExists(this.qualified, decoded.metadata!.name);
    return created;
  }

  /**
   * Creates a decoded object (its managed fields already worked out when an
   * apply made it: `tracked`). `retry` when the name is taken.
   */
  private async insert(namespace: string | undefined, { object: decoded, tracked }: Changed, opts: WriteOptions, urlName?: string): Promise<Attempt<KubeObject>> {
    this.owned.placeInNamespace(decoded, namespace);
    this.omitEmpty(decoded);
    const strategy = this.kind.strategy;
    let obj = tracked ? decoded : await trackWrite(this.kind, undefined, decoded, opts.manager ?? serverManager, undefined, this.codecOf(opts), opts.clientGroup);
    const managedFields = obj.metadata!.managedFields;
    const stamp: CreateStamp = { uid: randomUUID(), creationTimestamp: rfc3339Now() };
    this.owned.stampForCreate(obj, stamp, opts.user);
    const request = admissionRequest('CREATE', this.admittedAt(opts), obj.metadata!.name ?? '', obj.metadata!.namespace, opts, operationOptions('CreateOptions', opts), obj);
    await this.admissionOf(opts).mutate(request);
    return this.orRelease(request, async () => {
      obj = request.object!;
      guardManagedFields(obj, managedFields, opts.warnings);
      // Whatever mutating admission returned, what the server owns is the server's again.
      if (urlName !== undefined) this.owned.placeAtName(obj, urlName);
      this.owned.placeInNamespace(obj, namespace);
      this.owned.stampForCreate(obj, stamp, opts.user);
      // As upstream, what a hook fills in (a Service's cluster IP) is nobody's field.
      const finish = await this.hooks.beginCreate?.(obj, { dryRun: opts.dryRun === true });
      return finishedBy(finish, async () => {
        const meta = this.omitEmpty(obj).metadata!;
        const errs = [...validateObjectMeta(meta, this.metaRules()), ...(strategy.validate?.(obj) ?? [])];
        if (errs.length) throw this.invalid(obj, errs);
        await this.admissionOf(opts).validate(request);
        opts.warnings.push(...(strategy.warnings?.(obj) ?? []));
        const key = this.key(meta.namespace, meta.name);
        if (opts.dryRun) {
          if (await this.backend.get(key).catch(storageFailure)) {
            decoded.metadata!.name = meta.name;
            return retry;
          }
          return obj;
        }
        try {
          const bytes = toStoredBytes(obj);
          const kv = await this.backend.create(key, bytes);
          meta.resourceVersion = String(kv.modRevision);
          return noteStored(obj, { ...kv, value: bytes });
        } catch (e) {
          if (lostRace(e)) {
            decoded.metadata!.name = meta.name; // the name that is taken, for the caller's AlreadyExists
            return retry;
          }
          return storageFailure(e);
        }
      });
    });
  }

  /**
   * Runs what follows admission; when it fails or loses its race, plugins that
   * reserved something for the request (quota) give it back.
   */
  private orRelease<T>(request: AdmissionRequest, work: () => Promise<Attempt<T>>): Promise<Attempt<T>> {
    return finishedBy(async (stored) => { if (!stored) await this.admission.abandon?.(request); }, work);
  }

  /**
   * The one road of every write to an object that may exist: `change` makes
   * the new object from the stored one (undefined when absent: it answers
   * the object to create, or throws NotFound), run again on the fresh
   * object whenever another writer got in first.
   */
  private write(namespace: string | undefined, name: string, change: Change, opts: WriteOptions, options: OperationOptions, target: WriteTarget): Promise<{ object: KubeObject; created: boolean }> {
    return this.updateLoop(this.key(namespace, name), name, async (current) => {
      if (!current) {
        const created = await this.insert(namespace, await change(undefined), opts, name);
        return created === retry ? retry : { object: created, created: true };
      }
      const live = this.liveObject(current); // read-only: a change works on a copy
      const { object: next, finish } = await this.prepareUpdate(await change(live), live, target, opts, options);
      const written = await finishedBy(finish, () => this.commit(current.key, next, current, opts));
      return written === retry ? retry : { object: written, created: false };
    });
  }

  /**
   * PUT: replaces the object (200), or creates it when absent and the kind
   * allows that (201). Through a sub-resource only what it owns changes.
   */
  async update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, target: WriteTarget = {}): Promise<{ object: KubeObject; created: boolean }> {
    await this.convertAhead(body, opts);
    const obj = this.decode(body, opts);
    this.owned.placeAtName(obj, name);
    this.owned.placeInNamespace(obj, namespace);
    const meta = obj.metadata!;
    const pinned = parseResourceVersion(meta.resourceVersion);
    if (Number.isNaN(pinned)) {
      throw this.invalid(obj, [new FieldError('FieldValueInvalid', 'metadata.resourceVersion', 'must be a decimal number', meta.resourceVersion)]);
    }
    return this.write(meta.namespace, name, async (live) => {
      if (!live) {
        // Only kinds whose strategy allows it create on PUT, as upstream; the rest answer 404.
        if (target.subresource || !this.kind.createOnUpdate || (pinned !== undefined && pinned !== 0)) throw errors.notFound(this.qualified, name);
        return { object: clone({ ...obj, metadata: { ...meta, resourceVersion: undefined } }), tracked: false };
      }
      if (pinned !== undefined && String(pinned) !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
      return { object: clone(obj), tracked: false };
    }, opts, operationOptions('UpdateOptions', opts), target);
  }

  /**
   * The update loop for writers that compute the new object from the stored
   * one (views such as scale, controllers): `change` gets a copy of the live
   * object and answers the object to store.
   */
  async updateWith(namespace: string | undefined, name: string, change: (live: KubeObject) => KubeObject | Promise<KubeObject>, opts: WriteOptions, target: WriteTarget = {}): Promise<KubeObject> {
    const written = await this.write(namespace, name, async (live) => {
      if (!live) throw errors.notFound(this.qualified, name);
      const changed = await change(clone(live));
      this.owned.placeAtName(changed, name);
      this.owned.placeInNamespace(changed, namespace);
      return { object: changed, tracked: false };
    }, opts, operationOptions('UpdateOptions', opts), target);
    return written.object;
  }

  /**
   * PATCH: json, merge and strategic patches change the live object; an
   * apply merges `patch` by field ownership and creates the object when
   * absent (`created`). A lost compare-and-swap applies the patch again to
   * the fresh object, unless the client pinned a resourceVersion.
   */
  async patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions, patchOpts: PatchOptions = {}, target: WriteTarget = {}): Promise<{ object: KubeObject; created: boolean }> {
    const manager = opts.manager ?? serverManager;
    const force = patchOpts.force ?? false;
    const codec = this.codecOf(opts);
    const config = type === 'apply' ? this.decodeApplyConfig(patch, name, namespace, opts, codec) : undefined;
    return this.write(namespace, name, async (live) => {
      if (config) {
        if (!live && target.subresource) throw errors.notFound(this.qualified, name);
        const pinned = config.metadata?.resourceVersion;
        if (live && pinned && pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
        return { object: await trackApply(this.kind, live, config, manager, force, target.subresource, codec, opts.clientGroup), tracked: true };
      }
      if (!live) throw errors.notFound(this.qualified, name);
      const base = codec ? (await codec.fromStoredAll([live]))[0]! : clone(live);
      const patched = applyPatch(type as Exclude<PatchType, 'apply'>, codec?.served ?? this.kind, base, patch);
      const pinned = patchPrecondition(type, patch, live, patched);
      if (pinned !== undefined && pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
      await this.convertAhead(patched, opts);
      const next = this.decode(patched, opts);
      this.owned.placeAtName(next, name);
      if (this.namespaced && (next.metadata?.namespace ?? namespace) !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      return { object: next, tracked: false };
    }, opts, operationOptions('PatchOptions', opts, force ? { force } : {}), target);
  }

  /**
   * An update's steps between its change and the store: managed fields (an
   * apply's change made them), what the writer may not change put back,
   * mutating admission, the kind's preparation, validation and validating
   * admission.
   */
  private async prepareUpdate({ object: changed, tracked }: Changed, old: KubeObject, target: WriteTarget, opts: WriteOptions, options: OperationOptions): Promise<{ object: KubeObject; finish?: FinishWrite }> {
    const oldMeta = old.metadata!;
    const part = target.subresource !== undefined ? this.kind.subresources[target.subresource] : undefined;
    const ownPart = part && !isViewSubresource(part) ? part : undefined;
    this.omitEmpty(changed);
    const track = (obj: KubeObject) => trackWrite(this.kind, old, obj, opts.manager ?? serverManager, target.subresource, this.codecOf(opts), opts.clientGroup);
    const keep = (obj: KubeObject) => this.withManagedFields(this.owned.keepServerOwned(obj, old, target.subresource, ownPart), obj.metadata!.managedFields);
    // Through a part sub-resource the writer changes only that part: its fields are worked out on what is kept of the request.
    let next = tracked ? keep(changed) : ownPart ? await track(keep(changed)) : keep(await track(changed));
    const managedFields = next.metadata!.managedFields;
    const request = admissionRequest('UPDATE', this.admittedAt(opts, target.subresource), next.metadata!.name, next.metadata!.namespace, opts, options, next, old);
    await this.admissionOf(opts).mutate(request);
    const admitted = request.object!;
    guardManagedFields(admitted, managedFields, opts.warnings);
    // Whatever mutating admission returned: the URL names the object, and what the server owns is the server's again.
    this.owned.placeAtName(admitted, oldMeta.name);
    this.owned.placeInNamespace(admitted, oldMeta.namespace);
    next = this.withManagedFields(this.owned.keepServerOwned(admitted, old, target.subresource, ownPart), admitted.metadata!.managedFields);
    request.object = next;
    const finish = await this.hooks.beginUpdate?.(next, old, { dryRun: opts.dryRun === true });
    try {
      await this.validateUpdate(request, next, old, ownPart, opts);
    } catch (e) {
      await finish?.(false);
      throw e;
    }
    // A write that fails or loses its race (and is tried again, admitted anew) gives back what admission reserved for it.
    const release: FinishWrite = async (stored) => {
      await finish?.(stored);
      if (!stored) await this.admissionOf(opts).abandon?.(request);
    };
    return { object: next, finish: release };
  }

  /** `obj` with `managedFields` (a sub-resource's write starts from the stored object, whose entries it must not keep). */
  private withManagedFields(obj: KubeObject, managedFields: unknown): KubeObject {
    if (managedFields === undefined) delete obj.metadata!.managedFields;
    else obj.metadata!.managedFields = managedFields;
    return obj;
  }

  /** The last steps of an update before it is stored: generation, validation, validating admission, warnings. */
  private async validateUpdate(request: AdmissionRequest, next: KubeObject, old: KubeObject, ownPart: PartSubresource | undefined, opts: WriteOptions): Promise<void> {
    const strategy = this.kind.strategy;
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
    if (errs.length) {
      await this.admissionOf(opts).abandon?.(request);
      throw this.invalid(next, errs);
    }
    await this.admissionOf(opts).validate(request);
    opts.warnings.push(...(strategy.warnings?.(next, old) ?? []));
  }

  /** An apply configuration in the version it was sent in: its apiVersion and kind, its name, pruned per fieldValidation; no defaults. */
  private decodeApplyConfig(patch: unknown, name: string, namespace: string | undefined, opts: WriteOptions, codec?: VersionCodec): KubeObject {
    const raw = patch as KubeObject;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.badRequest('the applied configuration must be an object');
    if (!raw.apiVersion || !raw.kind) {
      throw errors.badRequest(`${!raw.apiVersion ? 'apiVersion' : 'kind'} must be set in an applied configuration`);
    }
    if (Array.isArray(raw.metadata?.managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
    const config = decodeSent(this.kind, raw, opts, codec);
    this.owned.placeAtName(config, name, true);
    this.owned.placeInNamespace(config, namespace);
    return config;
  }

  async delete(namespace: string | undefined, name: string, options: DeleteOptions, opts: WriteOptions): Promise<DeleteResult> {
    const policy = effectivePolicy(options.propagationPolicy, options.orphanDependents);
    const admissionOptions = operationOptions('DeleteOptions', opts, {
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
      ...(options.preconditions ? { preconditions: options.preconditions } : {}),
    });
    delete admissionOptions.fieldManager;
    return this.updateLoop(this.key(namespace, name), name, async (current): Promise<Attempt<DeleteResult>> => {
      if (!current) throw errors.notFound(this.qualified, name);
      const obj = this.reader.decodeStored(current);
      this.checkPreconditions(obj, options);
      const request = admissionRequest('DELETE', this.admittedAt(opts), name, namespace, opts, admissionOptions, undefined, obj);
      await this.admissionOf(opts).mutate(request);
      await this.admissionOf(opts).validate(request);
      const meta = obj.metadata!;
      const wasDeleting = !!meta.deletionTimestamp;
      // A pod being deleted gracefully: a shorter period marks it again, anything else leaves it (and its finalizers) as it is.
      const graceful = beforeGracefulDelete(this.kind.strategy, obj, options.gracePeriodSeconds);
      if (graceful === 'pending') return { object: obj, removed: false };
      // The policy's finalizer (orphan, foregroundDeletion) holds the object for the garbage collector.
      const policyChanged = applyPolicyFinalizers(obj, policy);
      const held = this.deletionHeld(obj);
      if (held || graceful === 'graceful') {
        if (wasDeleting && graceful === 'none' && !policyChanged) return { object: obj, removed: false };
        if (!wasDeleting) {
          if (!meta.deletionTimestamp) {
            meta.deletionTimestamp = rfc3339Now();
            meta.deletionGracePeriodSeconds = 0; // kinds without graceful termination, as upstream for them
          }
          this.kind.strategy.markDeleting?.(obj);
        }
        // Marked with a period of 0 and held by nothing: the commit removes it.
        const written = await this.commit(current.key, obj, current, opts);
        return written === retry ? retry : { object: written, removed: !held };
      }
      if (opts.dryRun) return { object: obj, removed: true };
      try {
        const kv = await this.backend.delete(current.key, current.modRevision);
        meta.resourceVersion = String(kv.modRevision);
        await this.hooks.afterDelete?.(obj);
        return { object: obj, removed: true };
      } catch (e) {
        if (lostRace(e)) return retry;
        return storageFailure(e);
      }
    });
  }

  private checkPreconditions(obj: KubeObject, options: DeleteOptions): void {
    const pre = options.preconditions;
    if (!pre) return;
    const meta = obj.metadata!;
    if (pre.uid && pre.uid !== meta.uid) {
      throw errors.conflict(this.qualified, meta.name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid}`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw errors.conflict(this.qualified, meta.name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`);
    }
  }

  /** Deletes every object the list options select; answers with the list of what was deleted. */
  async deleteCollection(namespace: string | undefined, listOpts: ListOptions, options: DeleteOptions, opts: WriteOptions): Promise<KubeObject> {
    // The same selectors, paging and resourceVersion rules as a list: with a limit, one page goes.
    const list = await this.list(namespace, listOpts);
    const deleted: KubeObject[] = [];
    for (const item of list.items as KubeObject[]) {
      try {
        const r = await this.delete(item.metadata!.namespace, item.metadata!.name, options, opts);
        deleted.push(r.object);
      } catch (e) {
        if (e instanceof ApiError && e.reason === 'NotFound') continue; // deleted meanwhile
        throw e;
      }
    }
    return { ...list, items: deleted };
  }
}
