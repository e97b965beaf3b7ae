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

export interface UpdaterContext {
  typeInfo: TypeInfo;
  /** Fields whose ownership is not tracked (e.g. status of a main-resource write). */
  ignored?: FieldSet;
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

/** Every set brought up to date with the schema (granular turned atomic). */
export function reconcileSets(managers: ManagedSets, t: TypeInfo): ManagedSets {
  const out: ManagedSets = new Map();
  for (const [m, vs] of managers) out.set(m, { ...vs, set: reconcileWithSchema(vs.set, t) });
  return out;
}

/**
 * Moves ownership for a change from `oldObj` to `newObj` made by `workflow`:
 * fields it added or modified conflict with their other owners (unless
 * forced, when they are taken from them), and removed fields leave everyone.
 */
export function transferOwnership(oldObj: unknown, newObj: unknown, managers: ManagedSets, workflow: string,
  force: boolean, ctx: UpdaterContext): Outcome<{ managers: ManagedSets; comparison: Comparison }> {
  const comparison = withoutIgnored(compareValues(oldObj, newObj, ctx.typeInfo), ctx.ignored);
  const changed = comparison.modified.union(comparison.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [m, vs] of managers) {
    if (m === workflow) continue;
    const clash = vs.set.intersection(changed);
    if (!clash.isEmpty()) conflicts.set(m, clash);
  }
  if (!force && conflicts.size > 0) return { ok: false, conflicts };
  const out: ManagedSets = new Map();
  for (const [m, vs] of managers) {
    let set = vs.set;
    if (m !== workflow) {
      const clash = conflicts.get(m);
      if (clash) set = set.difference(clash);
      if (!comparison.removed.isEmpty()) set = set.difference(comparison.removed);
    }
    if (!set.isEmpty()) out.set(m, { ...vs, set });
  }
  return { ok: true, managers: out, comparison };
}

/**
 * An ordinary write by `manager`: it takes the fields it changed from
 * everyone else, without conflicts.
 */
export function updateSets(oldObj: unknown, newObj: unknown, apiVersion: string, managers: ManagedSets,
  manager: string, ctx: UpdaterContext): ManagedSets {
  const r = transferOwnership(oldObj, newObj, reconcileSets(managers, ctx.typeInfo), manager, true, ctx);
  if (!r.ok) throw new Error('unreachable: forced transfer reported conflicts');
  const { added, modified, removed } = r.comparison;
  const prev = r.managers.get(manager)?.set ?? new FieldSet();
  let set = prev.difference(removed).union(modified).union(added);
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
  const sets = reconcileSets(managers, t);
  let merged = mergeValues(live, config, t) as JsonObject;
  const lastSet = sets.get(manager);
  let set = toFieldSet(config, t);
  if (ctx.ignored) set = set.recursiveDifference(ctx.ignored);
  sets.set(manager, { set, apiVersion, applied: true });
  if (lastSet && !lastSet.set.isEmpty()) merged = prune(merged, sets, lastSet.set, t);
  const r = transferOwnership(live, merged, sets, manager, force, ctx);
  if (!r.ok) return r;
  return { ok: true, object: deepEqual(live, merged) ? undefined : merged, managers: r.managers };
}

/**
 * Removes what the applier owned before (`last`) and no longer claims, when
 * no other manager owns it either; anything still owned, or never owned by
 * the applier, is kept.
 */
function prune(merged: JsonObject, managers: ManagedSets, last: FieldSet, t: TypeInfo): JsonObject {
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, t);
  const asObject = (v: unknown): JsonObject => (isObject(v) ? v : {});
  const lastN = named(last);
  const mergedN = named(toFieldSet(merged, t));
  // First candidate: everything the applier owned goes.
  const pruned1 = asObject(removeItems(merged, lastN, t));
  // Add back what any manager (the applier's new configuration included) still owns.
  let owned = new FieldSet();
  for (const vs of managers.values()) owned = owned.union(vs.set);
  const pruned2 = asObject(removeItems(merged, mergedN.difference(named(toFieldSet(pruned1, t)).union(named(owned))), t));
  // Only remove what the applier did own: keep items nobody ever owned.
  const gone = mergedN.difference(named(toFieldSet(pruned2, t))).intersection(lastN);
  return gone.isEmpty() ? merged : asObject(removeItems(merged, gone, t));
}
