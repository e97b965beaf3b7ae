// --audit-policy-file: a Policy of the audit group (v1, YAML or JSON), decoded
// strictly (unknown or repeated fields, wrong types and invalid values stop
// the start, naming the file and the line), and the rule that decides each
// request's level, as upstream's policy checker: the first matching rule wins,
// no match means None.

import { readFile } from 'node:fs/promises';
import YAML, { LineCounter, type Document } from 'yaml';
import { productApiVersionForUpstream, vocabulary } from '../../machinery/vocabulary.js';
import { hasOwn, ownValue } from '../../machinery/ownkeys.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import type { UserInfo } from '../../machinery/user.js';

export const auditLevels = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof auditLevels)[number];
export const auditStages = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof auditStages)[number];

/** Whether `level` records at least as much as `least`. */
export function levelAtLeast(level: AuditLevel, least: AuditLevel): boolean {
  return auditLevels.indexOf(level) >= auditLevels.indexOf(least);
}

export const auditApiVersion = `${vocabulary.auditGroup}/v1`;

/** The file could not be read, parsed or validated: the start stops with this message. */
export class AuditConfigError extends Error {
  override name = 'AuditConfigError';
}

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: AuditStage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: AuditStage[];
  omitManagedFields: boolean;
}

/** What the policy says about one request. */
export interface RequestAuditConfig {
  level: AuditLevel;
  omitStages: readonly AuditStage[];
  omitManagedFields: boolean;
}

/** The request as the policy sees it (its RequestInfo satisfies this). */
export interface PolicyRequest {
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

const none: RequestAuditConfig = { level: 'None', omitStages: [], omitManagedFields: false };

export class PolicyChecker {
  /** Each rule's answer, made once: requests share them (read-only). */
  private readonly configs: readonly RequestAuditConfig[];

  constructor(readonly policy: Policy) {
    this.configs = policy.rules.map((rule) => Object.freeze({
      level: rule.level,
      omitStages: Object.freeze(rule.omitStages.length ? [...new Set([...policy.omitStages, ...rule.omitStages])] : [...policy.omitStages]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    }));
  }

  /** The level for a request from `user` (the authenticated one, before impersonation, as upstream). */
  levelFor(user: UserInfo, request: PolicyRequest): RequestAuditConfig {
    const rules = this.policy.rules;
    for (let i = 0; i < rules.length; i++) if (ruleMatches(rules[i]!, user, request)) return this.configs[i]!;
    return none;
  }
}

function ruleMatches(r: PolicyRule, user: UserInfo, a: PolicyRequest): boolean {
  if (r.users.length && !r.users.includes(user.username)) return false;
  if (r.userGroups.length && !user.groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length && !r.verbs.includes(a.verb)) return false;
  if (r.nonResourceURLs.length || r.resources.length || r.namespaces.length) {
    return a.isResourceRequest ? matchesResource(r, a) : r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  }
  return true;
}

function matchesResource(r: PolicyRule, a: PolicyRequest): boolean {
  if (r.nonResourceURLs.length) return false;
  if (r.namespaces.length && !r.namespaces.includes(a.namespace ?? '')) return false;
  if (r.resources.length === 0) return true;
  const resource = a.resource ?? '';
  const combined = a.subresource ? `${resource}/${a.subresource}` : resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length && !gr.resourceNames.includes(a.name ?? '')) continue;
    for (const res of gr.resources) {
      if (res === '*' || res === combined) return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.slice(0, -1));
}

// ---- decoding ---------------------------------------------------------------

type Path = (string | number)[];

/** Reads values out of the parsed document, naming the file and line of anything wrong. */
class Reader {
  constructor(private readonly file: string, private readonly doc: Document, private readonly lines: LineCounter) {}

  fail(path: Path, message: string): never {
    const node = path.length ? this.doc.getIn(path, true) as { range?: [number, number, number] } | undefined : this.doc.contents as { range?: [number, number, number] } | null;
    const at = node?.range ? `, line ${this.lines.linePos(node.range[0]).line}` : '';
    const field = path.length ? ` ${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '')}:` : '';
    throw new AuditConfigError(`audit policy file "${this.file}"${at}:${field} ${message}`);
  }

  object(value: unknown, path: Path, fields: readonly string[]): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(path, 'must be an object');
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) if (!fields.includes(key)) this.fail([...path, key], `unknown field "${key}"`);
    return obj;
  }

  strings(obj: Record<string, unknown>, key: string, path: Path): string[] {
    const value = ownValue(obj, key);
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) this.fail([...path, key], 'must be a list of strings');
    return value as string[];
  }

  bool(obj: Record<string, unknown>, key: string, path: Path): boolean | undefined {
    const value = ownValue(obj, key);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') this.fail([...path, key], 'must be true or false');
    return value;
  }

  stages(obj: Record<string, unknown>, key: string, path: Path): AuditStage[] {
    const values = this.strings(obj, key, path);
    values.forEach((v, i) => {
      if (!(auditStages as readonly string[]).includes(v)) this.fail([...path, key, i], `unsupported value "${v}" (supported: ${auditStages.join(', ')})`);
    });
    return values as AuditStage[];
  }
}

const policyFields = ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'];
const ruleFields = ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'];
const groupResourceFields = ['group', 'resources', 'resourceNames'];

/** Parses and validates policy text; `file` names it in errors. */
export function parsePolicy(text: string, file: string): Policy {
  if (jsonTextExceedsDepth(text)) throw new AuditConfigError(`audit policy file "${file}": nested too deeply`);
  const lines = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new AuditConfigError(`audit policy file "${file}", line ${e.linePos?.[0].line ?? 1}: not valid YAML or JSON: ${e.message.split('\n')[0]}`);
  }
  const r = new Reader(file, doc, lines);
  const top = r.object(doc.toJS({ maxAliasCount: 100 }), [], policyFields);
  // An upstream policy file (audit.k8s.io/v1) is accepted as ours, as upstream group names are elsewhere.
  const apiVersion = ownValue(top, 'apiVersion');
  const known = apiVersion === auditApiVersion || (typeof apiVersion === 'string' && productApiVersionForUpstream(apiVersion) === auditApiVersion);
  if (!known || ownValue(top, 'kind') !== 'Policy') {
    r.fail([], `must be a Policy of apiVersion ${auditApiVersion}, not ${String(ownValue(top, 'kind') ?? 'an object without kind')} (apiVersion ${String(ownValue(top, 'apiVersion') ?? 'unset')})`);
  }
  const rawRules = ownValue(top, 'rules') ?? [];
  if (!Array.isArray(rawRules)) r.fail(['rules'], 'must be a list');
  const rules = (rawRules as unknown[]).map((raw, i) => parseRule(r, raw, ['rules', i]));
  return { rules, omitStages: r.stages(top, 'omitStages', []), omitManagedFields: r.bool(top, 'omitManagedFields', []) ?? false };
}

function parseRule(r: Reader, raw: unknown, path: Path): PolicyRule {
  const obj = r.object(raw, path, ruleFields);
  const level = ownValue(obj, 'level');
  if (!hasOwn(obj, 'level') || level === '' || level === null) r.fail(path, 'level is required');
  if (typeof level !== 'string' || !(auditLevels as readonly string[]).includes(level)) {
    r.fail([...path, 'level'], `unsupported value ${JSON.stringify(level)} (supported: ${auditLevels.join(', ')})`);
  }
  const rawResources = ownValue(obj, 'resources') ?? [];
  if (!Array.isArray(rawResources)) r.fail([...path, 'resources'], 'must be a list');
  const resources = (rawResources as unknown[]).map((g, i) => {
    const at = [...path, 'resources', i];
    const gr = r.object(g, at, groupResourceFields);
    const group = ownValue(gr, 'group') ?? '';
    if (typeof group !== 'string') r.fail([...at, 'group'], 'must be a string');
    const names = r.strings(gr, 'resourceNames', at);
    const list = r.strings(gr, 'resources', at);
    list.forEach((res, j) => {
      if (names.length && (res === '*' || res.startsWith('*/'))) r.fail([...at, 'resources', j], 'using resourceNames with a wildcard resource is not allowed');
      if (res.includes('/') && !/^[^/]+\/[^/]+$/.test(res)) r.fail([...at, 'resources', j], `"${res}" is not a resource or resource/subresource`);
    });
    return { group, resources: list, resourceNames: names };
  });
  const nonResourceURLs = r.strings(obj, 'nonResourceURLs', path);
  const namespaces = r.strings(obj, 'namespaces', path);
  if (nonResourceURLs.length && (resources.length || namespaces.length)) {
    r.fail([...path, 'nonResourceURLs'], 'rules cannot apply to both regular resources and non-resource URLs');
  }
  nonResourceURLs.forEach((url, i) => {
    if (url !== '*' && !url.startsWith('/')) r.fail([...path, 'nonResourceURLs', i], `"${url}" must begin with /`);
    if (url.slice(0, -1).includes('*')) r.fail([...path, 'nonResourceURLs', i], `"${url}": * is allowed only at the end`);
  });
  return {
    level: level as AuditLevel,
    users: r.strings(obj, 'users', path),
    userGroups: r.strings(obj, 'userGroups', path),
    verbs: r.strings(obj, 'verbs', path),
    resources, namespaces, nonResourceURLs,
    omitStages: r.stages(obj, 'omitStages', path),
    omitManagedFields: r.bool(obj, 'omitManagedFields', path),
  };
}

export async function readPolicyFile(file: string): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AuditConfigError(`unable to read audit policy file "${file}": ${(e as Error).message}`);
  }
  return parsePolicy(text, file);
}
