// The RBAC authorizer over its index: bindings reach users directly, through
// groups and as service accounts; RoleBindings only in their namespace;
// removal and replacement take effect; missing roles are reported; the
// rules a user holds are listed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RbacIndex } from '../../../src/auth/authz/rbacindex.js';
import { RbacAuthorizer } from '../../../src/auth/authz/rbac.js';
import type { Attributes } from '../../../src/machinery/authorization.js';
import type { UserInfo } from '../../../src/machinery/user.js';

const alice: UserInfo = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const account: UserInfo = { username: 'system:serviceaccount:apps:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:apps'] };
const get = (user: UserInfo, resource: string, namespace?: string): Attributes => ({
  user, verb: 'get', isResourceRequest: true, path: '/x', apiGroup: '', apiVersion: 'v1', resource, namespace, name: 'n',
});
const meta = (name: string, namespace?: string) => ({ metadata: namespace ? { name, namespace } : { name } });

function setup() {
  const index = new RbacIndex();
  index.putRole({ ...meta('reader', 'team'), rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }] });
  index.putClusterRole({ ...meta('cm-reader'), rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }] });
  return { index, rbac: new RbacAuthorizer(index) };
}

test('a RoleBinding to a user allows in its namespace only, with upstream\'s reason', () => {
  const { index, rbac } = setup();
  assert.equal(rbac.authorize(get(alice, 'secrets', 'team')).decision, 'no-opinion');
  index.putBinding('RoleBinding', { ...meta('rb', 'team'), roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  assert.deepEqual(rbac.authorize(get(alice, 'secrets', 'team')), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "rb/team" of Role "reader" to User "alice"' });
  assert.equal(rbac.authorize(get(alice, 'secrets', 'other')).decision, 'no-opinion');
  assert.equal(rbac.authorize(get(alice, 'secrets')).decision, 'no-opinion');
  index.removeBinding('RoleBinding', meta('rb', 'team'));
  assert.equal(rbac.authorize(get(alice, 'secrets', 'team')).decision, 'no-opinion');
});

test('groups and service accounts (with or without the subject namespace) are subjects', () => {
  const { index, rbac } = setup();
  index.putBinding('ClusterRoleBinding', { ...meta('devs'), roleRef: { kind: 'ClusterRole', name: 'cm-reader' }, subjects: [{ kind: 'Group', name: 'devs' }] });
  assert.equal(rbac.authorize(get(alice, 'configmaps', 'anywhere')).reason, 'RBAC: allowed by ClusterRoleBinding "devs" of ClusterRole "cm-reader" to Group "devs"');
  index.putBinding('RoleBinding', { ...meta('sa', 'apps'), roleRef: { kind: 'ClusterRole', name: 'cm-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'builder' }] });
  assert.equal(rbac.authorize(get(account, 'configmaps', 'apps')).reason, 'RBAC: allowed by RoleBinding "sa/apps" of ClusterRole "cm-reader" to ServiceAccount "builder/apps"');
  assert.equal(rbac.authorize(get(account, 'configmaps', 'other')).decision, 'no-opinion');
  index.putBinding('ClusterRoleBinding', { ...meta('sa-everywhere'), roleRef: { kind: 'ClusterRole', name: 'cm-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'apps' }] });
  assert.equal(rbac.authorize(get(account, 'configmaps', 'other')).decision, 'allow');
});

test('a binding replaced by an update loses its old subjects', () => {
  const { index, rbac } = setup();
  index.putBinding('ClusterRoleBinding', { ...meta('b'), roleRef: { kind: 'ClusterRole', name: 'cm-reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  index.putBinding('ClusterRoleBinding', { ...meta('b'), roleRef: { kind: 'ClusterRole', name: 'cm-reader' }, subjects: [{ kind: 'User', name: 'bob' }] });
  assert.equal(rbac.authorize(get(alice, 'configmaps', 'x')).decision, 'no-opinion');
  assert.equal(rbac.authorize(get({ username: 'bob', groups: [] }, 'configmaps', 'x')).decision, 'allow');
});

test('a missing role is no opinion with upstream\'s not-found reason; a RoleBinding\'s Role is looked up in its own namespace', () => {
  const { index, rbac } = setup();
  index.putBinding('RoleBinding', { ...meta('rb', 'other'), roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  assert.deepEqual(rbac.authorize(get(alice, 'secrets', 'other')), { decision: 'no-opinion', reason: 'RBAC: role.rbac.authorization.plat.io "reader" not found' });
});

test('the rules a user holds: cluster-wide ones and the namespace\'s, resource and non-resource apart', () => {
  const { index, rbac } = setup();
  index.putClusterRole({ ...meta('paths'), rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] });
  index.putBinding('ClusterRoleBinding', { ...meta('p'), roleRef: { kind: 'ClusterRole', name: 'paths' }, subjects: [{ kind: 'Group', name: 'system:authenticated' }] });
  index.putBinding('RoleBinding', { ...meta('rb', 'team'), roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  const rules = rbac.rulesFor(alice, 'team');
  assert.deepEqual(rules.resourceRules, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: [] }]);
  assert.deepEqual(rules.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  assert.equal(rbac.rulesFor(alice, 'other').resourceRules.length, 0);
});
