// An index of a watch cache: the cache's values grouped by one value derived
// from each (a pod's spec.nodeName), each group in key order. It is what
// upstream's watch cache keeps for the field selectors a kind declares as
// indexed: a list with an exact selector on the field reads only its group,
// and a watch event is offered only to the watchers whose value the object
// had or has (its "triggers"), not to every watcher of the resource.
//
// The cache still knows nothing of objects: the consumer that declares an
// index gives the function that reads the value from a stored value. Each
// cached value carries the values it was indexed under (CachedKeyValue
// .indexValues), so an event's old value need not be derived again, and the
// events kept in the window can be filtered for a watcher resumed later.

import { SortedValues } from './sorted-values.js';
import type { CacheEvent, CachedKeyValue, IndexCondition } from './types.js';

/** An index a consumer asks a cache to keep. */
export interface CacheIndexDeclaration {
  /** Its name (the field selector it serves, e.g. "spec.nodeName"). */
  name: string;
  /** The value `kv` is indexed under; undefined when it cannot be read (such a value is in no group). */
  valueOf(kv: CachedKeyValue): string | undefined;
}

export type { IndexCondition } from './types.js';

/** The values of one indexed value, and that value's one string (every member's slot holds it, not a copy). */
interface Group {
  value: string;
  members: SortedValues;
}

export class ValueIndex {
  private groups = new Map<string, Group>();

  constructor(
    readonly declaration: CacheIndexDeclaration,
    /** Where this index's value sits in each value's indexValues. */
    readonly position: number,
  ) {}

  get name(): string {
    return this.declaration.name;
  }

  /** Number of distinct values held (for tests and metrics). */
  get groupCount(): number {
    return this.groups.size;
  }

  /** Regroup `values` (every value of the cache, in key order); their indexValues are set here. */
  reset(values: CachedKeyValue[]): void {
    const grouped = new Map<string, CachedKeyValue[]>();
    for (const kv of values) {
      const value = this.derive(kv);
      if (value === undefined) continue;
      let group = grouped.get(value);
      if (!group) grouped.set(value, (group = []));
      group.push(kv);
    }
    this.groups = new Map();
    for (const [value, members] of grouped) {
      const group = this.newGroup(value);
      group.members.reset(members);
      for (const kv of members) setValue(kv, this.position, group.value);
    }
  }

  /** `kv` replaced `old` (undefined: a new key); sets kv's value for this index. */
  put(kv: CachedKeyValue, old: CachedKeyValue | undefined): void {
    const value = this.derive(kv);
    const before = old && valueAt(old, this.position);
    if (typeof before === 'string' && before !== value) this.removeFrom(before, old!.key);
    if (value !== undefined) {
      const group = this.groups.get(value) ?? this.newGroup(value);
      setValue(kv, this.position, group.value);
      group.members.put(kv);
    }
  }

  /** `old` was deleted; `kv` (the deletion's last value) is indexed as it was. */
  remove(kv: CachedKeyValue, old: CachedKeyValue | undefined): void {
    const before = old ? valueAt(old, this.position) : unknown;
    const value = before === unknown ? this.derive(kv) : before;
    setValue(kv, this.position, value);
    if (value !== undefined) this.removeFrom(value, kv.key);
  }

  /** The values of the group `value` under `prefix`, from `startKey`, at most `limit` (0: all). */
  range(value: string, prefix: string, startKey: string | undefined, limit: number): { items: CachedKeyValue[]; count: number } {
    const group = this.groups.get(value);
    return group ? group.members.range(prefix, startKey, limit) : { items: [], count: 0 };
  }

  private newGroup(value: string): Group {
    const group = { value, members: new SortedValues(undefined, false) };
    this.groups.set(group.value, group);
    return group;
  }

  private derive(kv: CachedKeyValue): string | undefined {
    let value: string | undefined;
    try {
      value = this.declaration.valueOf(kv);
    } catch {
      value = undefined; // unreadable bytes: in no group (a read of them fails on its own)
    }
    setValue(kv, this.position, value);
    return value;
  }

  private removeFrom(value: string, key: string): void {
    const group = this.groups.get(value);
    if (!group) return;
    group.members.remove(key);
    if (group.members.size === 0) this.groups.delete(value);
  }
}

/** Marks a value not (yet) indexed by an index: events of it are offered to all of that index's watchers. */
export const unknown = Symbol('not indexed');

/** The value `kv` was indexed under at `position`; `unknown` when the index did not see it. */
export function valueAt(kv: CachedKeyValue, position: number): string | undefined | typeof unknown {
  const values = kv.indexValues;
  const slot = Array.isArray(values) ? values[position] : position === 0 ? values : undefined;
  return slot === undefined ? unknown : slot === null ? undefined : slot;
}

function setValue(kv: CachedKeyValue, position: number, value: string | undefined): void {
  const slot = value ?? null;
  const values = kv.indexValues;
  if (Array.isArray(values) && position < values.length) {
    values[position] = slot;
    return;
  }
  if (!Array.isArray(values) && position === 0) {
    // The first index alone (nearly always): the value itself, no array.
    kv.indexValues = slot;
    return;
  }
  // A new array of the exact length each time: one grown by a store past its end keeps room for 17 (150 bytes a value).
  const grown = Array.isArray(values) ? values.slice() : [values];
  while (grown.length < position) grown.push(undefined);
  grown.push(slot);
  kv.indexValues = grown;
}

/** Whether `event` concerns watchers of `value`: the object had it before or has it now (or it is not known). */
export function triggers(event: CacheEvent, position: number, value: string): boolean {
  const now = valueAt(event.kv, position);
  if (now === value || now === unknown) return true;
  if (!event.prevKv) return false;
  const before = valueAt(event.prevKv, position);
  return before === value || before === unknown;
}
