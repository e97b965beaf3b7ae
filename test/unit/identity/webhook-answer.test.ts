// What a token webhook's TokenReview says, read strictly: an answer of
// another kind or version, or a malformed one, is an error, never a user.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerOf } from '../../../src/auth/authn/webhook.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const asked = `${vocabulary.authenticationGroup}/v1`;
const review = (status: unknown, apiVersion = asked, kind = 'TokenReview') => ({ apiVersion, kind, status });

test('authenticated answers name the user; the error is ignored then', () => {
  assert.deepEqual(answerOf(review({ authenticated: true, error: 'ignored', user: { username: 'u', groups: ['g'] }, audiences: ['a'] }), asked),
    { kind: 'user', user: { username: 'u', groups: ['g'] }, audiences: ['a'] });
});

test('the upstream group name of the version asked for is the same kind', () => {
  assert.equal((answerOf(review({ authenticated: true, user: { username: 'u' } }, 'authentication.k8s.io/v1'), asked) as { kind: string }).kind, 'user');
});

test('denials: the error text, or no opinion without one', () => {
  assert.equal(answerOf(review({ authenticated: false, error: 'nope' }), asked), 'nope');
  assert.deepEqual(answerOf(review({ authenticated: false }), asked), { kind: 'none' });
  assert.deepEqual(answerOf(review({}), asked), { kind: 'none' });
});

test('an answer of another kind or version authenticates nobody, whatever its status says', () => {
  const yes = { authenticated: true, user: { username: 'u' } };
  for (const [apiVersion, kind] of [['v1', 'Status'], [asked, 'Status'], [asked, 'SubjectAccessReview'], [`${vocabulary.authenticationGroup}/v1beta1`, 'TokenReview'],
    ['authentication.k8s.io/v1beta1', 'TokenReview'], ['other.example/v1', 'TokenReview'], [undefined, 'TokenReview'], [asked, undefined]]) {
    const answer = answerOf({ ...(apiVersion ? { apiVersion } : {}), ...(kind ? { kind } : {}), status: yes }, asked);
    assert.equal(typeof answer, 'string', `${apiVersion} ${kind}`);
    assert.match(answer as string, /is not a TokenReview: expected .*TokenReview, got/);
  }
});

test('malformed answers are errors', () => {
  for (const bad of [null, 'x', {}, review('x'), review([]), review({ authenticated: true }), review({ authenticated: true, user: { username: '' } }),
    review({ authenticated: true, user: { username: 'u', groups: 'g' } }),
    review({ authenticated: true, user: { username: 'u', uid: 5 } }),
    review({ authenticated: true, user: { username: 'u', extra: { k: 'v' } } }),
    review({ authenticated: true, user: { username: 'u', extra: ['x'] } }),
    review({ authenticated: true, user: { username: 'u' }, audiences: [1] })]) {
    assert.equal(typeof answerOf(bad, asked), 'string', JSON.stringify(bad));
  }
});
