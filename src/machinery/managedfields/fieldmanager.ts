// The field manager every write goes through: server-side apply of a
// configuration, and the managedFields bookkeeping of ordinary writes
// (create, update, non-apply patch). Pure: the time is a parameter, the
// schema a TypeInfo, and the object's managedFields are read and written in
// place of `metadata.managedFields`.

import { errors } from '../errors.js';
import { tooDeep, valueExceedsDepth } from '../limits.js';
import { clone, isObject, type JsonObject } from '../patch/json.js';
import type { TypeInfo } from '../patch/typeinfo.js';
import { conflictError } from './conflicts.js';
import {
  decodeManagedFields, emptyManaged, encodeManagedFields, isResetManagedFields, managerIdentifier, timestamp, type Managed, type ManagedFieldsEntry,
} from './entries.js';
import { FieldSet } from './fieldset.js';
import { createdFieldsV1 } from './created.js';
import { fieldsV1OfShape } from './template.js';
import { allowedConflictsFromLastApplied, kubectlServerSideManager, syncLastApplied } from './lastapplied.js';
import { compareStrings, fieldPE } from './pathelement.js';
import { formatValidationErrors, toFieldSet, type ValidationError } from './typed.js';
import { applySets, updateSets, type ManagedSets, type VersionConverter } from './updater.js';

export interface FieldManagerOptions {
  /** The kind's schema as seen by the merge algorithms. */
  typeInfo: TypeInfo;
  /** group/version the request used (`v1`, `apps/v1`); recorded in the entries. */
  apiVersion: string;
  /** Time recorded in the entries this write changes. */
  now: Date;
  /** Sub-resource written (`status`, `scale`), recorded in the entry. */
  subresource?: string;
  /** Fields whose ownership is not tracked by this write (e.g. `status` on the main resource). */
  ignoredFields?: FieldSet;
  /** Update entries beyond this many are merged, oldest first (default 10). */
  maxUpdateManagers?: number;
  /** For a kind of several versions: entries are read in the version they were written in. */
  converter?: VersionConverter;
}

export interface ApplyOptions extends FieldManagerOptions {
  manager: string;
  force?: boolean;
  /** Names the object in the error for an invalid configuration, e.g. `default/web; apps/v1, Kind=Deployment`. */
  objectDescription?: string;
}

export interface UpdateOptions extends FieldManagerOptions {
  manager: string;
}

export interface FieldManagerResult {
  /** The object to store, `metadata.managedFields` set. */
  object: JsonObject;
  managedFields: ManagedFieldsEntry[];
}

export interface ApplyResult extends FieldManagerResult {
  /** False when the apply changed nothing but ownership. */
  changed: boolean;
}

/** Fields upstream never records ownership of. */
const strippedFields = FieldSet.of(
  [fieldPE('apiVersion')], [fieldPE('kind')], [fieldPE('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']
    .map((f) => [fieldPE('metadata'), fieldPE(f)]),
);

const defaultMaxUpdateManagers = 10;
const ancientChangesManager = 'ancient-changes';
/** Placeholder owner of the current write's changes (cannot clash with a real identifier, which is JSON). */
const currentOperation = 'current-operation';

/** A set of plain field paths: `fieldPaths('status', 'metadata.labels')`. */
export function fieldPaths(...dotted: string[]): FieldSet {
  return FieldSet.of(...dotted.map((p) => p.split('.').map(fieldPE)));
}

/**
 * Server-side apply of `config` to `live` (undefined: the object is being
 * created). Throws 400 for a configuration carrying managedFields or with
 * invalid or duplicate list items, 409 Conflict for fields other managers own
 * with other values (unless `force`).
 */
export function applyObject(live: JsonObject | undefined, config: JsonObject, opts: ApplyOptions): ApplyResult {
  if (!isObject(config)) throw errors.badRequest('the applied configuration must be an object');
  if (valueExceedsDepth(config)) throw tooDeep();
  if (isObject(config.metadata) && Array.isArray(config.metadata.managedFields)) {
    throw errors.badRequest('metadata.managedFields must be nil');
  }
  const t = opts.typeInfo;
  const invalid: ValidationError[] = [];
  toFieldSet(config, t, invalid);
  if (invalid.length > 0) {
    const what = opts.objectDescription ? ` (${opts.objectDescription})` : '';
    throw errors.badRequest(`failed to create typed patch object${what}: ${formatValidationErrors(invalid)}`);
  }
  const liveObj = withoutManagedFields(live ?? {});
  const managed = decodeLenient(live);
  const id = managerIdentifier({ manager: opts.manager, operation: 'Apply', subresource: opts.subresource });
  const ctx = { typeInfo: t, ignored: opts.ignoredFields, converter: opts.converter };
  let r = applySets(liveObj, config, opts.apiVersion, managed.sets, id, opts.force ?? false, ctx);
  if (!r.ok && opts.manager === kubectlServerSideManager) {
    const allowed = allowedConflictsFromLastApplied(liveObj, opts.apiVersion, t);
    if (allowed) {
      const remaining = new Map<string, FieldSet>();
      for (const [m, set] of r.conflicts) {
        const rest = set.difference(allowed);
        if (!rest.isEmpty()) remaining.set(m, rest);
      }
      r = remaining.size === 0
        ? applySets(liveObj, config, opts.apiVersion, managed.sets, id, true, ctx)
        : { ok: false, conflicts: remaining };
    }
  }
  if (!r.ok) throw conflictError(r.conflicts);
  const changed = r.object !== undefined;
  const times = new Map(managed.times);
  if (changed) times.set(id, timestamp(opts.now));
  let result: Managed = { sets: stripMeta(r.managers, id), times };
  result = capUpdateManagers(result, opts.maxUpdateManagers ?? defaultMaxUpdateManagers);
  const object = clone(r.object ?? liveObj);
  if (opts.manager === kubectlServerSideManager) syncLastApplied(object, config);
  return { ...withManagedFields(object, result), changed };
}

/**
 * Managed fields of an ordinary write by `manager`: it owns what it changed,
 * taken from other managers without conflict. managedFields the request sets
 * are honoured (a list of one empty entry clears them first); an empty or
 * unreadable list keeps the live ones, as does any sub-resource write.
 * Neither input is changed; the answer shares all but its top level and its
 * metadata with `next`.
 */
export function updateManagedFields(live: JsonObject | undefined, next: JsonObject, opts: UpdateOptions): FieldManagerResult {
  // The walks below recurse per level: the written object (its managedFields included) must be within the limit.
  if (valueExceedsDepth(next)) throw tooDeep();
  const newObj = withoutManagedFields(next);
  if (live === undefined && managedFieldsOf(next) === undefined) {
    const created = createdEntry(newObj, opts);
    if (created !== undefined) return withEntries({ ...next, metadata: isObject(next.metadata) ? { ...next.metadata } : {} }, created);
  }
  const managed = baseManaged(live, next, opts.subresource !== undefined && opts.subresource !== '');
  const liveObj = withoutManagedFields(live ?? {});
  const ctx = { typeInfo: opts.typeInfo, ignored: opts.ignoredFields, converter: opts.converter };
  const sets = stripMeta(updateSets(liveObj, newObj, opts.apiVersion, managed.sets, currentOperation, ctx), currentOperation);
  const times = new Map(managed.times);
  const current = sets.get(currentOperation);
  if (current) {
    sets.delete(currentOperation);
    const id = managerIdentifier({ manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource });
    const previous = sets.get(id);
    sets.set(id, { set: previous ? current.set.union(previous.set) : current.set, apiVersion: opts.apiVersion, applied: false });
    times.set(id, timestamp(opts.now));
  }
  const result = capUpdateManagers({ sets, times }, opts.maxUpdateManagers ?? defaultMaxUpdateManagers);
  // A new object and a new metadata; the rest is `next`'s own (the caller's to change, never this function's).
  return withManagedFields({ ...next, metadata: isObject(next.metadata) ? { ...next.metadata } : {} }, result);
}

/**
 * The entries of a create with none sent: its manager owns every field it
 * wrote (written straight as FieldsV1, see created.ts); undefined when the
 * general road must decide.
 */
function createdEntry(newObj: JsonObject, opts: UpdateOptions): ManagedFieldsEntry[] | undefined {
  const fieldsV1 = fieldsV1OfShape(newObj, opts.typeInfo, strippedFields, opts.ignoredFields,
    () => createdFieldsV1(newObj, opts.typeInfo, strippedFields, opts.ignoredFields));
  if (fieldsV1 === undefined) return undefined;
  if (fieldsV1 === null) return [];
  const e: ManagedFieldsEntry = {};
  if (opts.manager) e.manager = opts.manager;
  e.operation = 'Update';
  e.apiVersion = opts.apiVersion;
  e.time = timestamp(opts.now);
  e.fieldsType = 'FieldsV1';
  e.fieldsV1 = fieldsV1;
  if (opts.subresource) e.subresource = opts.subresource;
  return [e];
}

function managedFieldsOf(obj: JsonObject | undefined): unknown {
  return obj && isObject(obj.metadata) ? obj.metadata.managedFields : undefined;
}

/** Stored managed fields that cannot be read count as none rather than failing the write. */
function decodeLenient(obj: JsonObject | undefined): Managed {
  try {
    return decodeManagedFields(managedFieldsOf(obj));
  } catch {
    return emptyManaged();
  }
}

function baseManaged(live: JsonObject | undefined, next: JsonObject, ignoreRequest: boolean): Managed {
  if (ignoreRequest) return decodeLenient(live);
  const requested = managedFieldsOf(next);
  if (isResetManagedFields(requested)) return emptyManaged();
  try {
    const m = decodeManagedFields(requested);
    if (m.sets.size > 0) return m;
  } catch {
    // Fall back to the live entries, so clients unaware of managedFields cannot drop them.
  }
  return decodeLenient(live);
}

/** `obj` without metadata.managedFields; shares everything else with it (the walks here only read). */
function withoutManagedFields(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata) || !Object.hasOwn(obj.metadata, 'managedFields')) return obj;
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function withManagedFields(object: JsonObject, managed: Managed): FieldManagerResult {
  return withEntries(object, encodeManagedFields(managed));
}

function withEntries(object: JsonObject, managedFields: ManagedFieldsEntry[]): FieldManagerResult {
  if (managedFields.length > 0) {
    if (!isObject(object.metadata)) object.metadata = {};
    (object.metadata as JsonObject).managedFields = managedFields;
  } else if (isObject(object.metadata)) {
    delete object.metadata.managedFields;
  }
  return { object, managedFields };
}

/** Drops identity and server-set metadata from one manager's set. */
function stripMeta(sets: ManagedSets, id: string): ManagedSets {
  const vs = sets.get(id);
  if (!vs) return sets;
  const out = new Map(sets);
  const set = vs.set.difference(strippedFields);
  if (set.isEmpty()) out.delete(id);
  else out.set(id, { ...vs, set });
  return out;
}

function unixSeconds(time: string | undefined): number {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * Keeps at most `max` Update entries: the oldest are merged, per apiVersion,
 * into an `ancient-changes` entry.
 */
function capUpdateManagers(managed: Managed, max: number): Managed {
  const updaters = [...managed.sets].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return managed;
  const sets = new Map(managed.sets), times = new Map(managed.times);
  updaters.sort((a, b) => unixSeconds(times.get(a)) - unixSeconds(times.get(b)) || compareStrings(a, b));
  const firstByVersion = new Map<string, string>();
  // Buckets as they fill: sets of their own, so adding to one costs what is added.
  const filling = new Map<string, FieldSet>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i];
    const vs = sets.get(id)!;
    const bucket = managerIdentifier({ manager: ancientChangesManager, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!sets.has(bucket)) {
      sets.set(bucket, sets.get(first)!);
      sets.delete(first);
      filling.delete(bucket);
    }
    let acc = filling.get(bucket);
    if (!acc) filling.set(bucket, acc = new FieldSet().addAll(sets.get(bucket)!.set));
    sets.set(bucket, { set: acc.addAll(vs.set), apiVersion: vs.apiVersion, applied: false });
    sets.delete(id);
    times.set(bucket, times.get(id));
    length--;
  }
  for (const id of times.keys()) if (!sets.has(id)) times.delete(id);
  return { sets, times };
}
