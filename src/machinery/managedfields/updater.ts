// Ownership bookkeeping of server-side apply over field sets, one set per
// manager: who owns what after an apply or an ordinary write, which fields
// conflict, and which fields an applier's omission removes from the object.

import { deepEqual } from '../equal.js';
import { isObject, type JsonObject } from '../patch/json.js';
import type { TypeInfo } from '../patch/typeinfo.js';
import { FieldSet } from './fieldset.js';
import { compareValues, mergeValues, type Comparison } from './merge.js';
import { ensureNamedFieldsAreMembers, reconcileWithSchema, removeItems, toFieldSet } from './typed.js';

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  /** True for an applier's set (operation Apply). */
  applied: boolean;
}

/** Sets by manager identifier. */
export type ManagedSets = Map<string, VersionedSet>;

/**
 * The kind at its other versions, for a kind served in several: each
 * manager's set is read in the version its entry was written in, against the
 * object converted to that version (field sets themselves never convert).
 */
export interface VersionConverter {
  /** `obj`, written at version `from`, as version `to` shapes it; undefined when `to` is no version of the kind. */
  convert(obj: JsonObject, from: string, to: string): JsonObject | undefined;
  /** The types of a version; undefined when it is no version of the kind. */
  typeInfo(apiVersion: string): TypeInfo | undefined;
}

export interface UpdaterContext {
  /** The types of the write's version. */
  typeInfo: TypeInfo;
  /** Fields whose ownership is not tracked (e.g. status of a main-resource write). */
  ignored?: FieldSet;
  /** Without one every entry is read in the write's version, whatever its apiVersion says. */
  converter?: VersionConverter;
}

/** The version a set is read in: its own when the kind has a converter, else the write's. */
function versionOf(vs: VersionedSet, apiVersion: string, ctx: UpdaterContext): string {
  return ctx.converter ? vs.apiVersion : apiVersion;
}

/** The types of `version`, the write's own unless another is named. */
function typesAt(version: string, apiVersion: string, ctx: UpdaterContext): TypeInfo | undefined {
  return version === apiVersion ? ctx.typeInfo : ctx.converter?.typeInfo(version);
}

/** An object of the write's version at another (itself at the same one); undefined when that version is unknown. */
function convertTo(obj: JsonObject, from: string, to: string, ctx: UpdaterContext): JsonObject | undefined {
  return from === to ? obj : ctx.converter?.convert(obj, from, to);
}

export type Outcome<T> = ({ ok: true } & T) | { ok: false; conflicts: Map<string, FieldSet> };

function withoutIgnored(c: Comparison, ignored?: FieldSet): Comparison {
  if (!ignored) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

/** Every set brought up to date with its version's schema (granular turned atomic). */
export function reconcileSets(managers: ManagedSets, apiVersion: string, ctx: UpdaterContext): ManagedSets {
  const out: ManagedSets = new Map();
  for (const [m, vs] of managers) {
    const t = typesAt(versionOf(vs, apiVersion, ctx), apiVersion, ctx);
    out.set(m, t ? { ...vs, set: reconcileWithSchema(vs.set, t) } : vs);
  }
  return out;
}

/**
 * Moves ownership for a change from `oldObj` to `newObj` made by `workflow`:
 * fields it added or modified conflict with their other owners (unless
 * forced, when they are taken from them), and removed fields leave everyone.
 */
export function transferOwnership(oldObj: JsonObject, newObj: JsonObject, apiVersion: string, managers: ManagedSets, workflow: string,
  force: boolean, ctx: UpdaterContext): Outcome<{ managers: ManagedSets; comparison: Comparison }> {
  const comparison = withoutIgnored(compareValues(oldObj, newObj, ctx.typeInfo), ctx.ignored);
  // A manager of another version sees the change in its version; null: the kind no longer has that version.
  const comparisons = new Map<string, Comparison | null>([[apiVersion, comparison]]);
  const comparisonAt = (version: string): Comparison | null => {
    let c = comparisons.get(version);
    if (c === undefined) {
      const t = typesAt(version, apiVersion, ctx);
      const o = convertTo(oldObj, apiVersion, version, ctx);
      const n = convertTo(newObj, apiVersion, version, ctx);
      c = t && o && n ? withoutIgnored(compareValues(o, n, t), ctx.ignored) : null;
      comparisons.set(version, c);
    }
    return c;
  };
  // What a comparison says was added or modified, made once per comparison (and without a copy when one side is empty).
  const changes = new Map<Comparison, FieldSet>();
  const changedAt = (c: Comparison): FieldSet => {
    let changed = changes.get(c);
    if (changed === undefined) {
      changed = c.modified.isEmpty() ? c.added : c.added.isEmpty() ? c.modified : c.modified.union(c.added);
      changes.set(c, changed);
    }
    return changed;
  };
  const conflicts = new Map<string, FieldSet>();
  const gone = new Set<string>();
  for (const [m, vs] of managers) {
    if (m === workflow) continue;
    const c = comparisonAt(versionOf(vs, apiVersion, ctx));
    // As upstream: the entry of a version the kind no longer has is dropped.
    if (!c) { gone.add(m); continue; }
    const changed = changedAt(c);
    if (changed.isEmpty()) continue;
    const clash = vs.set.intersection(changed);
    if (!clash.isEmpty()) conflicts.set(m, clash);
  }
  if (!force && conflicts.size > 0) return { ok: false, conflicts };
  const out: ManagedSets = new Map();
  for (const [m, vs] of managers) {
    if (gone.has(m)) continue;
    let set = vs.set;
    if (m !== workflow) {
      const clash = conflicts.get(m);
      if (clash) set = set.difference(clash);
      const removed = comparisonAt(versionOf(vs, apiVersion, ctx))!.removed;
      if (!removed.isEmpty()) set = set.difference(removed);
    }
    if (!set.isEmpty()) out.set(m, { ...vs, set });
  }
  return { ok: true, managers: out, comparison };
}

/**
 * An ordinary write by `manager`: it takes the fields it changed from
 * everyone else, without conflicts.
 */
export function updateSets(oldObj: JsonObject, newObj: JsonObject, apiVersion: string, managers: ManagedSets,
  manager: string, ctx: UpdaterContext): ManagedSets {
  const r = transferOwnership(oldObj, newObj, apiVersion, reconcileSets(managers, apiVersion, ctx), manager, true, ctx);
  if (!r.ok) throw new Error('unreachable: forced transfer reported conflicts');
  const { added, modified, removed } = r.comparison;
  const prev = r.managers.get(manager)?.set ?? new FieldSet();
  // Sets are immutable: an empty side takes the other as it is (a create's set is its `added`, uncopied).
  let set = prev.isEmpty() || removed.isEmpty() ? prev : prev.difference(removed);
  for (const more of [modified, added]) if (!more.isEmpty()) set = set.isEmpty() ? more : set.union(more);
  if (ctx.ignored) set = set.recursiveDifference(ctx.ignored);
  const out = new Map(r.managers);
  if (set.isEmpty()) out.delete(manager);
  else out.set(manager, { set, apiVersion, applied: false });
  return out;
}

/**
 * An apply by `manager`: merges the configuration into the live object,
 * makes the configuration's fields the applier's set, removes fields the
 * applier dropped that nobody else owns, then moves ownership (conflicts
 * unless forced). `object` is undefined when the object does not change.
 */
export function applySets(live: JsonObject, config: JsonObject, apiVersion: string, managers: ManagedSets,
  manager: string, force: boolean, ctx: UpdaterContext): Outcome<{ object: JsonObject | undefined; managers: ManagedSets }> {
  const t = ctx.typeInfo;
  const sets = reconcileSets(managers, apiVersion, ctx);
  let merged = mergeValues(live, config, t) as JsonObject;
  const lastSet = sets.get(manager);
  let set = toFieldSet(config, t);
  if (ctx.ignored) set = set.recursiveDifference(ctx.ignored);
  sets.set(manager, { set, apiVersion, applied: true });
  if (lastSet && !lastSet.set.isEmpty()) merged = prune(merged, apiVersion, sets, lastSet, ctx) ?? merged;
  const r = transferOwnership(live, merged, apiVersion, sets, manager, force, ctx);
  if (!r.ok) return r;
  return { ok: true, object: deepEqual(live, merged) ? undefined : merged, managers: r.managers };
}

/**
 * Removes what the applier owned before (`last`) and no longer claims, when
 * no other manager owns it either; anything still owned, or never owned by
 * the applier, is kept. Each set is read in its own version: the merged
 * object travels to the applier's last version, to each owner's, and back to
 * the write's (undefined when a conversion is impossible: nothing is pruned).
 */
function prune(merged: JsonObject, apiVersion: string, managers: ManagedSets, last: VersionedSet, ctx: UpdaterContext): JsonObject | undefined {
  const asObject = (v: unknown): JsonObject => (isObject(v) ? v : {});
  const lastVersion = versionOf(last, apiVersion, ctx);
  const lastTypes = typesAt(lastVersion, apiVersion, ctx);
  const mergedAtLast = convertTo(merged, apiVersion, lastVersion, ctx);
  if (!lastTypes || !mergedAtLast) return undefined;
  const named = (obj: JsonObject, t: TypeInfo) => ensureNamedFieldsAreMembers(toFieldSet(obj, t), t);
  // First candidate: everything the applier owned goes.
  let pruned = asObject(removeItems(mergedAtLast, ensureNamedFieldsAreMembers(last.set, lastTypes), lastTypes));
  // Add back what any manager (the applier's new configuration included) still owns, per version, the pruned one first.
  const ownedByVersion = new Map<string, FieldSet>([[lastVersion, new FieldSet()]]);
  for (const vs of managers.values()) {
    const v = versionOf(vs, apiVersion, ctx);
    ownedByVersion.set(v, (ownedByVersion.get(v) ?? new FieldSet()).union(vs.set));
  }
  let version = lastVersion, mergedHere = mergedAtLast;
  for (const [v, owned] of ownedByVersion) {
    const t = typesAt(v, apiVersion, ctx);
    const m = convertTo(mergedHere, version, v, ctx), p = convertTo(pruned, version, v, ctx);
    if (!t || !m || !p) continue;
    version = v; mergedHere = m;
    pruned = asObject(removeItems(m, named(m, t).difference(named(p, t).union(ensureNamedFieldsAreMembers(owned, t))), t));
  }
  // Only remove what the applier did own: keep items nobody ever owned.
  const prunedAtLast = convertTo(pruned, version, lastVersion, ctx);
  if (!prunedAtLast) return undefined;
  const gone = named(mergedAtLast, lastTypes).difference(named(prunedAtLast, lastTypes)).intersection(ensureNamedFieldsAreMembers(last.set, lastTypes));
  const result = gone.isEmpty() ? mergedAtLast : asObject(removeItems(mergedAtLast, gone, lastTypes));
  return convertTo(result, lastVersion, apiVersion, ctx);
}
