// ABAC policies: parsing one JSON object per line (v1beta1 and unversioned
// v0), the line number of a bad line, matching users, groups, resources,
// namespaces, paths and readonly, wildcards that never cover anonymous users.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AbacAuthorizer, abacApiVersion, parsePolicyFile, PolicyFileError } from '../../../src/auth/authz/abac.js';
import type { Attributes } from '../../../src/machinery/authorization.js';
import { anonymousUser } from '../../../src/machinery/user.js';

const line = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: abacApiVersion, kind: 'Policy', spec });
const alice = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const req = (user = alice, verb = 'get', resource = 'pods', namespace: string | undefined = 'ns', apiGroup = ''): Attributes =>
  ({ user, verb, isResourceRequest: true, path: '/x', apiGroup, apiVersion: 'v1', resource, namespace });
const path = (user = alice, p = '/version', verb = 'get'): Attributes => ({ user, verb, isResourceRequest: false, path: p, apiGroup: '', apiVersion: '' });

test('one policy per line; blank lines and # comments are skipped', () => {
  const text = `# policies\n\n${line({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' })}\n   \n${line({ group: 'devs', nonResourcePath: '*', readonly: true })}\n`;
  assert.equal(parsePolicyFile('p', text).length, 2);
});

test('a malformed line stops with the file, its line number and why', () => {
  const bad = (text: string, why: RegExp) => assert.throws(() => parsePolicyFile('/etc/abac', text), (e: unknown) => e instanceof PolicyFileError && why.test(e.message));
  bad(`${line({ user: 'a' })}\n{not json`, /^error reading policy file \/etc\/abac, line 2: \{not json: /);
  bad(`\n\n${line({ user: 7 })}`, /line 3: .*spec\.user must be a string/);
  bad(line({ readonly: 'yes' }), /line 1: .*spec\.readonly must be a boolean/);
  bad(JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: {} }), /line 1: .*unrecognized object/);
  bad('[1,2]', /line 1: .*must be a JSON object/);
  bad(`${'['.repeat(600)}${']'.repeat(600)}`, /line 1: .*nested too deeply/);
});

test('a user policy matches that user on the named namespace, resource and group', () => {
  const abac = new AbacAuthorizer(parsePolicyFile('p', line({ user: 'alice', namespace: 'ns', resource: 'pods', apiGroup: '' })));
  assert.equal(abac.authorize(req()).decision, 'allow');
  assert.deepEqual(abac.authorize(req({ username: 'bob', groups: [] })), { decision: 'no-opinion', reason: 'No policy matched.' });
  assert.equal(abac.authorize(req(alice, 'get', 'pods', 'other')).decision, 'no-opinion');
  assert.equal(abac.authorize(req(alice, 'get', 'secrets')).decision, 'no-opinion');
  assert.equal(abac.authorize(req(alice, 'get', 'pods', 'ns', 'apps')).decision, 'no-opinion');
  assert.equal(abac.authorize(path()).decision, 'no-opinion', 'a resource policy never matches a path');
});

test('readonly policies allow get, list and watch only; paths match exactly, with *, or by a trailing *', () => {
  const abac = new AbacAuthorizer(parsePolicyFile('p', [
    line({ group: 'devs', namespace: '*', resource: '*', apiGroup: '*', readonly: true }),
    line({ group: 'devs', nonResourcePath: '/logs/*' }),
  ].join('\n')));
  for (const verb of ['get', 'list', 'watch']) assert.equal(abac.authorize(req(alice, verb)).decision, 'allow', verb);
  assert.equal(abac.authorize(req(alice, 'create')).decision, 'no-opinion');
  assert.equal(abac.authorize(path(alice, '/logs/a/b', 'post')).decision, 'allow');
  assert.equal(abac.authorize(path(alice, '/logs')).decision, 'no-opinion');
});

test('* as user or group means every signed-in user, never anonymous ones', () => {
  const abac = new AbacAuthorizer(parsePolicyFile('p', line({ user: '*', nonResourcePath: '*', readonly: true })));
  assert.equal(abac.authorize(path()).decision, 'allow');
  assert.equal(abac.authorize(path(anonymousUser)).decision, 'no-opinion');
  const anon = new AbacAuthorizer(parsePolicyFile('p', line({ group: 'system:unauthenticated', nonResourcePath: '/version', readonly: true })));
  assert.equal(anon.authorize(path(anonymousUser)).decision, 'allow');
});

test('unversioned v0 lines: no subject means signed-in users, no namespace and resource means everything', () => {
  const abac = new AbacAuthorizer(parsePolicyFile('p', [JSON.stringify({ readonly: true }), JSON.stringify({ user: 'bob', resource: 'events' })].join('\n')));
  assert.equal(abac.authorize(req(alice, 'list', 'anything', 'x', 'apps')).decision, 'allow');
  assert.equal(abac.authorize(path()).decision, 'allow');
  assert.equal(abac.authorize(path(anonymousUser)).decision, 'no-opinion');
  assert.equal(abac.authorize(req({ username: 'bob', groups: [] }, 'create', 'events', 'any')).decision, 'allow');
});

test('rules: what the matching policies grant in the namespace', () => {
  const abac = new AbacAuthorizer(parsePolicyFile('p', [
    line({ user: 'alice', namespace: 'ns', resource: 'pods', apiGroup: '', readonly: true }),
    line({ user: 'alice', namespace: 'other', resource: 'secrets', apiGroup: '' }),
    line({ group: 'devs', nonResourcePath: '/healthz' }),
  ].join('\n')));
  assert.deepEqual(abac.rulesFor(alice, 'ns'), {
    resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'], resourceNames: [] }],
    nonResourceRules: [],
    incomplete: false, errors: [],
  });
});
