// The structural view of a kind's schema that the merge algorithms need:
// which fields a struct declares, what its maps and lists hold, and the merge
// markers. machinery imports nothing from api/, so the catalog's Schema is
// adapted to this interface there; `untyped` serves schemaless objects.

export type TypeKind = 'struct' | 'map' | 'list' | 'scalar' | 'untyped';

export interface TypeInfo {
  readonly kind: TypeKind;
  /** Type of a field the struct declares; undefined when it declares no such field. */
  field(name: string): TypeInfo | undefined;
  /** Type of a map's values (additionalProperties) or a list's items; undefined reads as untyped. */
  elements(): TypeInfo | undefined;
  /** Server-side apply markers (`x-plat-list-type`, `x-plat-list-map-keys`, `x-plat-map-type`). */
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
  readonly mapType?: 'atomic' | 'granular';
  /** Strategic merge markers of this field: item key and strategy (`merge`, `retainKeys`, `replace`, comma-joined). */
  readonly patchMergeKey?: string;
  readonly patchStrategy?: string;
  /** Default value of this field; fills list-map keys an item omits. */
  readonly default?: unknown;
}

/** Schemaless values: maps are granular, lists atomic, any key is allowed. */
export const untyped: TypeInfo = {
  kind: 'untyped',
  field: () => undefined,
  elements: () => untyped,
};

/** Type of the value under `name` in a map or struct. */
export function childOf(t: TypeInfo, name: string): TypeInfo {
  if (t.kind === 'untyped') return untyped;
  return t.field(name) ?? t.elements() ?? untyped;
}

/** Type of a list's items. */
export function itemsOf(t: TypeInfo): TypeInfo {
  if (t.kind === 'untyped') return untyped;
  return t.elements() ?? untyped;
}

/** Whether `name` is a field the struct declares (server-side apply treats those apart from map keys). */
export function isNamedField(t: TypeInfo, name: string): boolean {
  return t.kind === 'struct' && t.field(name) !== undefined;
}

/** The strategies of a strategic-merge marker, e.g. `merge,retainKeys` -> ['merge', 'retainKeys']. */
export function patchStrategies(t: TypeInfo | undefined): string[] {
  const s = t?.patchStrategy;
  return s ? s.split(',').map((x) => x.trim()).filter(Boolean) : [];
}

export interface ListSemantics {
  relationship: 'atomic' | 'set' | 'map';
  keys: readonly string[];
}

/**
 * How server-side apply treats a list: its list type, or, without one, a
 * strategic merge key read as a map keyed by it (a merge strategy without key
 * is a set). Anything else is atomic, as are all lists of schemaless values.
 */
export function listSemantics(t: TypeInfo): ListSemantics {
  if (t.kind === 'untyped') return { relationship: 'atomic', keys: [] };
  if (t.listType === 'map') {
    const keys = t.listMapKeys && t.listMapKeys.length > 0 ? t.listMapKeys : t.patchMergeKey ? [t.patchMergeKey] : [];
    return { relationship: 'map', keys };
  }
  if (t.listType === 'set') return { relationship: 'set', keys: [] };
  if (t.listType === 'atomic') return { relationship: 'atomic', keys: [] };
  if (patchStrategies(t).includes('merge')) {
    return t.patchMergeKey ? { relationship: 'map', keys: [t.patchMergeKey] } : { relationship: 'set', keys: [] };
  }
  return { relationship: 'atomic', keys: [] };
}

/** Whether a map or struct is replaced as a whole by server-side apply. */
export function isAtomicMap(t: TypeInfo): boolean {
  return t.kind !== 'untyped' && t.mapType === 'atomic';
}
