// The RBAC authorizer: allows a request when a rule of a role bound to the
// user (directly, through a group, or as a service account) allows it; never
// denies, as upstream. It reads only the in-memory index.

import type { Attributes, Decision, RuleSet } from '../../machinery/authorization.js';
import { noOpinion } from '../../machinery/authorization.js';
import type { UserInfo } from '../../machinery/user.js';
import type { Authorizer } from './authorizer.js';
import type { Applicable, RbacIndex, SubjectRef } from './rbacindex.js';
import { ruleAllows, type CompiledRule } from './rules.js';

/** Upstream's wording of a subject: service accounts as `name/namespace`. */
function describeSubject(s: SubjectRef, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** `RoleBinding "name/namespace" of Role "r" to User "u"`, as upstream names what allowed a request. */
function describe({ binding, subject }: Applicable): string {
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  return `${binding.kind} ${JSON.stringify(name)} of ${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)} to ${describeSubject(subject, binding.namespace)}`;
}

/** Upstream joins several errors as `[a, b]`. */
function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

export interface HeldRules {
  rules: CompiledRule[];
  /** Roles that could not be found; the rules may miss theirs. */
  errors: string[];
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  constructor(private readonly index: RbacIndex) {}

  authorize(attrs: Attributes): Decision {
    const errors: string[] = [];
    for (const applicable of this.index.applicable(attrs.user, attrs.namespace)) {
      const found = this.index.rulesOf(applicable.binding.roleRef, applicable.binding.namespace);
      if ('error' in found) { errors.push(found.error); continue; }
      for (const rule of found.rules) {
        if (ruleAllows(rule, attrs)) return { decision: 'allow', reason: `RBAC: allowed by ${describe(applicable)}` };
      }
    }
    return noOpinion(errors.length ? `RBAC: ${aggregate(errors)}` : '');
  }

  /** Every rule `user` holds in `namespace` ('' for the cluster scope), from ClusterRoleBindings and that namespace's RoleBindings. */
  heldRules(user: UserInfo, namespace: string): HeldRules {
    const held: HeldRules = { rules: [], errors: [] };
    for (const { binding } of this.index.applicable(user, namespace || undefined)) {
      const found = this.index.rulesOf(binding.roleRef, binding.namespace);
      if ('error' in found) held.errors.push(found.error);
      else held.rules.push(...found.rules);
    }
    return held;
  }

  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const held = this.heldRules(user, namespace);
    const set: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: held.errors.length ? [aggregate(held.errors)] : [] };
    for (const r of held.rules) {
      if (r.resources.length) set.resourceRules.push({ verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources, resourceNames: r.resourceNames });
      if (r.nonResourceURLs.length) set.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
    return set;
  }
}
