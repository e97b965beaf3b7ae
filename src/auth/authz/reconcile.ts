// Reconciling a default role or binding with what exists, as upstream's
// reconciler does it for the bootstrap policy: missing rules, aggregation
// selectors, subjects, labels and annotations are added; nothing a user
// added is removed; an object annotated autoupdate "false" is left alone; a
// binding whose roleRef differs is made again.

import { deepEqual } from '../../machinery/equal.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import { compileRules, policyRuleOf, uncovered, type PolicyRule } from './rules.js';

type Obj = Record<string, any>;

export interface Reconciled {
  operation: 'none' | 'create' | 'update' | 'recreate';
  /** The object to write (the expected one for create and recreate). */
  object: Obj;
}

/** Annotated autoupdate "false": the user owns it now. */
export function isProtected(existing: Obj): boolean {
  return existing.metadata?.annotations?.[vocabulary.rbacAutoupdateAnnotation] === 'false';
}

/** Labels or annotations: the existing values win, missing expected ones are added. */
function merged(expected: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> {
  return { ...(expected ?? {}), ...(existing ?? {}) };
}

/** Writes a rule without the empty lists a stored rule would not carry. */
function ruleObject(r: PolicyRule): Obj {
  const out: Obj = { verbs: r.verbs };
  if (r.apiGroups.length) out.apiGroups = r.apiGroups;
  if (r.resources.length) out.resources = r.resources;
  if (r.resourceNames.length) out.resourceNames = r.resourceNames;
  if (r.nonResourceURLs.length) out.nonResourceURLs = r.nonResourceURLs;
  return out;
}

/** Starts from a copy of `existing` with the expected labels and annotations merged in. */
function withMergedMetadata(existing: Obj, expected: Obj): { object: Obj; changed: boolean } {
  const object = structuredClone(existing);
  object.metadata ??= {};
  object.metadata.labels = merged(expected.metadata?.labels, existing.metadata?.labels);
  object.metadata.annotations = merged(expected.metadata?.annotations, existing.metadata?.annotations);
  const changed = !deepEqual(object.metadata.labels, existing.metadata?.labels ?? {}) || !deepEqual(object.metadata.annotations, existing.metadata?.annotations ?? {});
  return { object, changed };
}

export function reconcileRole(existing: Obj | undefined, expected: Obj): Reconciled {
  if (!existing) return { operation: 'create', object: expected };
  if (isProtected(existing)) return { operation: 'none', object: existing };
  const { object, changed } = withMergedMetadata(existing, expected);
  let update = changed;
  const missing = uncovered(compileRules(existing.rules), ((expected.rules ?? []) as unknown[]).map(policyRuleOf));
  if (missing.length) {
    object.rules = [...(existing.rules ?? []), ...missing.map(ruleObject)];
    update = true;
  }
  const expectedSelectors: unknown[] = expected.aggregationRule?.clusterRoleSelectors ?? [];
  const existingSelectors: unknown[] = existing.aggregationRule?.clusterRoleSelectors ?? [];
  if (!expected.aggregationRule && existing.aggregationRule) {
    // Not an aggregated role by default: the aggregation goes.
    delete object.aggregationRule;
    update = true;
  } else {
    const missingSelectors = expectedSelectors.filter((s) => !existingSelectors.some((e) => deepEqual(e, s)));
    if (missingSelectors.length) {
      object.aggregationRule = { ...(existing.aggregationRule ?? {}), clusterRoleSelectors: [...existingSelectors, ...missingSelectors] };
      update = true;
    }
  }
  return { operation: update ? 'update' : 'none', object };
}

const subjectKey = (s: Obj) => JSON.stringify([s.kind ?? '', s.apiGroup ?? '', s.name ?? '', s.namespace ?? '']);

export function reconcileBinding(existing: Obj | undefined, expected: Obj): Reconciled {
  if (!existing) return { operation: 'create', object: expected };
  if (isProtected(existing)) return { operation: 'none', object: existing };
  const a = existing.roleRef ?? {};
  const b = expected.roleRef ?? {};
  if (a.apiGroup !== b.apiGroup || a.kind !== b.kind || a.name !== b.name) return { operation: 'recreate', object: expected };
  const { object, changed } = withMergedMetadata(existing, expected);
  let update = changed;
  const have = new Set(((existing.subjects ?? []) as Obj[]).map(subjectKey));
  const missing = ((expected.subjects ?? []) as Obj[]).filter((s) => !have.has(subjectKey(s)));
  if (missing.length) {
    object.subjects = [...(existing.subjects ?? []), ...missing];
    update = true;
  }
  return { operation: update ? 'update' : 'none', object };
}
