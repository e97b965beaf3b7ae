// User data decides the keys of many objects here (labels, data maps, patches,
// field sets). A key such as `__proto__`, `constructor` or `toString` must be
// an ordinary key: read only when the object has it as its own, and written
// without touching any prototype. Every place that turns user data into object
// keys goes through these three.

/** Whether `obj` has `key` as its own property (inherited names like `constructor` do not count). */
export function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** The own value of `key`, or undefined: never a value inherited from a prototype. */
export function ownValue<T>(obj: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/**
 * Sets `key` on `obj` as an own, enumerable property. Plain assignment of
 * `__proto__` would replace the object's prototype instead, so that one key
 * is defined rather than assigned.
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** A copy of `obj` with the keys `names` lists renamed (the others kept), every key set as an own property. */
export function renameKeys(obj: Record<string, unknown>, names: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) setOwn(out, hasOwn(names, key) ? names[key]! : key, value);
  return out;
}
