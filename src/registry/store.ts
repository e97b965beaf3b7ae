// The generic store: REST semantics of any declared kind over a Backend.
// Create: decode → defaults → prepareForCreate → mutating admission →
// validate → validating admission → write. Update and patch run the same
// steps inside one retry loop around the backend's compare-and-swap. Reads
// are the CollectionReader's (reader.ts).

import { randomUUID } from 'node:crypto';
import { ApiError, errors, FieldError, Qualified } from '../machinery/errors.js';
import { deepEqual } from '../machinery/equal.js';
import { product } from '../machinery/vocabulary.js';
import { generateName, validateObjectMeta, validateObjectMetaUpdate } from '../machinery/objectmeta.js';
import { rfc3339Now } from '../machinery/time.js';
import type { UserInfo } from '../machinery/user.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import { Backend, KeyValue, StorageError } from '../storage/backend.js';
import type { CacheSet } from '../storage/cache/index.js';
import { Admission, AdmissionRequest, Operation } from '../admission/types.js';
import { admitAll } from '../admission/chain.js';
import { CollectionReader, ListOptions } from './reader.js';
import { decodeObject, DecodeOptions } from './decode.js';
import type { ActiveWatch, WatchSink } from './watch.js';
import { trackApply, trackWrite } from './managed.js';
import { applyPatch, patchPrecondition, PatchType } from './patch.js';
import { applyPolicyFinalizers, effectivePolicy } from './propagation.js';
import { parseResourceVersion, StoredList, StoredObject, toStoredBytes } from './objects.js';

export type { ListOptions } from './reader.js';
export type { FieldValidation } from './decode.js';

export interface WriteOptions extends DecodeOptions {
  dryRun: boolean;
  /** Who asks, for admission. */
  user?: UserInfo;
  /** Owner of the fields this write sets (fieldManager, or derived from the User-Agent). */
  manager?: string;
}

/** Manager recorded for writes that name none (the server's own). */
const serverManager = `${product.name}-apiserver`;

export interface PatchOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

export interface DeleteResult {
  object: KubeObject;
  /** False when the object stays because finalizers hold it. */
  removed: boolean;
}

/**
 * A lost compare-and-swap means another writer got in first, so every round
 * makes progress somewhere: writes without a precondition retry until they
 * win, as upstream's GuaranteedUpdate does. The bound only stops a broken
 * backend from looping forever; N concurrent writers need up to N rounds.
 */
const maxUpdateRetries = 10_000;

export class ResourceStore {
  readonly qualified: Qualified;
  readonly reader: CollectionReader;

  constructor(
    readonly kind: KindDefinition,
    private readonly backend: Backend,
    private readonly admission: Admission = admitAll,
    /** Watch caches of the backend; without them every read goes to the store. */
    caches?: CacheSet,
  ) {
    this.reader = new CollectionReader(kind, backend, caches);
    this.qualified = this.reader.qualified;
  }

  get namespaced(): boolean {
    return this.kind.scope === 'Namespaced';
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

  watch(namespace: string | undefined, opts: ListOptions & { maxBuffered?: number }, sink: WatchSink): Promise<ActiveWatch> {
    return this.reader.watch(namespace, opts, sink);
  }

  fieldValue(obj: KubeObject, field: string): string {
    return this.reader.fieldValue(obj, field);
  }

  private decodeStored(kv: KeyValue): KubeObject {
    return this.reader.decodeStored(kv);
  }

  // ---- decoding and validation --------------------------------------------

  decode(body: unknown, opts: WriteOptions): KubeObject {
    return decodeObject(this.kind, body, opts);
  }

  private invalid(obj: KubeObject, errs: FieldError[]): ApiError {
    return errors.invalid(this.kind.group, this.kind.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errs);
  }

  private metaRules() {
    return { namespaced: this.namespaced, nameCheck: this.kind.nameCheck };
  }

  private admissionRequest(operation: Operation, name: string, namespace: string | undefined, opts: WriteOptions,
    object?: KubeObject, oldObject?: KubeObject, subresource?: string): AdmissionRequest {
    return { operation, kind: this.kind, name, namespace: this.namespaced ? namespace : undefined, object, oldObject, subresource, user: opts.user, dryRun: opts.dryRun };
  }

  /** Whether something still holds the object once deletion is asked: finalizers, or the kind's own rule. */
  private deletionHeld(obj: KubeObject): boolean {
    return (obj.metadata?.finalizers ?? []).length > 0 || (this.kind.strategy.holdsDeletion?.(obj) ?? false);
  }

  /** The namespace in the body must agree with the path; an empty one takes the path's. */
  private placeInNamespace(obj: KubeObject, namespace: string | undefined): void {
    const meta = obj.metadata!;
    if (!this.namespaced) return;
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace ?? meta.namespace;
  }

  // ---- writes ------------------------------------------------------------

  async create(namespace: string | undefined, body: unknown, opts: WriteOptions): Promise<KubeObject> {
    return this.createObject(namespace, this.decode(body, opts), opts, false);
  }

  /** Creates a decoded object; `tracked`: its managedFields were already set (by an apply). */
  private async createObject(namespace: string | undefined, decoded: KubeObject, opts: WriteOptions, tracked: boolean): Promise<KubeObject> {
    let obj = decoded;
    this.placeInNamespace(obj, namespace);
    let meta = obj.metadata!;
    const strategy = this.kind.strategy;
    strategy.defaults?.(obj);
    // Server-owned fields: set here, whatever the client sent.
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339Now();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    delete meta.selfLink;
    if (this.kind.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    strategy.prepareForCreate?.(obj);
    strategy.defaults?.(obj);
    const request = this.admissionRequest('CREATE', meta.name ?? '', meta.namespace, opts, obj);
    await this.admission.mutate(request);
    if (!tracked) {
      obj = request.object = trackWrite(this.kind, undefined, request.object!, opts.manager ?? serverManager);
      meta = obj.metadata!;
    }
    const errs = [...validateObjectMeta(meta, this.metaRules()), ...(strategy.validate?.(obj) ?? [])];
    if (errs.length) throw this.invalid(obj, errs);
    await this.admission.validate(request);
    opts.warnings.push(...(strategy.warnings?.(obj) ?? []));
    const key = this.key(meta.namespace, meta.name);
    if (opts.dryRun) {
      if (await this.backend.get(key)) throw errors.alreadyExists(this.qualified, meta.name);
      return obj;
    }
    try {
      const kv = await this.backend.create(key, toStoredBytes(obj));
      meta.resourceVersion = String(kv.modRevision);
      return obj;
    } catch (e) {
      if (e instanceof StorageError && e.code === 'KeyExists') throw errors.alreadyExists(this.qualified, meta.name);
      throw e;
    }
  }

  /**
   * PUT: replaces the object (200) or creates it when absent (201).
   * `subresource` 'status' replaces only the status of the stored object.
   */
  async update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, subresource?: string): Promise<{ object: KubeObject; created: boolean }> {
    const obj = this.decode(body, opts);
    const meta = obj.metadata!;
    if (meta.name && meta.name !== name) {
      throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    this.placeInNamespace(obj, namespace);
    const preconditionRv = parseResourceVersion(meta.resourceVersion);
    if (Number.isNaN(preconditionRv)) {
      throw this.invalid(obj, [new FieldError('FieldValueInvalid', 'metadata.resourceVersion', 'must be a decimal number', meta.resourceVersion)]);
    }
    const key = this.key(meta.namespace, name);
    for (let attempt = 0; attempt < maxUpdateRetries; attempt++) {
      const current = await this.backend.get(key);
      if (!current) {
        // Only kinds whose strategy allows it create on PUT, as upstream; the rest answer 404.
        if (subresource || !this.kind.createOnUpdate) throw errors.notFound(this.qualified, name);
        if (preconditionRv !== undefined && preconditionRv !== 0) throw errors.notFound(this.qualified, name);
        const created = await this.createObject(namespace, structuredClone({ ...obj, metadata: { ...meta, resourceVersion: undefined } }), opts, false)
          .catch((e) => { if (e instanceof ApiError && e.reason === 'AlreadyExists') return undefined; throw e; });
        if (created) return { object: created, created: true };
        continue; // lost a race with another creator: update what they made
      }
      if (preconditionRv !== undefined && preconditionRv !== current.modRevision) throw errors.staleObject(this.qualified, name);
      const old = this.decodeStored(current);
      const next = await this.prepareUpdate(structuredClone(obj), old, subresource, opts);
      const result = await this.writeUpdate(key, next, old, current, opts);
      if (result === 'retry') continue;
      return { object: result, created: false };
    }
    throw errors.staleObject(this.qualified, name);
  }

  /**
   * Merges server-owned fields from the old object, records field ownership
   * (unless an apply already did: `tracked`), admits and validates the result.
   */
  private async prepareUpdate(obj: KubeObject, old: KubeObject, subresource: string | undefined, opts: WriteOptions, tracked = false): Promise<KubeObject> {
    const strategy = this.kind.strategy;
    let next = obj;
    if (subresource === 'status') {
      next = { ...structuredClone(old), status: obj.status };
    } else if (subresource === undefined && this.kind.subresources.status) {
      next.status = old.status;
    }
    let meta = next.metadata!;
    const oldMeta = old.metadata!;
    meta.uid ||= oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.deletionTimestamp = oldMeta.deletionTimestamp;
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp === undefined) delete meta.deletionTimestamp;
    if (meta.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    strategy.defaults?.(next);
    strategy.prepareForUpdate?.(next, old, subresource);
    const request = this.admissionRequest('UPDATE', meta.name, meta.namespace, opts, next, old, subresource);
    await this.admission.mutate(request);
    next = request.object!;
    if (!tracked) {
      next = request.object = trackWrite(this.kind, old, next, opts.manager ?? serverManager, subresource);
    }
    meta = next.metadata!;
    if (this.kind.tracksGeneration) {
      const { metadata: _a, status: _b, ...newBody } = next;
      const { metadata: _c, status: _d, ...oldBody } = old;
      meta.generation = (oldMeta.generation ?? 1) + (deepEqual(newBody, oldBody) ? 0 : 1);
    } else {
      delete meta.generation;
    }
    const errs = [...validateObjectMetaUpdate(meta, oldMeta, this.metaRules()), ...(strategy.validateUpdate?.(next, old) ?? [])];
    if (oldMeta.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter((f: string) => !(oldMeta.finalizers ?? []).includes(f));
      if (added.length) errs.push(new FieldError('FieldValueForbidden', 'metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, undefined, false));
    }
    if (errs.length) throw this.invalid(next, errs);
    await this.admission.validate(request);
    opts.warnings.push(...(strategy.warnings?.(next, old) ?? []));
    return next;
  }

  /** Writes `next` over `current`; 'retry' on a lost compare-and-swap. */
  private async writeUpdate(key: string, next: KubeObject, old: KubeObject, current: KeyValue, opts: WriteOptions): Promise<KubeObject | 'retry'> {
    const meta = next.metadata!;
    delete meta.resourceVersion;
    // Nothing holds an object being deleted any more: remove it now.
    const finishDeletion = meta.deletionTimestamp && !this.deletionHeld(next);
    const bytes = toStoredBytes(next);
    if (!finishDeletion && bytes.equals(current.value)) {
      meta.resourceVersion = String(current.modRevision); // nothing changed: no write, as upstream
      return next;
    }
    if (opts.dryRun) {
      meta.resourceVersion = String(current.modRevision);
      return next;
    }
    try {
      const kv = finishDeletion
        ? await this.backend.delete(key, current.modRevision)
        : await this.backend.update(key, bytes, current.modRevision);
      meta.resourceVersion = String(kv.modRevision);
      return next;
    } catch (e) {
      if (e instanceof StorageError && (e.code === 'RevisionMismatch' || e.code === 'KeyNotFound')) return 'retry';
      throw e;
    }
  }

  /**
   * PATCH: json, merge and strategic patches change the live object; an
   * apply merges `patch` by field ownership and creates the object when
   * absent (`created`). On a lost compare-and-swap the patch is applied
   * again to the fresh object, unless the client pinned a resourceVersion.
   */
  async patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions, patchOpts: PatchOptions = {}, subresource?: string): Promise<{ object: KubeObject; created: boolean }> {
    const key = this.key(namespace, name);
    const manager = opts.manager ?? serverManager;
    const config = type === 'apply' ? this.decodeApplyConfig(patch, name, namespace, opts) : undefined;
    for (let attempt = 0; attempt < maxUpdateRetries; attempt++) {
      const current = await this.backend.get(key);
      if (!current) {
        if (!config || subresource) throw errors.notFound(this.qualified, name);
        const applied = trackApply(this.kind, undefined, config, manager, patchOpts.force ?? false);
        const created = await this.createObject(namespace, applied, { ...opts, warnings: opts.warnings }, true)
          .catch((e) => { if (e instanceof ApiError && e.reason === 'AlreadyExists') return undefined; throw e; });
        if (created) return { object: created, created: true };
        continue; // someone created it meanwhile: apply over theirs
      }
      const live = this.decodeStored(current);
      let next: KubeObject;
      if (config) {
        const pinned = config.metadata?.resourceVersion;
        if (pinned && pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
        next = trackApply(this.kind, live, config, manager, patchOpts.force ?? false, subresource);
      } else {
        const patched = applyPatch(type as Exclude<PatchType, 'apply'>, this.kind, structuredClone(live), patch);
        const pinned = patchPrecondition(type, patch, live, patched);
        if (pinned !== undefined && pinned !== live.metadata!.resourceVersion) throw errors.staleObject(this.qualified, name);
        next = this.decode(patched, opts);
        if (next.metadata?.name !== name) throw errors.badRequest(`the name of the object (${next.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
        if (this.namespaced && (next.metadata?.namespace ?? namespace) !== namespace) {
          throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
      }
      const prepared = await this.prepareUpdate(next, live, subresource, opts, config !== undefined);
      const result = await this.writeUpdate(key, prepared, live, current, opts);
      if (result === 'retry') {
        if (patchPrecondition(type, patch, live, next) !== undefined) throw errors.staleObject(this.qualified, name);
        continue;
      }
      return { object: result, created: false };
    }
    throw errors.staleObject(this.qualified, name);
  }

  /** An apply configuration: the kind's own apiVersion and kind, its name, pruned per fieldValidation. */
  private decodeApplyConfig(patch: unknown, name: string, namespace: string | undefined, opts: WriteOptions): KubeObject {
    const raw = patch as KubeObject;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.badRequest('the applied configuration must be an object');
    if (!raw.apiVersion || !raw.kind) {
      throw errors.badRequest(`${!raw.apiVersion ? 'apiVersion' : 'kind'} must be set in an applied configuration`);
    }
    if (Array.isArray(raw.metadata?.managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
    const config = this.decode(raw, opts);
    if (config.metadata?.name && config.metadata.name !== name) {
      throw errors.badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
    }
    config.metadata!.name = name;
    this.placeInNamespace(config, namespace);
    return config;
  }

  async delete(namespace: string | undefined, name: string, options: DeleteOptions, opts: WriteOptions): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    const policy = effectivePolicy(options.propagationPolicy, options.orphanDependents);
    for (let attempt = 0; attempt < maxUpdateRetries; attempt++) {
      const current = await this.backend.get(key);
      if (!current) throw errors.notFound(this.qualified, name);
      const obj = this.decodeStored(current);
      this.checkPreconditions(obj, options);
      const meta = obj.metadata!;
      await this.admission.mutate(this.admissionRequest('DELETE', name, namespace, opts, undefined, obj));
      await this.admission.validate(this.admissionRequest('DELETE', name, namespace, opts, undefined, obj));
      try {
        // The policy's finalizer (orphan, foregroundDeletion) holds the object for the garbage collector.
        const policyChanged = applyPolicyFinalizers(obj, policy);
        if (this.deletionHeld(obj)) {
          const starting = !meta.deletionTimestamp;
          if (!starting && !policyChanged) return { object: obj, removed: false };
          if (starting) {
            meta.deletionTimestamp = rfc3339Now();
            meta.deletionGracePeriodSeconds = 0; // our kinds have no graceful termination, as upstream for them
            this.kind.strategy.markDeleting?.(obj);
          }
          if (opts.dryRun) return { object: obj, removed: false };
          const kv = await this.backend.update(key, toStoredBytes(obj), current.modRevision);
          meta.resourceVersion = String(kv.modRevision);
          return { object: obj, removed: false };
        }
        if (opts.dryRun) return { object: obj, removed: true };
        const kv = await this.backend.delete(key, current.modRevision);
        meta.resourceVersion = String(kv.modRevision);
        return { object: obj, removed: true };
      } catch (e) {
        if (e instanceof StorageError && (e.code === 'RevisionMismatch' || e.code === 'KeyNotFound')) continue;
        throw e;
      }
    }
    throw errors.staleObject(this.qualified, name);
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
