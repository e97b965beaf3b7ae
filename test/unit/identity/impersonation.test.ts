// The impersonation filter's parts: which headers ask for what, the user they
// make, and the headers gone once the request goes on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { impersonatedUser, impersonation, impersonationRequests, type RequestContext } from '../../../src/server/filters.js';
import { AlwaysAllowAuthorizer } from '../../../src/auth/authz/authorizer.js';
import { ApiError } from '../../../src/machinery/errors.js';

test('headers become requests: a user or an account, groups, percent-decoded lowercase extras, a uid', () => {
  assert.deepEqual(impersonationRequests({
    'impersonate-user': ['system:serviceaccount:ns:robot', 'ignored'], 'impersonate-group': ['a', 'b'],
    'impersonate-extra-team%2fname': ['x'], 'impersonate-extra-bad%zz': ['y'], 'impersonate-uid': ['7'], 'accept': ['*/*'],
  }), [
    { what: 'ServiceAccount', namespace: 'ns', name: 'robot' },
    { what: 'Group', name: 'a' }, { what: 'Group', name: 'b' },
    { what: 'UserExtra', name: 'x', extraKey: 'team/name' },
    { what: 'UserExtra', name: 'y', extraKey: 'bad%zz' },
    { what: 'UID', name: '7' },
  ]);
  assert.deepEqual(impersonationRequests({ 'impersonate-user': ['system:serviceaccount:NS:robot'] }), [{ what: 'User', name: 'system:serviceaccount:NS:robot' }], 'not an account name: a user');
  assert.deepEqual(impersonationRequests({ accept: ['*/*'] }), []);
  assert.throws(() => impersonationRequests({ 'impersonate-extra-a': ['1'] }), (e: unknown) => e instanceof ApiError && e.code === 400);
});

test('the impersonated user: extras keyed safely, system:authenticated unless a group says otherwise', () => {
  const user = impersonatedUser([
    { what: 'User', name: 'jane' }, { what: 'UserExtra', name: 'p', extraKey: '__proto__' }, { what: 'UserExtra', name: 'q', extraKey: '__proto__' },
  ]);
  assert.equal(user.username, 'jane');
  assert.deepEqual(user.groups, ['system:authenticated']);
  assert.ok(Object.hasOwn(user.extra!, '__proto__'));
  assert.deepEqual(user.extra!['__proto__' as string], ['p', 'q']);
  assert.equal(Object.getPrototypeOf(user.extra), Object.prototype);
});

test('the filter replaces the user and removes every impersonation header before going on', async () => {
  const headers: Record<string, string | undefined> = { 'impersonate-user': 'jane', 'impersonate-extra-a': '1', accept: '*/*' };
  const req = { headers, headersDistinct: { 'impersonate-user': ['jane'], 'impersonate-extra-a': ['1'], accept: ['*/*'] } } as unknown as IncomingMessage;
  const ctx: RequestContext = { req, res: {} as ServerResponse, path: '/api', query: new URLSearchParams(), user: { username: 'admin', groups: ['system:masters'] } };
  let seen: RequestContext | undefined;
  await impersonation(new AlwaysAllowAuthorizer())(ctx, async () => { seen = ctx; });
  assert.equal(seen?.user?.username, 'jane');
  assert.deepEqual(seen?.user?.extra, { a: ['1'] });
  assert.deepEqual(headers, { accept: '*/*' });
});

test('the raw header names decide whether the headers are read: any case asks, none lets the request through as it is', async () => {
  const asking = { headers: { 'impersonate-user': 'jane' }, rawHeaders: ['Accept', '*/*', 'IMPERSONATE-User', 'jane'], headersDistinct: { 'impersonate-user': ['jane'] } } as unknown as IncomingMessage;
  const ctx: RequestContext = { req: asking, res: {} as ServerResponse, path: '/api', query: new URLSearchParams(), user: { username: 'admin', groups: ['system:masters'] } };
  await impersonation(new AlwaysAllowAuthorizer())(ctx, async () => undefined);
  assert.equal(ctx.user?.username, 'jane');
  const plain = { headers: { accept: '*/*' }, rawHeaders: ['Accept', '*/*'], get headersDistinct(): never { throw new Error('not read for a request that impersonates no one'); } } as unknown as IncomingMessage;
  const other: RequestContext = { req: plain, res: {} as ServerResponse, path: '/api', query: new URLSearchParams(), user: { username: 'admin', groups: ['system:masters'] } };
  await impersonation(new AlwaysAllowAuthorizer())(other, async () => undefined);
  assert.equal(other.user?.username, 'admin');
});
