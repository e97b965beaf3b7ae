// Reads of one collection: get, list with paging and selectors, and watch,
// served from the watch cache when any recent-enough version will do and
// from the store at a revision when an exact one is asked for.

import { errors, fieldErrors, Qualified } from '../machinery/errors.js';
import { hasOwn, ownValue } from '../machinery/ownkeys.js';
import { FieldSelector, LabelSelector, parseFieldSelector, parseLabelSelector, unsupportedFieldMessage } from '../machinery/selectors.js';
import type { VersionCodec } from '../api/codec.js';
import { apiVersionOf, KindDefinition, KubeObject } from '../api/kind.js';
import { Backend, KeyValue, RangeOptions, RangeResult, StorageError } from '../storage/backend.js';
import type { CacheIndexDeclaration, CacheSet, IndexCondition, WatchCache } from '../storage/cache/index.js';
import { encodeContinue } from './continue.js';
import { parseVersionParam, planGet, planList, ReadPlan } from './readversion.js';
import { ActiveWatch, startWatch, WatchSink } from './watch.js';
import { objectAlongPath } from './json-member.js';
import { materializeList, StoredList, StoredObject } from './objects.js';
import { storageFailure } from './storage-errors.js';

export interface ListOptions {
  labelSelector?: string | null;
  /** Fields as the version read names them (`version`, the stored one when absent). */
  fieldSelector?: string | null;
  /** The served version a read is made at, when not the stored one. */
  version?: VersionCodec;
  limit?: number;
  continue?: string | null;
  resourceVersion?: string | null;
  resourceVersionMatch?: string | null;
}

/** Fields a key carries: selectors on these alone are decided without decoding the value. */
const identityFields = new Set(['metadata.name', 'metadata.namespace']);

/** How long a read at a future resourceVersion waits before 504, as upstream's watch cache does. */
const futureRevisionWaitMs = 3000;

/** A field of a stored object, as a field selector names it. */
type FieldReader = (obj: KubeObject, field: string) => string;

export class CollectionReader {
  readonly qualified: Qualified;
  readonly keyRoot: string;
  /** The indexes the kind declares for its watch cache, one per indexed field selector. */
  private readonly indexes: CacheIndexDeclaration[];

  constructor(
    readonly kind: KindDefinition,
    private readonly backend: Backend,
    /** Watch caches of the backend; without them every read goes to the store. */
    private readonly caches?: CacheSet,
  ) {
    this.qualified = { group: kind.group, resource: kind.plural };
    this.keyRoot = kind.group ? `/registry/${kind.group}/${kind.plural}/` : `/registry/${kind.plural}/`;
    this.indexes = (kind.indexedFieldSelectors ?? []).filter((field) => hasOwn(kind.fieldSelectors, field)).map((field) => ({
      name: field,
      valueOf: (kv) => this.indexedValue(kv, field),
    }));
  }

  /**
   * The value of an indexed field of a stored object. An indexed field's
   * reader reads the field's own path (as spec.nodeName's does), so it is
   * given only what lies along that path, read from the bytes without
   * decoding the rest (a whole decode per pod was most of the index's cost at
   * a restart). Values the kind defaults on read, or bytes the walk does not
   * read, are decoded whole: a decode of their own, not left in the derived
   * cache, where pods no watcher reads (most, at creation) would push out
   * decodes that are read again.
   */
  private indexedValue(kv: KeyValue, field: string): string {
    const through = this.kind.readDefaultsThrough;
    if (through === undefined || kv.modRevision > through) {
      const partial = objectAlongPath(kv.value, field.split('.'));
      if (partial !== undefined) return this.fieldValue(partial as KubeObject, field);
    }
    return this.fieldValue(this.stored(kv).peekObject(), field);
  }

  /** The watch cache of this collection, keeping the kind's indexes. */
  private cache(): Promise<WatchCache> {
    return this.caches!.cacheFor(this.keyRoot, this.indexes);
  }

  /**
   * The index that narrows a read with these selectors: an exact
   * requirement on an indexed field, read as the stored version reads it
   * (a version with field selectors of its own reads converted objects).
   */
  private indexCondition(fields: FieldSelector, version: VersionCodec | undefined): IndexCondition | undefined {
    if (this.indexes.length === 0 || (version && version.served.fieldSelectors !== this.kind.fieldSelectors)) return undefined;
    for (const index of this.indexes) {
      const value = fields.exactValue(index.name);
      if (value !== undefined) return { name: index.name, value };
    }
    return undefined;
  }

  get namespaced(): boolean {
    return this.kind.scope === 'Namespaced';
  }

  /** Prefix of the keys of a collection: one namespace, or all of them. */
  prefix(namespace?: string): string {
    return this.namespaced && namespace ? `${this.keyRoot}${namespace}/` : this.keyRoot;
  }

  key(namespace: string | undefined, name: string): string {
    return this.namespaced ? `${this.keyRoot}${namespace}/${name}` : `${this.keyRoot}${name}`;
  }

  /** The stored object, or undefined. */
  async find(namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const kv = await this.backend.get(this.key(namespace, name)).catch(storageFailure);
    return kv ? this.decodeStored(kv) : undefined;
  }

  /**
   * The watch cache's value of a key, if a cache of this collection runs and
   * holds it: possibly a little behind the store, so only a first guess for
   * callers that check it (a compare-and-swap) or accept a recent state.
   */
  cachedValue(key: string): KeyValue | undefined {
    // Only a cache some read or watch has started (a write never starts one), and without waiting for it.
    const cache = this.caches?.startedCache(this.keyRoot);
    return cache?.isReady ? cache.get(key) : undefined;
  }

  /**
   * The selectors decided from a key alone, when they name only the name and
   * the namespace (a controller reading one object by name): the values are
   * then never decoded. Undefined for other selectors.
   */
  private keyMatcher(labels: LabelSelector, fields: FieldSelector): ((key: string) => boolean) | undefined {
    if (!labels.empty || fields.empty || !fields.requirements.every((r) => identityFields.has(r.field))) return undefined;
    return (key) => fields.matches((f) => this.fieldValue({ metadata: this.identityOf(key) }, f));
  }

  /** Name and namespace of a key under this collection's root (the inverse of key()). */
  identityOf(key: string): { name: string; namespace?: string } {
    const rest = key.slice(this.keyRoot.length);
    if (!this.namespaced) return { name: rest };
    const slash = rest.indexOf('/');
    return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  }

  stored(kv: KeyValue): StoredObject {
    return new StoredObject(kv, this.kind.strategy.defaults, this.kind.readDefaultsThrough);
  }

  /** The stored value decoded as the caller's own object (writers change it). */
  decodeStored(kv: KeyValue): KubeObject {
    return this.stored(kv).mutableObject();
  }

  /** The selectors of a read, its fields named as its version names them, and how a stored object's field is read. */
  private selectors(opts: ListOptions): { labels: LabelSelector; fields: FieldSelector; fieldValue: FieldReader } {
    const labels = parseLabelSelector(opts.labelSelector);
    const declared = (opts.version?.served ?? this.kind).fieldSelectors;
    const fields = parseFieldSelector(opts.fieldSelector,
      (f) => f === 'metadata.name' || (f === 'metadata.namespace' && this.namespaced) || hasOwn(declared, f),
      (f) => unsupportedFieldMessage(f, Object.keys(declared).length > 0));
    return { labels, fields, fieldValue: this.fieldReaderAt(opts.version) };
  }

  fieldValue(obj: KubeObject, field: string): string {
    if (field === 'metadata.name') return obj.metadata?.name ?? '';
    if (field === 'metadata.namespace') return obj.metadata?.namespace ?? '';
    return ownValue(this.kind.fieldSelectors, field)?.(obj) ?? '';
  }

  /**
   * Reads a field of a stored object as `version` names it: a version with
   * field selectors of its own reads them from the object converted to it.
   */
  private fieldReaderAt(version: VersionCodec | undefined): FieldReader {
    const own = version?.served.fieldSelectors;
    if (!version || !own || own === this.kind.fieldSelectors) return (obj, f) => this.fieldValue(obj, f);
    return (obj, f) => (f.startsWith('metadata.') ? this.fieldValue(obj, f) : ownValue(own, f)?.(version.fromStored(obj)) ?? '');
  }

  /**
   * The version whose field selectors read objects its conversion webhook
   * converts (as upstream, the selectors see the converted object): they
   * are converted ahead of matching, one review per page read.
   */
  private convertedAheadFor(opts: ListOptions, fields: FieldSelector): VersionCodec | undefined {
    const version = opts.version;
    return version?.convertsLater && !fields.empty && version.served.fieldSelectors !== this.kind.fieldSelectors ? version : undefined;
  }

  private matches(obj: KubeObject, labels: LabelSelector, fields: FieldSelector, fieldValue: FieldReader): boolean {
    return labels.matches(obj.metadata?.labels) && fields.matches((f) => fieldValue(obj, f));
  }

  /** Waits until the store has reached `revision`; 504 Too large resource version after a few seconds. */
  private async awaitRevision(revision: number): Promise<void> {
    const deadline = Date.now() + futureRevisionWaitMs;
    for (;;) {
      const current = await this.backend.currentRevision();
      if (current >= revision) return;
      if (Date.now() >= deadline) throw errors.tooLargeResourceVersion(revision, current, 1);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async awaitFresh(cache: WatchCache, revision: number): Promise<void> {
    try {
      await cache.waitUntilFresh(revision, futureRevisionWaitMs);
    } catch (e) {
      if (e instanceof StorageError && e.code === 'FutureRevision') throw errors.tooLargeResourceVersion(revision, e.revision ?? 0, 1);
      return storageFailure(e);
    }
  }

  /**
   * Where a read is served from: the watch cache when the latest or any
   * fresh-enough version will do (a whole in-memory snapshot), else the
   * store at the plan's revision.
   */
  private async readSource(
    plan: ReadPlan, index: IndexCondition | undefined,
  ): Promise<{ inMemory: boolean; range(prefix: string, o: RangeOptions): RangeResult | Promise<RangeResult> }> {
    const cache = await this.freshCache(plan);
    // With an index, only the objects of the selected value are read (the selector still filters them).
    if (cache) return { inMemory: true, range: (prefix, o) => cache.list(prefix, { startKey: o.startKey, index }) };
    const revision = await this.readRevision(plan);
    return { inMemory: false, range: (prefix, o) => this.backend.range(prefix, { ...o, revision: o.revision ?? revision }) };
  }

  /** The watch cache once it has caught up as far as `plan` asks; undefined when the plan reads the store itself. */
  private async freshCache(plan: ReadPlan): Promise<WatchCache | undefined> {
    if (!this.caches || !(plan.kind === 'latest' || plan.kind === 'any' || plan.kind === 'notOlderThan')) return undefined;
    const cache = await this.cache();
    if (plan.kind === 'latest') await this.awaitFresh(cache, await this.backend.currentRevision());
    else if (plan.kind === 'notOlderThan') await this.awaitFresh(cache, plan.revision);
    return cache;
  }

  /** The revision to read at for a plan (undefined: the latest). */
  private async readRevision(plan: ReadPlan): Promise<number | undefined> {
    switch (plan.kind) {
      case 'latest': case 'any': return undefined;
      case 'notOlderThan': await this.awaitRevision(plan.revision); return undefined;
      case 'exact': await this.awaitRevision(plan.revision); return plan.revision;
      case 'continue':
        // A token is only ever issued at a revision the store has reached: a later one is forged.
        if (plan.revision > await this.backend.currentRevision()) {
          throw errors.badRequest(`continue key is not valid: resource version ${plan.revision} has not been reached`);
        }
        return plan.revision;
    }
  }

  async get(namespace: string | undefined, name: string, resourceVersion?: string | null): Promise<KubeObject> {
    return (await this.getStored(namespace, name, resourceVersion)).object;
  }

  /** One object, from the watch cache as lists are (so a shared store is asked at most for its head). */
  async getStored(namespace: string | undefined, name: string, resourceVersion?: string | null): Promise<StoredObject> {
    const plan = planGet(resourceVersion);
    const key = this.key(namespace, name);
    const cache = await this.freshCache(plan).catch(storageFailure);
    const kv = cache ? cache.get(key) : await this.readRevision(plan).then(() => this.backend.get(key)).catch(storageFailure);
    if (!kv) throw errors.notFound(this.qualified, name);
    return this.stored(kv);
  }

  async list(namespace: string | undefined, opts: ListOptions): Promise<KubeObject> {
    return materializeList(await this.listStored(namespace, opts));
  }

  async listStored(namespace: string | undefined, opts: ListOptions): Promise<StoredList> {
    const { labels, fields, fieldValue } = this.selectors(opts);
    const prefix = this.prefix(namespace);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const plan = planList(opts, prefix);
    const source = await this.readSource(plan, this.indexCondition(fields, opts.version));
    let revision: number | undefined;
    const startKey = plan.kind === 'continue' ? plan.startKey : undefined;
    const items: StoredObject[] = [];
    let more = false;
    let remaining: number | undefined;
    let nextKey = startKey;
    const unfiltered = labels.empty && fields.empty;
    const keyMatches = this.keyMatcher(labels, fields);
    const matches = (obj: StoredObject) => unfiltered
      || (keyMatches ? keyMatches(obj.kv.key) : this.matches(obj.peekObject(), labels, fields, fieldValue));
    const ahead = keyMatches ? undefined : this.convertedAheadFor(opts, fields);
    try {
      // With selectors a page may need several reads to gather `limit` matches.
      for (;;) {
        const want = limit && !source.inMemory ? limit - items.length + (unfiltered ? 0 : 64) : 0;
        const page = await source.range(prefix, { revision, limit: want, startKey: nextKey });
        revision = page.revision;
        if (ahead) await ahead.aheadFromStored(page.items.map((kv) => this.stored(kv).peekObject()));
        let consumed = 0;
        for (const kv of page.items) {
          consumed++;
          const obj = this.stored(kv);
          if (matches(obj)) items.push(obj);
          if (limit && items.length === limit) break;
        }
        if (consumed > 0) nextKey = page.items[consumed - 1].key + '\0'; // smallest key after the last one read
        const moreKeys = consumed < page.items.length || page.more;
        if (limit && items.length === limit) {
          more = moreKeys;
          if (more && unfiltered) remaining = page.count - consumed;
          break;
        }
        if (!moreKeys || !limit) break;
      }
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Compacted' && plan.kind === 'exact') {
        throw errors.expired(`too old resource version: ${plan.revision} (${e.revision ?? ''})`);
      }
      if (e instanceof StorageError && e.code === 'Compacted' && plan.kind === 'continue') {
        // Revision 0 in the fresh token: go on from the same key at whatever is latest then.
        throw errors.expiredContinue(encodeContinue(0, plan.startKey));
      }
      return storageFailure(e);
    }
    const metadata: Record<string, unknown> = { resourceVersion: String(revision ?? 0) };
    if (more && nextKey !== undefined) {
      metadata.continue = encodeContinue(revision!, nextKey);
      if (remaining !== undefined) metadata.remainingItemCount = remaining;
    }
    return { apiVersion: apiVersionOf(this.kind), kind: this.kind.listKind, metadata, items };
  }

  /**
   * Watches a collection. resourceVersion unset: the current state (a
   * consistent read) as ADDED events, then changes; "0": any recent state,
   * then changes; N: changes after N. Needs the watch caches.
   */
  async watch(namespace: string | undefined, opts: ListOptions & { maxBuffered?: number }, sink: WatchSink): Promise<ActiveWatch> {
    if (!this.caches) throw errors.methodNotAllowed();
    const { labels, fields, fieldValue } = this.selectors(opts);
    if (opts.resourceVersionMatch) {
      throw errors.invalidOptions('ListOptions', [
        fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      ]);
    }
    const rv = parseVersionParam(opts.resourceVersion);
    const cache = await this.cache();
    const keyMatcher = this.keyMatcher(labels, fields);
    if (rv === undefined) await this.awaitFresh(cache, await this.backend.currentRevision());
    else if (rv > 0) await this.awaitFresh(cache, rv);
    return startWatch(cache, {
      prefix: this.prefix(namespace),
      after: rv === undefined || rv === 0 ? undefined : rv,
      labels, fields,
      fieldValue,
      convertAhead: keyMatcher ? undefined : this.convertedAheadFor(opts, fields),
      defaults: this.kind.strategy.defaults,
      readDefaultsThrough: this.kind.readDefaultsThrough,
      maxBuffered: opts.maxBuffered,
      keyMatches: keyMatcher,
      index: this.indexCondition(fields, opts.version),
    }, sink);
  }
}
