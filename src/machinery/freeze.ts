// Objects shared between readers (the watch cache's decoded values) are
// frozen, so that a reader that changes one fails at once instead of
// changing what every other reader sees.

/** Freezes `value` and everything inside it, without recursion; returns it. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return value;
}
