// Values usually at hand and only sometimes still to come. A check on every
// request (a cached token, an object in the watch cache) answers without a
// promise, and so without the allocations and turns of the microtask queue
// an await costs; it returns a promise only when it must wait (a signature
// check, a read of the store).

export type MaybePromise<T> = T | Promise<T>;

/** `next` applied to `value` at once when it is at hand, after it resolves when it is a promise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
