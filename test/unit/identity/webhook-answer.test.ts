// What a token webhook's TokenReview status says, read strictly: a malformed
// answer is an error, never a user.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerOf } from '../../../src/auth/authn/webhook.js';

test('authenticated answers name the user; the error is ignored then', () => {
  assert.deepEqual(answerOf({ status: { authenticated: true, error: 'ignored', user: { username: 'u', groups: ['g'] }, audiences: ['a'] } }),
    { kind: 'user', user: { username: 'u', groups: ['g'] }, audiences: ['a'] });
});

test('denials: the error text, or no opinion without one', () => {
  assert.equal(answerOf({ status: { authenticated: false, error: 'nope' } }), 'nope');
  assert.deepEqual(answerOf({ status: { authenticated: false } }), { kind: 'none' });
  assert.deepEqual(answerOf({ status: {} }), { kind: 'none' });
});

test('malformed answers are errors', () => {
  for (const bad of [null, 'x', {}, { status: 'x' }, { status: { authenticated: true } }, { status: { authenticated: true, user: { username: '' } } },
    { status: { authenticated: true, user: { username: 'u', groups: 'g' } } },
    { status: { authenticated: true, user: { username: 'u', uid: 5 } } },
    { status: { authenticated: true, user: { username: 'u', extra: { k: 'v' } } } },
    { status: { authenticated: true, user: { username: 'u', extra: ['x'] } } },
    { status: { authenticated: true, user: { username: 'u' }, audiences: [1] } }]) {
    assert.equal(typeof answerOf(bad), 'string', JSON.stringify(bad));
  }
});
