// The authenticator union's rules, as upstream's union and authenticated-group
// adder behave: asked in order, the first user wins; a rejected credential is
// a 401 and never anonymous; no credentials at all is anonymous only when
// anonymous access is on; every authenticated user gets system:authenticated.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { UnionAuthenticator, type Authenticator, type AuthnResult } from '../../../src/auth/authn/authenticator.js';
import { anonymousUser, systemGroups, type UserInfo } from '../../../src/machinery/user.js';

const req = {} as IncomingMessage;

/** An authenticator with a fixed answer that records being asked in `log`. */
function fixed(name: string, result: AuthnResult, log: string[]): Authenticator {
  return { name, authenticate: async () => { log.push(name); return result; } };
}

const user = (username: string, groups: string[] = []): AuthnResult => ({ kind: 'user', user: { username, groups } });
const rejected: AuthnResult = { kind: 'rejected', reason: 'bad credential' };
const none: AuthnResult = { kind: 'none' };

function userOf(r: AuthnResult): UserInfo {
  assert.equal(r.kind, 'user', JSON.stringify(r));
  return (r as { user: UserInfo }).user;
}

for (const anonymous of [false, true]) {
  describe(`the union with anonymous access ${anonymous ? 'on' : 'off'}`, () => {
    test('authenticators are asked in order and the first user ends the asking', async () => {
      const log: string[] = [];
      const union = new UnionAuthenticator([fixed('a', none, log), fixed('b', user('bob'), log), fixed('c', user('carol'), log)], { anonymous });
      assert.equal(userOf(await union.authenticate(req)).username, 'bob');
      assert.deepEqual(log, ['a', 'b']);
    });

    test('a rejected credential is a rejection, never anonymous', async () => {
      const log: string[] = [];
      const union = new UnionAuthenticator([fixed('a', rejected, log), fixed('b', none, log)], { anonymous });
      assert.equal((await union.authenticate(req)).kind, 'rejected');
      assert.deepEqual(log, ['a', 'b']);
      assert.equal((await new UnionAuthenticator([fixed('a', none, []), fixed('b', rejected, [])], { anonymous }).authenticate(req)).kind, 'rejected');
    });

    test('a rejection by one authenticator does not hide a user another recognises (upstream asks on)', async () => {
      const log: string[] = [];
      const union = new UnionAuthenticator([fixed('a', rejected, log), fixed('b', user('bob'), log)], { anonymous });
      assert.equal(userOf(await union.authenticate(req)).username, 'bob');
      assert.deepEqual(log, ['a', 'b']);
    });

    test(`no credentials ${anonymous ? 'make system:anonymous in system:unauthenticated' : 'are no user'}`, async () => {
      for (const authenticators of [[], [fixed('a', none, []), fixed('b', none, [])]]) {
        const r = await new UnionAuthenticator(authenticators, { anonymous }).authenticate(req);
        if (anonymous) assert.deepEqual(userOf(r), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
        else assert.deepEqual(r, { kind: 'none' });
      }
    });

    test('every authenticated user gets system:authenticated once, the rest of the user kept', async () => {
      const log: string[] = [];
      const full: UserInfo = { username: 'dora', uid: 'u-1', groups: ['devs', 'ops'], extra: { scopes: ['a'] } };
      const got = userOf(await new UnionAuthenticator([fixed('a', { kind: 'user', user: full }, log)], { anonymous }).authenticate(req));
      assert.deepEqual(got, { ...full, groups: ['devs', 'ops', systemGroups.authenticated] });
      assert.deepEqual(full.groups, ['devs', 'ops'], "the authenticator's own answer is not changed");
      const already = userOf(await new UnionAuthenticator([fixed('a', user('eve', [systemGroups.authenticated, 'x']), log)], { anonymous }).authenticate(req));
      assert.deepEqual(already.groups, [systemGroups.authenticated, 'x']);
      const noGroups = userOf(await new UnionAuthenticator([fixed('a', user('finn'), log)], { anonymous }).authenticate(req));
      assert.deepEqual(noGroups.groups, [systemGroups.authenticated]);
    });
  });
}

test('the anonymous user an authenticator names is not made authenticated', async () => {
  const r = await new UnionAuthenticator([fixed('a', { kind: 'user', user: anonymousUser }, [])], { anonymous: false }).authenticate(req);
  assert.deepEqual(userOf(r).groups, [systemGroups.unauthenticated]);
});

test('a user already in system:unauthenticated is not also made authenticated', async () => {
  const r = await new UnionAuthenticator([fixed('a', user('ghost', [systemGroups.unauthenticated]), [])], { anonymous: false }).authenticate(req);
  assert.deepEqual(userOf(r).groups, [systemGroups.unauthenticated]);
});

test('authenticators that answer at once and those that answer later are asked in the same order; all at once, no promise', async () => {
  const log: string[] = [];
  const now = (name: string, result: AuthnResult): Authenticator => ({ name, authenticate: () => { log.push(name); return result; } });
  const mixed = new UnionAuthenticator([now('x509', none), fixed('webhook', rejected, log), now('token', user('alice')), now('never', user('bob'))], { anonymous: false });
  assert.equal(userOf(await mixed.authenticate(req)).username, 'alice');
  assert.deepEqual(log, ['x509', 'webhook', 'token']);
  const atOnce = new UnionAuthenticator([now('x509', none), now('token', user('carol'))], { anonymous: false }).authenticate(req);
  assert.ok(!(atOnce instanceof Promise));
  assert.equal(userOf(atOnce).username, 'carol');
  assert.deepEqual(await new UnionAuthenticator([now('a', rejected), fixed('b', { kind: 'rejected', reason: 'other' }, log)], { anonymous: true }).authenticate(req),
    { kind: 'rejected', reason: '[bad credential, other]' });
});
