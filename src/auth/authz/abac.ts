// The ABAC authorizer: a policy file of one JSON Policy object per line
// (apiVersion abac.authorization.<domain>/v1beta1, or the unversioned v0
// form), read once at start; a request is allowed when any policy matches
// its user or groups, its resource (or path) and, for readonly policies,
// only reading. As upstream, `*` as user or group means every authenticated
// user: anonymous requests need a policy naming them.

import { isReadOnlyVerb, noOpinion, type Attributes, type Decision, type RuleSet } from '../../machinery/authorization.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { systemGroups, type UserInfo } from '../../machinery/user.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { Authorizer } from './authorizer.js';
import { nonResourceURLMatches } from './rules.js';

export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

export const abacApiVersion = `${vocabulary.abacGroup}/v1beta1`;

/** A policy file that cannot be read: the line and why, as upstream's message. */
export class PolicyFileError extends Error {
  override name = 'PolicyFileError';
}

const stringFields = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const v0Fields = ['user', 'group', 'resource', 'namespace'] as const;

function fieldsOf(source: Record<string, unknown>, names: readonly string[], where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = source[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new Error(`${where}${name} must be a string`);
    out[name] = v;
  }
  return out;
}

function readonlyOf(source: Record<string, unknown>, where: string): boolean {
  const v = source.readonly;
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new Error(`${where}readonly must be a boolean`);
  return v;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line as a policy (unversioned lines converted as upstream converts v0). */
function policyOf(line: unknown): AbacPolicy {
  if (!isObject(line)) throw new Error('a policy must be a JSON object');
  if (line.apiVersion === undefined && line.kind === undefined) {
    // v0: no user and no group means every authenticated user; no namespace or resource means all, paths included.
    const f = fieldsOf(line, v0Fields, '');
    const p: AbacPolicy = {
      user: f.user ?? '', group: f.group ?? '', readonly: readonlyOf(line, ''), apiGroup: '*',
      resource: f.resource || '*', namespace: f.namespace || '*', nonResourcePath: !f.namespace && !f.resource ? '*' : '',
    };
    if (!p.user && !p.group) p.group = systemGroups.authenticated;
    return widenWildcard(p);
  }
  if (line.apiVersion !== abacApiVersion || line.kind !== 'Policy') {
    throw new Error(`unrecognized object: apiVersion ${JSON.stringify(line.apiVersion)}, kind ${JSON.stringify(line.kind)} (expected apiVersion ${abacApiVersion}, kind Policy)`);
  }
  const spec = line.spec === undefined || line.spec === null ? {} : line.spec;
  if (!isObject(spec)) throw new Error('spec must be a JSON object');
  const f = fieldsOf(spec, stringFields, 'spec.');
  return widenWildcard({
    user: f.user ?? '', group: f.group ?? '', readonly: readonlyOf(spec, 'spec.'), apiGroup: f.apiGroup ?? '',
    resource: f.resource ?? '', namespace: f.namespace ?? '', nonResourcePath: f.nonResourcePath ?? '',
  });
}

/** `*` as user or group means every authenticated subject, never anonymous ones (upstream's conversion). */
function widenWildcard(p: AbacPolicy): AbacPolicy {
  return p.user === '*' || p.group === '*' ? { ...p, user: '', group: systemGroups.authenticated } : p;
}

/** Reads a policy file's text; throws PolicyFileError naming the first bad line. Blank lines and # comments are skipped. */
export function parsePolicyFile(path: string, text: string): AbacPolicy[] {
  const policies: AbacPolicy[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    try {
      if (jsonTextExceedsDepth(trimmed)) throw new Error('nested too deeply');
      policies.push(policyOf(JSON.parse(trimmed)));
    } catch (e) {
      throw new PolicyFileError(`error reading policy file ${path}, line ${i + 1}: ${line}: ${(e as Error).message}`);
    }
  });
  return policies;
}

function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user !== '*' && p.user !== user.username) return false;
    matched = true;
  }
  if (p.group) {
    if (p.group !== '*' && !user.groups.includes(p.group)) return false;
    matched = true;
  }
  return matched;
}

function matches(p: AbacPolicy, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !isReadOnlyVerb(a.verb)) return false;
  if (a.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === (a.namespace ?? ''))
      && (p.resource === '*' || p.resource === (a.resource ?? ''))
      && (p.apiGroup === '*' || p.apiGroup === a.apiGroup);
  }
  return p.nonResourcePath !== '' && nonResourceURLMatches(p.nonResourcePath, a.path);
}

export class AbacAuthorizer implements Authorizer {
  readonly name = 'ABAC';
  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(attrs: Attributes): Decision {
    return this.policies.some((p) => matches(p, attrs)) ? { decision: 'allow', reason: '' } : noOpinion('No policy matched.');
  }

  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const set: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
    for (const p of this.policies) {
      if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource) set.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource], resourceNames: [] });
      if (p.nonResourcePath) set.nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return set;
  }
}
