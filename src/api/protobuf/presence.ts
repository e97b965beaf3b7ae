// Field presence, as upstream's generated marshalers decide it. A Go value
// field (string, int, struct) is written always, empty or not; a Go pointer
// field (*bool, *int64, *Time, ...) only when set. The schema does not say which
// Go type a field has, so the rule is: by JSON type, with the exceptions
// declared on the fields themselves.
//
// The defaults lean to "only when set" wherever writing a zero value could
// change the meaning (a pointer to false is not an unset bool, an empty
// deletionTimestamp message makes a client think the object is being deleted);
// for strings, which API types almost never declare as pointers, "always".
// Being wrong towards "only when set" costs byte-exactness, never meaning.
// The exceptions are declared with the fields (`p(number, schema, presence)`
// in the kinds' modules), so a kind brings its own.
//
// On decode the same rule says which zero values to keep: a pointer field that
// arrives holds a value even when zero (gracePeriodSeconds: 0), while a zero
// value field is dropped, as JSON `omitempty` would.

import type { Schema } from '../schema.js';

export type Presence = 'always' | 'whenSet';

export type FieldShape = 'string' | 'integer' | 'boolean' | 'number' | 'message';

/**
 * Presence of a field: what its declaration says (`protoPresence`, where the
 * Go type differs from what the JSON type suggests), else the rule above.
 */
export function presenceOf(field: Schema, name: string, shape: FieldShape): Presence {
  if (field.protoPresence) return field.protoPresence;
  // Every object and list embeds its metadata by value.
  if (name === 'metadata' && shape === 'message') return 'always';
  return shape === 'string' ? 'always' : 'whenSet';
}
