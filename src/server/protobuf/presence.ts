// Field presence, as upstream's generated marshalers decide it. A Go value
// field (string, int, struct) is written always, empty or not; a Go pointer
// field (*bool, *int64, *Time, ...) only when set. The schema does not say which
// Go type a field has, so the rule is: by JSON type, with the exceptions of the
// kinds we serve listed below by message and field name.
//
// The defaults lean to "only when set" wherever writing a zero value could
// change the meaning (a pointer to false is not an unset bool, an empty
// deletionTimestamp message makes a client think the object is being deleted);
// for strings, which API types almost never declare as pointers, "always".
// Being wrong towards "only when set" costs byte-exactness, never meaning.
//
// On decode the same rule says which zero values to keep: a pointer field that
// arrives holds a value even when zero (gracePeriodSeconds: 0), while a zero
// value field is dropped, as JSON `omitempty` would.

export type Presence = 'always' | 'whenSet';

export type FieldShape = 'string' | 'integer' | 'boolean' | 'number' | 'message';

/** Go value fields whose JSON type would default to "only when set", by message (group.version.Kind). */
const valueFields: Record<string, readonly string[]> = {
  'meta.v1.ObjectMeta': ['generation', 'creationTimestamp'],
  'meta.v1.Status': ['code'],
  'meta.v1.StatusDetails': ['retryAfterSeconds'],
  'meta.v1.WatchEvent': ['object'],
  'core.v1.Namespace': ['spec', 'status'],
  'core.v1.NamespaceCondition': ['lastTransitionTime'],
  'core.v1.Event': ['count', 'involvedObject', 'source', 'firstTimestamp', 'lastTimestamp', 'eventTime'],
  'core.v1.EventSeries': ['count', 'lastObservedTime'],
};

/** Go pointer fields whose JSON type (string) would default to "always". */
const pointerFields: Record<string, readonly string[]> = {
  'meta.v1.Preconditions': ['uid', 'resourceVersion'],
  'meta.v1.DeleteOptions': ['propagationPolicy'],
};

/** `message` is the last three parts of the definition name, e.g. core.v1.Event. */
export function presenceOf(message: string | undefined, field: string, shape: FieldShape): Presence {
  if (message !== undefined) {
    if (valueFields[message]?.includes(field)) return 'always';
    if (pointerFields[message]?.includes(field)) return 'whenSet';
  }
  // Every object and list embeds its metadata by value.
  if (field === 'metadata' && shape === 'message') return 'always';
  return shape === 'string' ? 'always' : 'whenSet';
}
