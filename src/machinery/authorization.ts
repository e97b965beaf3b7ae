// What authorization is asked and what it answers: the request's attributes
// as the spec lists them, a decision, and the rules a user holds (for
// SelfSubjectRulesReview). Shared by the authorizers, the filters and the
// access-review objects, so it lives on the ground floor.

import type { UserInfo } from './user.js';

export interface Attributes {
  user: UserInfo;
  /** API verb for resource requests; the lowercase HTTP method otherwise. */
  verb: string;
  isResourceRequest: boolean;
  path: string;
  /** '' is the core group. */
  apiGroup: string;
  apiVersion: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /**
   * The raw selectors of a list, watch or deletecollection, as upstream
   * hands them to authorizers (the Node authorizer lets a node agent list
   * only its own pods by `spec.nodeName`).
   */
  fieldSelector?: string;
  labelSelector?: string;
}

export type DecisionKind = 'allow' | 'deny' | 'no-opinion';

export interface Decision {
  decision: DecisionKind;
  reason: string;
  /** Why a module could not decide (a webhook that failed, a role that is missing); the decision stands as given. */
  evaluationError?: string;
}

export const noOpinion = (reason = '', evaluationError?: string): Decision =>
  evaluationError === undefined ? { decision: 'no-opinion', reason } : { decision: 'no-opinion', reason, evaluationError };

/** A rule on resources a user holds, as a rules review lists it. */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

/** A rule on non-resource paths a user holds. */
export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs: string[];
}

/** Every rule a user holds in a namespace, as far as the modules can tell. */
export interface RuleSet {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  /** A module could not list its rules (a webhook): the list may miss some. */
  incomplete: boolean;
  errors: string[];
}

export const emptyRuleSet = (): RuleSet => ({ resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] });

/** Verbs that only read, as upstream's IsReadOnly counts them. */
export function isReadOnlyVerb(verb: string): boolean {
  return verb === 'get' || verb === 'list' || verb === 'watch';
}
