// SelfSubjectRulesReview: every rule the caller holds in a namespace
// (`kubectl auth can-i --list`); `incomplete` when a module cannot list its rules.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { kindSchema } from '../../core/v1/common.js';
import { authz } from './common.js';

const strings = (description: string) => t.array(t.string(), description, { listType: 'atomic' });

const ResourceRule = define(authz('ResourceRule'), t.object({
  verbs: p(1, strings('Verbs allowed; * for all.')),
  apiGroups: p(2, strings('API groups; * for all.')),
  resources: p(3, strings('Resources; * for all, */sub-resource for a sub-resource of all.')),
  resourceNames: p(4, strings('Names the rule is limited to; empty for all.')),
}, 'A rule on resources the caller holds.', { required: ['verbs'] }));

const NonResourceRule = define(authz('NonResourceRule'), t.object({
  verbs: p(1, strings('Lowercase HTTP methods allowed; * for all.')),
  nonResourceURLs: p(2, strings('Paths; a trailing * matches every path below.')),
}, 'A rule on non-resource paths the caller holds.', { required: ['verbs'] }));

const SubjectRulesReviewStatus = define(authz('SubjectRulesReviewStatus'), t.object({
  resourceRules: p(1, t.array(t.ref(ResourceRule), 'Rules on resources.', { listType: 'atomic' })),
  nonResourceRules: p(2, t.array(t.ref(NonResourceRule), 'Rules on non-resource paths.', { listType: 'atomic' })),
  incomplete: p(3, t.bool('True when a module could not list its rules (a webhook): the caller may hold more.'), 'always'),
  evaluationError: p(4, t.string('An error met while listing; the list may still be useful.')),
}, 'The rules a user holds in a namespace.', { required: ['resourceRules', 'nonResourceRules', 'incomplete'] }));

const SelfSubjectRulesReviewSpec = define(authz('SelfSubjectRulesReviewSpec'), t.object({
  namespace: p(1, t.string('The namespace to list the rules in.')),
}, 'Where to list the caller\'s rules.'));

const schema = kindSchema('Lists the actions the caller may perform in a namespace.', {
  spec: p(2, t.ref(SelfSubjectRulesReviewSpec, 'The namespace.')),
  status: p(3, t.ref(SubjectRulesReviewStatus, 'The answer, filled in by the server.')),
}, ['spec']);

export const selfSubjectRulesReviews = defineKind({
  group: vocabulary.authorizationGroup, version: 'v1', kind: 'SelfSubjectRulesReview', plural: 'selfsubjectrulesreviews',
  scope: 'Cluster',
  verbs: ['create'],
  protobuf: true,
  schema: define(authz('SelfSubjectRulesReview'), schema),
});
