// The REST objects of authorization/v1, which store nothing: the access
// reviews, answered by the server's authorizer exactly as it would answer
// the real request, and the rules review, answered from the modules' rules.

import { errors, fieldErrors } from '../machinery/errors.js';
import { setOwn } from '../machinery/ownkeys.js';
import { productGroupForUpstream } from '../machinery/vocabulary.js';
import type { Attributes, Decision, RuleSet } from '../machinery/authorization.js';
import type { UserInfo } from '../machinery/user.js';
import type { KubeObject } from '../api/kind.js';
import { localSubjectAccessReviews, selfSubjectAccessReviews, selfSubjectRulesReviews, subjectAccessReviews } from '../api/authorization/v1/index.js';
import { reviewResource, type RestObject } from './rest.js';

/** What the reviews ask: the server's authorizer union. */
export interface AccessReviewer {
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  rulesFor(user: UserInfo, namespace: string): Promise<RuleSet> | RuleSet;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The attributes a review's spec describes for `user`, as upstream builds them (an empty version means all). */
export function attributesOf(spec: KubeObject, user: UserInfo): Attributes {
  const r = spec.resourceAttributes;
  if (r) {
    const group = str(r.group);
    // A typed client may name a group the upstream way; the real request would reach ours.
    const attrs: Attributes = {
      user, verb: str(r.verb), isResourceRequest: true, path: '', apiGroup: productGroupForUpstream(group) ?? group,
      apiVersion: str(r.version) || '*', resource: str(r.resource),
    };
    if (str(r.subresource)) attrs.subresource = str(r.subresource);
    if (str(r.namespace)) attrs.namespace = str(r.namespace);
    if (str(r.name)) attrs.name = str(r.name);
    return attrs;
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: str(n.verb), isResourceRequest: false, path: str(n.path), apiGroup: '', apiVersion: '' };
}

/** The user a SubjectAccessReview names: its groups as given (no system:authenticated is added). */
function userOf(spec: KubeObject): UserInfo {
  const user: UserInfo = { username: str(spec.user), groups: strings(spec.groups) };
  if (str(spec.uid)) user.uid = str(spec.uid);
  if (spec.extra && typeof spec.extra === 'object') {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(spec.extra as Record<string, unknown>)) setOwn(extra, k, strings(v));
    if (Object.keys(extra).length) user.extra = extra;
  }
  return user;
}

async function statusOf(reviewer: AccessReviewer, attrs: Attributes): Promise<Record<string, unknown>> {
  const d = await reviewer.authorize(attrs);
  const status: Record<string, unknown> = { allowed: d.decision === 'allow' };
  if (d.decision === 'deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  if (d.evaluationError) status.evaluationError = d.evaluationError;
  return status;
}

function requireUser(user: UserInfo | undefined): UserInfo {
  if (!user) throw errors.badRequest('no user present on request');
  return user;
}

export function accessReviewRests(reviewer: AccessReviewer): RestObject[] {
  const subject = reviewResource(subjectAccessReviews, (review) => statusOf(reviewer, attributesOf(review.spec, userOf(review.spec))));
  const self = reviewResource(selfSubjectAccessReviews, (review, user) => statusOf(reviewer, attributesOf(review.spec, requireUser(user))));
  const local = reviewResource(localSubjectAccessReviews, (review) => {
    // The namespace came from the path by now: the request's must be the same one.
    const namespace = review.metadata?.namespace ?? '';
    const asked = str(review.spec.resourceAttributes?.namespace);
    if (asked !== namespace) {
      throw errors.invalid(localSubjectAccessReviews.group, localSubjectAccessReviews.kind, '', [fieldErrors.invalid('spec.resourceAttributes.namespace', asked, 'must match metadata.namespace')]);
    }
    return statusOf(reviewer, attributesOf(review.spec, userOf(review.spec)));
  });
  const rules = reviewResource(selfSubjectRulesReviews, async (review, user) => {
    const who = requireUser(user);
    const namespace = str(review.spec?.namespace);
    if (!namespace) throw errors.badRequest('no namespace on request');
    const set = await reviewer.rulesFor(who, namespace);
    const status: Record<string, unknown> = {
      resourceRules: set.resourceRules.map((r) => {
        const rule: Record<string, unknown> = { verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources };
        if (r.resourceNames.length) rule.resourceNames = r.resourceNames;
        return rule;
      }),
      nonResourceRules: set.nonResourceRules.map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
      incomplete: set.incomplete,
    };
    if (set.errors.length) status.evaluationError = set.errors.length === 1 ? set.errors[0] : `[${set.errors.join(', ')}]`;
    return status;
  });
  return [subject, self, local, rules];
}
