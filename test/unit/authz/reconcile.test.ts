// Reconciling the default policy with what exists: missing rules, selectors,
// subjects, labels and annotations come back; what users added stays; an
// object annotated autoupdate "false" is left as it is; a binding whose
// roleRef changed is made again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reconcileBinding, reconcileRole } from '../../../src/auth/authz/reconcile.js';
import { defaultClusterRoleBindings, defaultClusterRoles } from '../../../src/auth/authz/bootstrappolicy.js';
import { aggregatedRules } from '../../../src/controllers/clusterroleaggregation.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const expectedRole = () => defaultClusterRoles().find((r) => r.metadata.name === 'system:discovery')!;
const autoupdate = vocabulary.rbacAutoupdateAnnotation;

test('a missing role is created; an unchanged one is left alone', () => {
  const expected = expectedRole();
  assert.equal(reconcileRole(undefined, expected).operation, 'create');
  assert.equal(reconcileRole(structuredClone(expected), expected).operation, 'none');
});

test('a rule a user removed comes back, rules a user added stay', () => {
  const expected = expectedRole();
  const edited = structuredClone(expected);
  edited.rules = [{ verbs: ['get'], nonResourceURLs: ['/livez', '/readyz', '/healthz', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*', '/version/'] }, { verbs: ['get'], nonResourceURLs: ['/mine'] }];
  const r = reconcileRole(edited, expected);
  assert.equal(r.operation, 'update');
  assert.deepEqual(r.object.rules.slice(0, 2), edited.rules);
  assert.deepEqual(r.object.rules.slice(2), [{ verbs: ['get'], nonResourceURLs: ['/version'] }]);
});

test('autoupdate "false" protects every edit; a user label or annotation value wins, missing ones come back', () => {
  const expected = expectedRole();
  const own = structuredClone(expected);
  own.rules = [];
  own.metadata.annotations[autoupdate] = 'false';
  assert.equal(reconcileRole(own, expected).operation, 'none');
  const relabelled = structuredClone(expected);
  relabelled.metadata.labels = { mine: 'x' };
  relabelled.metadata.annotations = { [autoupdate]: 'true', note: 'kept' };
  const r = reconcileRole(relabelled, expected);
  assert.equal(r.operation, 'update');
  assert.deepEqual(r.object.metadata.labels, { ...expected.metadata.labels, mine: 'x' });
  assert.equal(r.object.metadata.annotations.note, 'kept');
});

test('aggregation selectors: missing ones are added, an unexpected aggregation is dropped', () => {
  const view = defaultClusterRoles().find((r) => r.metadata.name === 'view')!;
  const lost = structuredClone(view);
  lost.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { mine: 'true' } }] };
  const r = reconcileRole(lost, view);
  assert.equal(r.operation, 'update');
  assert.equal(r.object.aggregationRule.clusterRoleSelectors.length, 2);
  const plain = structuredClone(expectedRole());
  const aggregated = { ...structuredClone(plain), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } };
  assert.equal(reconcileRole(aggregated, plain).object.aggregationRule, undefined);
});

test('bindings: missing subjects are added; another roleRef means the binding is made again', () => {
  const expected = defaultClusterRoleBindings().find((b) => b.metadata.name === 'system:public-info-viewer')!;
  const fewer = structuredClone(expected);
  fewer.subjects = [fewer.subjects[0], { kind: 'User', apiGroup: vocabulary.rbacGroup, name: 'someone' }];
  const r = reconcileBinding(fewer, expected);
  assert.equal(r.operation, 'update');
  assert.deepEqual(r.object.subjects.map((s: any) => s.name), ['system:authenticated', 'someone', 'system:unauthenticated']);
  const moved = structuredClone(expected);
  moved.roleRef.name = 'cluster-admin';
  assert.equal(reconcileBinding(moved, expected).operation, 'recreate');
});

test('aggregation: rules of the matching ClusterRoles by name, each once, never the role itself', () => {
  const label = { [`${vocabulary.rbacAggregateToLabelPrefix}view`]: 'true' };
  const view = { metadata: { name: 'view', labels: label }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: label }] } };
  const a = { metadata: { name: 'b-role', labels: label }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
  const b = { metadata: { name: 'a-role', labels: label }, rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
  const other = { metadata: { name: 'c', labels: {} }, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] };
  assert.deepEqual(aggregatedRules(view, [view, a, b, other]), [
    { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
    { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
  ]);
});
