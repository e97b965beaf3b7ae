// The group authorization, version v1: access reviews, answered and never stored.
import type { KindDefinition } from '../../kind.js';
import { subjectAccessReviews } from './subjectaccessreview.js';
import { selfSubjectAccessReviews } from './selfsubjectaccessreview.js';
import { localSubjectAccessReviews } from './localsubjectaccessreview.js';
import { selfSubjectRulesReviews } from './selfsubjectrulesreview.js';

export const authorizationV1Kinds: KindDefinition[] = [subjectAccessReviews, selfSubjectAccessReviews, localSubjectAccessReviews, selfSubjectRulesReviews];
export { subjectAccessReviews, selfSubjectAccessReviews, localSubjectAccessReviews, selfSubjectRulesReviews };
