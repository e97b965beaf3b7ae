// RBAC rules: matching a request (verbs, groups, resources and sub-resources,
// names, non-resource paths with a trailing *), coverage for escalation
// checks, and upstream's compact form in messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactRules, compactString, compileRule, policyRuleOf, ruleAllows, uncovered } from '../../../src/auth/authz/rules.js';
import type { Attributes } from '../../../src/machinery/authorization.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const rule = (r: Record<string, string[]>) => compileRule(policyRuleOf(r));
const req = (verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user: { username: 'u', groups: [] }, verb, isResourceRequest: true, path: '/x', apiGroup: '', apiVersion: 'v1', resource, ...extra,
});
const path = (verb: string, p: string): Attributes => ({ user: { username: 'u', groups: [] }, verb, isResourceRequest: false, path: p, apiGroup: '', apiVersion: '' });

test('verbs, groups and resources must all match; * matches any', () => {
  const r = rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] });
  assert.equal(ruleAllows(r, req('get', 'secrets')), true);
  assert.equal(ruleAllows(r, req('watch', 'secrets')), false);
  assert.equal(ruleAllows(r, req('get', 'configmaps')), false);
  assert.equal(ruleAllows(r, req('get', 'secrets', { apiGroup: 'apps' })), false);
  assert.equal(ruleAllows(rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), req('deletecollection', 'x', { apiGroup: 'y' })), true);
});

test('sub-resources match only as resource/sub, */sub or *', () => {
  const token = rule({ verbs: ['create'], apiGroups: [''], resources: ['serviceaccounts/token'] });
  assert.equal(ruleAllows(token, req('create', 'serviceaccounts', { subresource: 'token' })), true);
  assert.equal(ruleAllows(token, req('create', 'serviceaccounts')), false);
  const scale = rule({ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] });
  assert.equal(ruleAllows(scale, req('get', 'deployments', { subresource: 'scale', apiGroup: 'apps' })), true);
  assert.equal(ruleAllows(scale, req('get', 'deployments', { apiGroup: 'apps' })), false);
  assert.equal(ruleAllows(scale, req('get', 'deployments', { subresource: 'status', apiGroup: 'apps' })), false);
  const parent = rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] });
  assert.equal(ruleAllows(parent, req('get', 'pods', { subresource: 'log' })), false);
});

test('resourceNames limit a rule to named objects, so an unnamed create or list is not allowed', () => {
  const r = rule({ verbs: ['get', 'create', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'] });
  assert.equal(ruleAllows(r, req('get', 'configmaps', { name: 'one' })), true);
  assert.equal(ruleAllows(r, req('get', 'configmaps', { name: 'two' })), false);
  assert.equal(ruleAllows(r, req('create', 'configmaps')), false);
  assert.equal(ruleAllows(r, req('list', 'configmaps')), false);
});

test('non-resource URLs: exact, * for all, trailing * for a prefix; never for resource requests', () => {
  const r = rule({ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] });
  assert.equal(ruleAllows(r, path('get', '/healthz')), true);
  assert.equal(ruleAllows(r, path('get', '/healthz/etcd')), false);
  assert.equal(ruleAllows(r, path('get', '/apis/x/v1')), true);
  assert.equal(ruleAllows(r, path('post', '/healthz')), false);
  assert.equal(ruleAllows(rule({ verbs: ['*'], nonResourceURLs: ['*'] }), path('delete', '/anything')), true);
  assert.equal(ruleAllows(r, req('get', 'healthz')), false);
});

test('a rule naming the upstream group applies to ours', () => {
  const r = rule({ verbs: ['get'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] });
  assert.equal(ruleAllows(r, req('get', 'roles', { apiGroup: vocabulary.rbacGroup })), true);
});

test('coverage: what the owner lacks, unit by unit; */sub and URL prefixes cover', () => {
  const owner = [
    rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets', '*/status'] }),
    rule({ verbs: ['get'], nonResourceURLs: ['/logs/*'] }),
  ];
  assert.deepEqual(uncovered(owner, [policyRuleOf({ verbs: ['get'], apiGroups: [''], resources: ['secrets', 'pods/status'] })]), []);
  assert.deepEqual(uncovered(owner, [policyRuleOf({ verbs: ['get'], nonResourceURLs: ['/logs/a'] })]), []);
  const missing = uncovered(owner, [policyRuleOf({ verbs: ['get', 'delete'], apiGroups: [''], resources: ['secrets'] })]);
  assert.deepEqual(missing.map(compactString), ['{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}']);
  // An owner limited to names does not cover a rule on every name; names it holds it covers.
  const named = [rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] })];
  assert.equal(uncovered(named, [policyRuleOf({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] })]).length, 1);
  assert.equal(uncovered(named, [policyRuleOf({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] })]).length, 0);
});

test('compacting joins verbs of one group and resource, as upstream lists what is missing', () => {
  const missing = uncovered([], [policyRuleOf({ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }), policyRuleOf({ verbs: ['get'], nonResourceURLs: ['/x'] })]);
  assert.deepEqual(compactRules(missing).map(compactString).sort(), [
    '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    '{NonResourceURLs:["/x"], Verbs:["get"]}',
  ]);
});
