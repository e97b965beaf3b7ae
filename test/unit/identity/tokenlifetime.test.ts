// How long a requested token lives: the maximum shortens it (with a warning);
// upstream's safe transition extends pod-bound tokens of the admission-injected
// lifetime for the server's own audiences to a year, warning after the asked one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extendedTokenSeconds, tokenLifetime, warnOnlyTokenSeconds } from '../../../src/registry/authentication.js';

const base = { maxSeconds: 0, extend: true, podBound: false, forApiOnly: true };

test('no maximum: the lifetime asked for', () => {
  assert.deepEqual(tokenLifetime(7200, base), { seconds: 7200, reported: 7200, warning: undefined });
});

test('a maximum shortens longer requests and says so', () => {
  assert.deepEqual(tokenLifetime(7200, { ...base, maxSeconds: 3600 }),
    { seconds: 3600, reported: 3600, warning: 'requested expiration of 7200 seconds shortened to 3600 seconds' });
  assert.deepEqual(tokenLifetime(1800, { ...base, maxSeconds: 3600 }), { seconds: 1800, reported: 1800, warning: undefined });
});

test('pod-bound tokens of 3607 s for the server are extended to a year, only then', () => {
  assert.equal(warnOnlyTokenSeconds, 3607);
  assert.deepEqual(tokenLifetime(3607, { ...base, podBound: true }), { seconds: extendedTokenSeconds, reported: 3607, warning: undefined, warnAfter: 3607 });
  assert.equal(tokenLifetime(3607, { ...base, podBound: false }).seconds, 3607, 'not bound to a pod');
  assert.equal(tokenLifetime(3600, { ...base, podBound: true }).seconds, 3600, 'another lifetime');
  assert.equal(tokenLifetime(3607, { ...base, podBound: true, forApiOnly: false }).seconds, 3607, 'for other audiences');
  assert.equal(tokenLifetime(3607, { ...base, podBound: true, extend: false }).seconds, 3607, '--service-account-extend-token-expiration=false');
  assert.equal(tokenLifetime(3607, { ...base, podBound: true, maxSeconds: 2 * extendedTokenSeconds }).seconds, 2 * extendedTokenSeconds, 'a longer maximum wins');
});
