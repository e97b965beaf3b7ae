// Dotted field paths (`status`, `spec.finalizers`) of declarations, read from
// one object and written into another. The paths come from kind declarations;
// the values are user data, moved as they are.

import { hasOwn, setOwn } from './ownkeys.js';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a dotted path, or undefined when any step is missing. */
export function getPath(obj: Json, path: string): unknown {
  let cur: unknown = obj;
  for (const step of path.split('.')) {
    if (!isObject(cur) || !hasOwn(cur, step)) return undefined;
    cur = cur[step];
  }
  return cur;
}

/** Sets (or, for undefined, removes) the value at a dotted path, creating the objects on the way. */
export function setPath(obj: Json, path: string, value: unknown): void {
  const steps = path.split('.');
  let cur = obj;
  for (const step of steps.slice(0, -1)) {
    if (!isObject(cur[step]) || !hasOwn(cur, step)) {
      if (value === undefined) return;
      setOwn(cur, step, {});
    }
    cur = cur[step] as Json;
  }
  const last = steps[steps.length - 1];
  if (value === undefined) delete cur[last];
  else setOwn(cur, last, value);
}

/** `to` with the values of `paths` taken from `from` (absent there: removed). */
export function copyPaths(from: Json, to: Json, paths: readonly string[]): void {
  for (const path of paths) setPath(to, path, structuredClone(getPath(from, path)));
}
