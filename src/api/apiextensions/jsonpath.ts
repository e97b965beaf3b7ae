// The JSONPath subset of a custom resource's printer columns and selectable
// fields, as upstream accepts them: `.spec.replicas`, `.items[0]`, escaped
// dots (`.metadata.annotations.example\.io/key`),
// `.metadata.labels['app.io/x']`, `.status.conditions[?(@.type=="Ready")].status`,
// `[*]`. A path is parsed once when the definition is served; evaluating it
// walks own keys only (user data never reaches a prototype).

import { ownValue } from '../../machinery/ownkeys.js';

type Step =
  | { field: string }
  | { index: number }
  | { all: true; objectsOnly?: boolean }
  | { filter: string[]; equals: string | number | boolean };

export type JsonPath = Step[];

/** What ends a dot-notation field in upstream's JSONPath (k8s.io/client-go/util/jsonpath's isTerminator). */
const terminators = new Set([' ', '\t', '\r', '\n', '.', ',', '[', ']', '$', '@', '{', '}']);

/** Parses `path`, or answers why it is not one of the subset. */
export function parseJsonPath(path: string): JsonPath | string {
  const steps: Step[] = [];
  let i = 0;
  if (!path.startsWith('.') && !path.startsWith('[')) return 'must be a simple json path starting with .';
  while (i < path.length) {
    if (path[i] === '.') {
      // As upstream's parser: a field runs to the next terminator, a backslash escapes the character after it.
      let j = i + 1;
      let name = '';
      while (j < path.length && !terminators.has(path[j]!)) {
        if (path[j] === '\\' && j + 1 < path.length) j++;
        name += path[j]!;
        j++;
      }
      if (name === '') return `unexpected "${path.slice(i)}"`;
      // `.*` is upstream's wildcard of an object's values (a list's items are `[*]`).
      steps.push(name === '*' && path.slice(i + 1, j) === '*' ? { all: true, objectsOnly: true } : { field: name });
      i = j;
      continue;
    }
    if (path[i] !== '[') return `unexpected "${path.slice(i)}"`;
    const rest = path.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\[(\d+)\]/.exec(rest))) steps.push({ index: Number(m[1]) });
    else if ((m = /^\[\*\]/.exec(rest))) steps.push({ all: true });
    else if ((m = /^\['([^']*)'\]/.exec(rest)) || (m = /^\["([^"]*)"\]/.exec(rest))) steps.push({ field: m[1]! });
    else if ((m = /^\[\?\(@((?:\.[A-Za-z0-9_$-]+)+)\s*==\s*("[^"]*"|'[^']*'|-?\d+(?:\.\d+)?|true|false)\)\]/.exec(rest))) {
      const literal = m[2]!;
      const equals = /^["']/.test(literal) ? literal.slice(1, -1) : literal === 'true' ? true : literal === 'false' ? false : Number(literal);
      steps.push({ filter: m[1]!.slice(1).split('.'), equals });
    } else return `unexpected "${rest}"`;
    i += m[0].length;
  }
  return steps;
}

function child(v: unknown, key: string): unknown {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? ownValue(v as Record<string, unknown>, key) : undefined;
}

/** Every value `path` reaches in `obj`, in document order. */
export function findAll(obj: unknown, path: JsonPath): unknown[] {
  let current: unknown[] = [obj];
  for (const step of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if ('field' in step) {
        const c = child(v, step.field);
        if (c !== undefined) next.push(c);
      } else if ('index' in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if ('all' in step) {
        if (Array.isArray(v)) { if (!step.objectsOnly) next.push(...v); } else if (typeof v === 'object' && v !== null) next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        next.push(...v.filter((item) => step.filter.reduce<unknown>((o, k) => child(o, k), item) === step.equals));
      }
    }
    current = next;
  }
  return current;
}

/** The first value `path` reaches, or undefined. */
export function findFirst(obj: unknown, path: JsonPath): unknown {
  return findAll(obj, path)[0];
}
