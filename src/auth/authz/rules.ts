// RBAC policy rules: whether a rule allows a request, whether the rules a
// user holds cover the rules they grant (escalation), and upstream's compact
// form of a rule in messages.

import { productGroupForUpstream } from '../../machinery/vocabulary.js';
import type { Attributes } from '../../machinery/authorization.js';

export const all = '*';

/** A rule as stored: every list present (empty when absent). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

/** A rule ready for matching: groups named the upstream way also match ours. */
export interface CompiledRule extends PolicyRule {
  /** apiGroups plus our name for each upstream-named one. */
  matchGroups: string[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A rule of a stored object, with its lists read defensively. */
export function policyRuleOf(raw: unknown): PolicyRule {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    verbs: strings(r.verbs), apiGroups: strings(r.apiGroups), resources: strings(r.resources),
    resourceNames: strings(r.resourceNames), nonResourceURLs: strings(r.nonResourceURLs),
  };
}

/** Manifests written for upstream name groups `x.k8s.io`; a rule naming one applies to our `x` group as well. */
export function withProductGroups(groups: readonly string[]): string[] {
  const out = [...groups];
  for (const g of groups) {
    const ours = productGroupForUpstream(g);
    if (ours !== undefined && !out.includes(ours)) out.push(ours);
  }
  return out;
}

export function compileRule(rule: PolicyRule): CompiledRule {
  return { ...rule, matchGroups: withProductGroups(rule.apiGroups) };
}

export function compileRules(raw: unknown): CompiledRule[] {
  return Array.isArray(raw) ? raw.map((r) => compileRule(policyRuleOf(r))) : [];
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.includes(all) || rule.verbs.includes(verb);
}

/** `*`, the exact resource[/subresource], or `*\/subresource` for a sub-resource. */
function resourceMatches(rule: PolicyRule, combined: string, subresource: string | undefined): boolean {
  for (const r of rule.resources) {
    if (r === all || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

/** A URL rule matches `*`, the exact path, or a prefix when it ends in `*`. */
export function nonResourceURLMatches(ruleURL: string, path: string): boolean {
  if (ruleURL === all || ruleURL === path) return true;
  return ruleURL.endsWith('*') && path.startsWith(ruleURL.replace(/\*+$/, ''));
}

export function ruleAllows(rule: CompiledRule, a: Attributes): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.isResourceRequest) return rule.nonResourceURLs.some((u) => nonResourceURLMatches(u, a.path));
  if (!(rule.matchGroups.includes(all) || rule.matchGroups.includes(a.apiGroup))) return false;
  const resource = a.resource ?? '';
  const combined = a.subresource ? `${resource}/${a.subresource}` : resource;
  if (!resourceMatches(rule, combined, a.subresource)) return false;
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name ?? '');
}

// ---------------------------------------------------------------------------
// Coverage: does holding `owner` rules include everything `servant` grants?

const hasAll = (set: readonly string[], items: readonly string[]) => items.every((i) => set.includes(i));

/** One verb on one group, resource and name, or one verb on one URL: the units a rule grants. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups) {
    for (const resource of rule.resources) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames.length ? rule.resourceNames.map((n) => [n]) : [[]];
        for (const resourceNames of names) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames, nonResourceURLs: [] });
      }
    }
  }
  for (const url of rule.nonResourceURLs) {
    for (const verb of rule.verbs) out.push({ verbs: [verb], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [url] });
  }
  return out;
}

function resourcesCover(owned: readonly string[], wanted: readonly string[]): boolean {
  if (owned.includes(all) || hasAll(owned, wanted)) return true;
  return wanted.every((path) => {
    if (owned.includes(path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && owned.includes(`*/${path.slice(slash + 1)}`);
  });
}

function urlCovers(owned: string, wanted: string): boolean {
  return owned === wanted || (owned.endsWith('*') && wanted.startsWith(owned.replace(/\*+$/, '')));
}

function ruleCovers(owner: CompiledRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes(all) || hasAll(owner.verbs, sub.verbs);
  // A unit naming an upstream group is held by a rule naming it either way.
  const groups = owner.matchGroups.includes(all)
    || sub.apiGroups.every((g) => owner.matchGroups.includes(g) || owner.matchGroups.includes(productGroupForUpstream(g) ?? g));
  const resources = resourcesCover(owner.resources, sub.resources);
  const urls = sub.nonResourceURLs.every((u) => owner.nonResourceURLs.some((o) => urlCovers(o, u)));
  const names = sub.resourceNames.length === 0 ? owner.resourceNames.length === 0
    : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && urls && names;
}

/** The units of `servant` rules no `owner` rule covers; empty when the owner holds them all. */
export function uncovered(owner: readonly CompiledRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const sub of breakdownRule(rule)) {
      if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
    }
  }
  return missing;
}

/** Joins units that differ only by verb (one group, one resource, at most one name), as upstream's CompactRules. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const simple = new Map<string, PolicyRule>();
  const out: PolicyRule[] = [];
  for (const r of rules) {
    const isSimple = r.apiGroups.length === 1 && r.resources.length === 1 && r.resourceNames.length <= 1 && r.nonResourceURLs.length === 0 && r.verbs.length > 0;
    if (!isSimple) { out.push(r); continue; }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames]);
    const seen = simple.get(key);
    if (seen) { for (const v of r.verbs) if (!seen.verbs.includes(v)) seen.verbs.push(v); }
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a string slice: `["a" "b"]`. */
export const quoted = (items: readonly string[]) => `[${items.map((i) => JSON.stringify(i)).join(' ')}]`;

/** Upstream's CompactString: `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups.length) parts.push(`APIGroups:${quoted(r.apiGroups)}`);
  if (r.resources.length) parts.push(`Resources:${quoted(r.resources)}`);
  if (r.nonResourceURLs.length) parts.push(`NonResourceURLs:${quoted(r.nonResourceURLs)}`);
  if (r.resourceNames.length) parts.push(`ResourceNames:${quoted(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${quoted(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
