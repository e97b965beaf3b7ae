// The generic store: REST semantics of any declared kind over a Backend.
// A POST creates; every other write (PUT, each patch type, apply, a
// sub-resource's update, a view's or a controller's change) is a change from
// the stored object to the new one (changes.ts), run on one road in the
// update loop (updateloop.ts): the road alone creates when nothing is stored,
// checks a pinned resourceVersion (409) and hands the changed object to the
// steps every write shares, in upstream's order (steps.ts: managed fields,
// mutating admission, the kind's preparation, validation, validating
// admission, the commit). When another writer got in first, the change, the
// field manager and admission run again on the fresh object. Reads are the
// CollectionReader's.

import { ApiError, errors, FieldError, Qualified } from '../machinery/errors.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { Backend, KeyValue } from '../storage/backend.js';
import type { CacheSet } from '../storage/cache/index.js';
import type { Admission } from '../admission/types.js';
import { admissionRequest, type AdmittedAt } from './admissionrequests.js';
import { admitAll } from '../admission/chain.js';
import { CollectionReader, ListOptions } from './reader.js';
import type { ActiveWatch, WatchSink } from './watch.js';
import { ServerOwnedFields } from './serverfields.js';
import { effectivePolicy } from './propagation.js';
import { checkPreconditions, planDeletion } from './deletion.js';
import { parseResourceVersion, StoredList, StoredObject } from './objects.js';
import type { WriteHooks } from './hooks.js';
import { retry, updateLoop, type Attempt } from './updateloop.js';
import { applied, applyConfig, computed, decodeToStored, loadForWrite, patched, replacement, type Change } from './changes.js';
import { WriteSteps, type Write } from './steps.js';
import {
  decodeOptions, deleteOperationOptions, operationOptions, serverManager,
  type AnsweredCreate, type DeleteOptions, type DeleteResult, type RequestScope, type Sent, type SentPatch, type WriteOptions, type WriteTarget,
} from './writeoptions.js';

export type { ListOptions } from './reader.js';
export type { FieldValidation } from '../api/decode.js';
export type { AnsweredCreate, DeleteOptions, DeleteResult, RequestScope, Sent, SentPatch, WriteOptions, WriteTarget } from './writeoptions.js';
export type { Change } from './changes.js';

/** What a write answers: the object, and whether it was created (201). */
export interface Written {
  object: KubeObject;
  created: boolean;
}

export class ResourceStore {
  readonly qualified: Qualified;
  readonly reader: CollectionReader;
  /** What the server owns in the objects of this kind, put back after every step a client or webhook acts in. */
  private readonly owned: ServerOwnedFields;
  /** The steps every write takes between its change and the store. */
  private readonly steps: WriteSteps;

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
    this.steps = new WriteSteps(kind, backend, admission, this.owned, (namespace, name) => this.key(namespace, name));
  }

  get namespaced(): boolean {
    return this.kind.scope === 'Namespaced';
  }

  /** Adds what this kind's writes do beside storing (a Service's addresses and ports). */
  useHooks(hooks: WriteHooks): void {
    this.steps.hooks = hooks;
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

  // ---- answered creates ------------------------------------------------------

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

  // ---- writes (their steps after the change: steps.ts) ---------------------

  /** POST: creates the object (a taken name: 409 AlreadyExists). */
  async create(namespace: string | undefined, body: Sent, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<KubeObject> {
    const decoded = await decodeToStored(this.kind, body.value, decodeOptions(body, opts, scope), target.codec);
    const w: Write = { opts, scope, target, reported: operationOptions('CreateOptions', opts) };
    const created = await this.steps.insert(namespace, { object: decoded, tracked: false }, w);
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
      throw errors.invalid(this.kind.group, this.kind.kind, name, [new FieldError('FieldValueInvalid', 'metadata.resourceVersion', 'must be a decimal number', meta.resourceVersion)]);
    }
    return this.write(meta.namespace, name, replacement(this.kind, sent, pinned, target.subresource), { opts, scope, target, reported: operationOptions('UpdateOptions', opts) });
  }

  /**
   * PATCH: json, merge and strategic patches change the stored object; an
   * apply merges by field ownership and creates the object when absent.
   */
  async patch(namespace: string | undefined, name: string, patch: SentPatch, opts: WriteOptions, scope: RequestScope, target: WriteTarget = {}): Promise<Written> {
    const decode = decodeOptions(patch, opts, scope);
    const loading = patch.type === 'apply' ? loadForWrite(this.kind, patch.value) : undefined;
    if (loading) await loading;
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
        const created = await this.steps.insert(namespace, changed, w, name);
        return created === retry ? retry : { object: created, created: true };
      }
      if (changed.pinned !== undefined && changed.pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
      const written = await this.steps.update(changed, live, current, w);
      return written === retry ? retry : { object: written, created: false };
    });
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
      const request = admissionRequest('DELETE', this.steps.admittedAt({ codec: target.codec }), name, namespace, scope, reported, undefined, obj);
      const admission = this.steps.admissionOf(scope);
      await admission.mutate(request);
      await admission.validate(request);
      const plan = planDeletion(this.kind.strategy, obj, options, policy, (o) => this.steps.deletionHeld(o));
      if (plan.step === 'keep') return { object: obj, removed: false };
      if (plan.step === 'mark') {
        const written = await this.steps.commit(obj, current, dryRun);
        return written === retry ? retry : { object: written, removed: !plan.held };
      }
      if (dryRun) return { object: obj, removed: true };
      const removed = await this.steps.remove(obj, current);
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
