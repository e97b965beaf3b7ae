// The authorizer interface and their union: asked in order, the first that
// allows or denies decides; when all have no opinion the request is denied.
// The built-in modes that need nothing (AlwaysAllow, AlwaysDeny) and the
// privileged group (system:masters, always allowed as upstream) live here too.

import { emptyRuleSet, noOpinion, type Attributes, type Decision, type RuleSet } from '../../machinery/authorization.js';
import type { UserInfo } from '../../machinery/user.js';
import { systemGroups } from '../../machinery/user.js';

export type { Attributes, Decision, RuleSet } from '../../machinery/authorization.js';

export interface Authorizer {
  readonly name: string;
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  /**
   * The rules `user` holds in `namespace`, for SelfSubjectRulesReview. A
   * module without it lists nothing (the privileged group, as upstream).
   */
  rulesFor?(user: UserInfo, namespace: string): Promise<RuleSet> | RuleSet;
}

export class UnionAuthorizer implements Authorizer {
  readonly name = 'union';
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attrs: Attributes): Promise<Decision> {
    const reasons: string[] = [];
    const evaluationErrors: string[] = [];
    for (const a of this.authorizers) {
      const d = await a.authorize(attrs);
      if (d.decision !== 'no-opinion') return d;
      if (d.reason) reasons.push(d.reason);
      if (d.evaluationError) evaluationErrors.push(d.evaluationError);
    }
    return noOpinion(reasons.join('\n'), evaluationErrors.length ? evaluationErrors.join('; ') : undefined);
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RuleSet> {
    const all = emptyRuleSet();
    for (const a of this.authorizers) {
      if (!a.rulesFor) continue;
      const r = await a.rulesFor(user, namespace);
      all.resourceRules.push(...r.resourceRules);
      all.nonResourceRules.push(...r.nonResourceRules);
      all.incomplete ||= r.incomplete;
      all.errors.push(...r.errors);
    }
    return all;
  }
}

/** The AlwaysAllow mode: every authenticated request may do everything. */
export class AlwaysAllowAuthorizer implements Authorizer {
  readonly name = 'AlwaysAllow';
  authorize(): Decision {
    return { decision: 'allow', reason: '' };
  }

  rulesFor(): RuleSet {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false, errors: [],
    };
  }
}

/**
 * The AlwaysDeny mode: grants nothing. As upstream it answers no opinion (with
 * its reason), so a module after it may still allow; alone it refuses all.
 */
export class AlwaysDenyAuthorizer implements Authorizer {
  readonly name = 'AlwaysDeny';
  authorize(): Decision {
    return noOpinion('Everything is forbidden.');
  }

  rulesFor(): RuleSet {
    return emptyRuleSet();
  }
}

/** Members of these groups may do everything, whatever the modes say (system:masters, as upstream). */
export class PrivilegedGroupsAuthorizer implements Authorizer {
  readonly name = 'privileged-groups';
  private readonly groups: ReadonlySet<string>;
  constructor(groups: readonly string[] = [systemGroups.masters]) {
    this.groups = new Set(groups);
  }

  authorize(attrs: Attributes): Decision {
    return attrs.user.groups.some((g) => this.groups.has(g)) ? { decision: 'allow', reason: '' } : noOpinion();
  }
}
