// CEL (the interpreter, @bufbuild/cel and the protobuf runtime under it) and
// RE2 are a third of the modules the server would load and a fifth of its
// idle memory, and most servers never run a rule or a pattern: they load on
// first need. Code on an async road that is about to need one awaits its
// `load…()` (a write of a kind whose rules compile expressions or patterns,
// an admission plugin with policies or match conditions); the synchronous
// code under it takes the module from `cel()` or `re2()`, which throw when
// nobody loaded it first (a bug: answered as a 500, never a wrong answer).

import type * as CelParts from './celparts.js';
import type { RE2JS } from '@bufbuild/re2';
import { markersOf, propertiesOf, type JSONSchemaProps } from './structural.js';

let celModule: typeof CelParts | undefined;
let celLoading: Promise<void> | undefined;
let re2Module: typeof RE2JS | undefined;
let re2Loading: Promise<void> | undefined;

/** Loads CEL once; undefined when it is loaded already (callers on a hot path need not await). */
export function loadCel(): Promise<void> | undefined {
  if (celModule) return undefined;
  return (celLoading ??= import('./celparts.js').then((m) => { celModule = m; }, (e) => { celLoading = undefined; throw e; }));
}

/** Loads RE2 once; undefined when it is loaded already. */
export function loadRe2(): Promise<void> | undefined {
  if (re2Module) return undefined;
  return (re2Loading ??= import('@bufbuild/re2').then((m) => { re2Module = m.RE2JS; }, (e) => { re2Loading = undefined; throw e; }));
}

/** The CEL parts, loaded by an earlier `loadCel()`. */
export function cel(): typeof CelParts {
  if (!celModule) throw new Error('CEL was needed before it was loaded');
  return celModule;
}

/** RE2, loaded by an earlier `loadRe2()`. */
export function re2(): typeof RE2JS {
  if (!re2Module) throw new Error('RE2 was needed before it was loaded');
  return re2Module;
}

/** Whether CEL is loaded (tests, and plugins that check what to load only until it is). */
export function celLoaded(): boolean {
  return celModule !== undefined;
}

/** Whether RE2 is loaded (tests). */
export function re2Loaded(): boolean {
  return re2Module !== undefined;
}

/** What a schema (with our markers) needs to compile and run: CEL for its rules, RE2 for its patterns. */
export function schemaNeeds(schema: JSONSchemaProps): { rules: boolean; patterns: boolean } {
  const found = { rules: false, patterns: false };
  const visit = (s: JSONSchemaProps | boolean | undefined): void => {
    if (typeof s !== 'object' || s === null || (found.rules && found.patterns)) return;
    if (markersOf(s).validations?.length) found.rules = true;
    if (typeof s.pattern === 'string') found.patterns = true;
    for (const [, p] of propertiesOf(s)) visit(p);
    visit(s.additionalProperties);
    visit(s.items);
    visit(s.not);
    for (const list of [s.allOf, s.anyOf, s.oneOf]) if (Array.isArray(list)) list.forEach(visit);
  };
  visit(schema);
  return found;
}

/**
 * What loads what `schemas` need, worked out once (a kind's schemas); each
 * call is undefined when that is loaded already. Undefined for schemas that
 * need nothing.
 */
export function loaderFor(schemas: JSONSchemaProps[]): (() => Promise<void> | undefined) | undefined {
  const needs = schemas.map(schemaNeeds);
  const rules = needs.some((n) => n.rules);
  const patterns = needs.some((n) => n.patterns);
  if (!rules && !patterns) return undefined;
  return () => {
    const c = rules ? loadCel() : undefined;
    const r = patterns ? loadRe2() : undefined;
    return c && r ? Promise.all([c, r]).then(() => undefined) : c ?? r;
  };
}
