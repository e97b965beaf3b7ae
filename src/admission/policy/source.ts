// The policies and bindings, kept compiled in memory: fed by informer-fed
// listers (no storage read per request), recompiled on the first request
// after either changes. A policy's expressions are compiled once with the
// variables each kind of expression sees (policyvalidation.ts); one that does
// not compile (stored by an older server) is an error when evaluated, which
// the policy's failurePolicy decides.

import type { KubeObject } from '../../api/kind.js';
import { compileExpression, type Compiled } from '../../api/validation/index.js';
import { policyVariables } from '../../api/admissionregistration/v1/policyvalidation.js';
import { labelSelectorOf, type LabelSelector } from '../../machinery/selectors.js';
import { discoveredUpstreamGroup, productGroupForUpstream } from '../../machinery/vocabulary.js';
import type { Lister } from '../listers.js';
import type { WebhookRule } from '../webhook/source.js';

/** A program, or why its expression does not compile. */
export type Program = Compiled | string;

export interface NamedRule extends WebhookRule {
  resourceNames: string[];
}

export interface CompiledMatch {
  rules: NamedRule[];
  excludeRules: NamedRule[];
  namespaceSelector: LabelSelector | Error;
  objectSelector: LabelSelector | Error;
  matchPolicy: string;
}

export interface CompiledValidation {
  expression: string;
  program: Program;
  message: string;
  messageExpression?: Program;
  reason: string;
}

export interface CompiledPolicy {
  name: string;
  paramKind?: { apiVersion: string; kind: string };
  match: CompiledMatch;
  failurePolicy: string;
  matchConditions: { name: string; expression: string; program: Program }[];
  variables: { name: string; expression: string; program: Program }[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; expression: string; program: Program }[];
}

export interface CompiledBinding {
  name: string;
  policyName: string;
  paramRef?: { name?: string; namespace?: string; selector?: LabelSelector | Error; parameterNotFoundAction: string };
  /** Narrows the policy's requests; absent: every request the policy matches. */
  match?: CompiledMatch;
  actions: string[];
}

/** A policy with its bindings, in name order. */
export interface BoundPolicy {
  policy: CompiledPolicy;
  bindings: CompiledBinding[];
}

type Json = Record<string, any>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const listOf = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const byName = (a: KubeObject, b: KubeObject) => {
  const x = String(a.metadata?.name ?? '');
  const y = String(b.metadata?.name ?? '');
  return x < y ? -1 : x > y ? 1 : 0;
};

function selector(raw: unknown): LabelSelector | Error {
  try {
    return labelSelectorOf(raw as Parameters<typeof labelSelectorOf>[0]);
  } catch (e) {
    return e as Error;
  }
}

/** A rule's groups with ours beside the upstream names of our groups (`apiextensions.k8s.io` also names our apiextensions group), as RBAC reads them. */
function withOurGroups(groups: string[]): string[] {
  const ours = groups.map(productGroupForUpstream).filter((g): g is string => g !== undefined && discoveredUpstreamGroup(g) !== undefined);
  return ours.length ? [...groups, ...ours] : groups;
}

function rule(r: Json): NamedRule {
  return {
    operations: strings(r.operations), apiGroups: withOurGroups(strings(r.apiGroups)), apiVersions: strings(r.apiVersions),
    resources: strings(r.resources), scope: typeof r.scope === 'string' ? r.scope : '*', resourceNames: strings(r.resourceNames),
  };
}

function compileMatch(mc: Json): CompiledMatch {
  return {
    rules: listOf(mc.resourceRules).map(rule),
    excludeRules: listOf(mc.excludeResourceRules).map(rule),
    namespaceSelector: selector(mc.namespaceSelector),
    objectSelector: selector(mc.objectSelector),
    matchPolicy: typeof mc.matchPolicy === 'string' ? mc.matchPolicy : 'Equivalent',
  };
}

function compile(expression: string, variables: readonly string[]): Program {
  return compileExpression(expression.trim(), variables);
}

export function compilePolicy(obj: KubeObject): CompiledPolicy {
  const spec: Json = isObject(obj.spec) ? obj.spec : {};
  const params = isObject(spec.paramKind);
  const hasVariables = listOf(spec.variables).length > 0;
  const full = policyVariables({ params, authorizer: true, variables: hasVariables });
  const forMessages = policyVariables({ params, authorizer: false, variables: hasVariables });
  const forConditions = policyVariables({ params, authorizer: true, variables: false });
  return {
    name: String(obj.metadata?.name ?? ''),
    paramKind: params ? { apiVersion: text(spec.paramKind.apiVersion), kind: text(spec.paramKind.kind) } : undefined,
    match: compileMatch(isObject(spec.matchConstraints) ? spec.matchConstraints : {}),
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: listOf(spec.matchConditions).map((c) => ({ name: text(c.name), expression: text(c.expression).trim(), program: compile(text(c.expression), forConditions) })),
    variables: listOf(spec.variables).map((v) => ({ name: text(v.name), expression: text(v.expression), program: compile(text(v.expression), full) })),
    validations: listOf(spec.validations).map((v) => ({
      expression: text(v.expression),
      program: compile(text(v.expression), full),
      message: text(v.message),
      messageExpression: text(v.messageExpression).trim() ? compile(text(v.messageExpression), forMessages) : undefined,
      reason: text(v.reason),
    })),
    auditAnnotations: listOf(spec.auditAnnotations).map((a) => ({ key: text(a.key), expression: text(a.valueExpression), program: compile(text(a.valueExpression), full) })),
  };
}

function compileBinding(obj: KubeObject): CompiledBinding {
  const spec: Json = isObject(obj.spec) ? obj.spec : {};
  const ref = isObject(spec.paramRef) ? spec.paramRef : undefined;
  return {
    name: String(obj.metadata?.name ?? ''),
    policyName: text(spec.policyName),
    paramRef: ref && {
      name: text(ref.name) || undefined,
      namespace: text(ref.namespace) || undefined,
      selector: ref.selector != null ? selector(ref.selector) : undefined,
      parameterNotFoundAction: ref.parameterNotFoundAction === 'Allow' ? 'Allow' : 'Deny',
    },
    match: isObject(spec.matchResources) ? compileMatch(spec.matchResources) : undefined,
    actions: strings(spec.validationActions),
  };
}

export class PolicySource {
  private compiled?: readonly BoundPolicy[];
  /** The bound policies whose rules can name a resource, by resource: most requests meet few or none. */
  private byResource = new Map<string, readonly BoundPolicy[]>();

  /** Whether some policy has a binding (then compiling needs CEL), worked out once per change. */
  private bindsAny?: boolean;

  constructor(private readonly policies: Lister, private readonly bindings: Lister) {
    const changed = () => {
      this.compiled = undefined;
      this.byResource = new Map();
      this.bindsAny = undefined;
    };
    policies.onChange(changed);
    bindings.onChange(changed);
  }

  /** Whether there may be a bound policy: the policies compile with CEL, to be loaded before `candidates` (see validation/engines.ts). */
  get anyBound(): boolean {
    this.bindsAny ??= this.policies.list().length > 0 && this.bindings.list().length > 0;
    return this.bindsAny;
  }

  /** Every policy with at least one binding, in name order. */
  bound(): readonly BoundPolicy[] {
    this.compiled ??= this.compileAll();
    return this.compiled;
  }

  /** The bound policies with a rule for `resource` (by name or `*`); the others cannot match it at any version. */
  candidates(resource: string): readonly BoundPolicy[] {
    let found = this.byResource.get(resource);
    if (!found) {
      found = this.bound().filter(({ policy }) => policy.match.rules.some((r) => r.resources.some((entry) => {
        const res = entry.split('/', 1)[0];
        return res === '*' || res === resource;
      })));
      this.byResource.set(resource, found);
    }
    return found;
  }

  private compileAll(): BoundPolicy[] {
    const bindingsOf = new Map<string, CompiledBinding[]>();
    for (const obj of [...this.bindings.list()].sort(byName)) {
      const binding = compileBinding(obj);
      let list = bindingsOf.get(binding.policyName);
      if (!list) bindingsOf.set(binding.policyName, list = []);
      list.push(binding);
    }
    const out: BoundPolicy[] = [];
    for (const obj of [...this.policies.list()].sort(byName)) {
      const bindings = bindingsOf.get(String(obj.metadata?.name ?? ''));
      if (bindings) out.push({ policy: compilePolicy(obj), bindings });
    }
    return out;
  }
}
