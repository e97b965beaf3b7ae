// The group authentication, version v1: its kinds are answered, never stored
// (a token request, reviews).
import type { KindDefinition } from '../../kind.js';
import { tokenRequests } from './tokenrequest.js';
import { tokenReviews } from './tokenreview.js';
import { selfSubjectReviews } from './selfsubjectreview.js';

export const authenticationV1Kinds: KindDefinition[] = [tokenRequests, tokenReviews, selfSubjectReviews];
export { tokenRequests, tokenReviews, selfSubjectReviews };
