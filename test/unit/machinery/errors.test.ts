// A failure read by a client that named the group by its upstream name: the
// qualified resource, the authorizer's group and the details' group in that
// name; names and other text as they were.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorInClientGroup, errors } from '../../../src/machinery/errors.js';

const ours = 'rbac.authorization.example.io';
const theirs = 'rbac.authorization.k8s.io';

test('not found and forbidden name the resource in the client\'s group', () => {
  const missing = errorInClientGroup(errors.notFound({ group: ours, resource: 'rolebindings' }, 'x'), ours, theirs);
  assert.equal(missing.message, `rolebindings.${theirs} "x" not found`);
  assert.equal(missing.details?.group, theirs);
  assert.equal(missing.code, 404);
  const forbidden = errorInClientGroup(errors.forbidden({ group: ours, resource: 'rolebindings' }, undefined,
    `User "jane" cannot create resource "rolebindings" in API group "${ours}" in the namespace "default"`), ours, theirs);
  assert.equal(forbidden.message, `rolebindings.${theirs} is forbidden: User "jane" cannot create resource "rolebindings" in API group "${theirs}" in the namespace "default"`);
});

test('a name that happens to spell the group, and errors of other groups, are left alone', () => {
  const named = errors.notFound({ group: ours, resource: 'roles' }, `a.${ours}`);
  assert.equal(errorInClientGroup(named, ours, theirs).message, `roles.${theirs} "a.${ours}" not found`);
  const other = errors.notFound({ group: '', resource: 'configmaps' }, 'c');
  assert.equal(errorInClientGroup(other, ours, theirs), other);
  assert.equal(errorInClientGroup(other, '', theirs), other);
});
