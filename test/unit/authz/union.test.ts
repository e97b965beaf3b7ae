// The union of authorizers and the built-in modes: asked in order, the first
// that allows or denies decides, system:masters is always allowed, and
// --authorization-mode is checked with upstream's messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupsAuthorizer, UnionAuthorizer, type Authorizer } from '../../../src/auth/authz/authorizer.js';
import { authorizationOptionsProblem, badAuthorizationMode } from '../../../src/auth/authz/modes.js';
import type { Attributes, Decision } from '../../../src/machinery/authorization.js';
import { parseFlags, FlagError } from '../../../src/cli/flags.js';

const attrs = (username: string, groups: string[] = []): Attributes => ({
  user: { username, groups }, verb: 'get', isResourceRequest: true, path: '/api/v1/namespaces/a/secrets/s',
  apiGroup: '', apiVersion: 'v1', resource: 'secrets', namespace: 'a', name: 's',
});

class Fixed implements Authorizer {
  asked = 0;
  constructor(readonly name: string, private readonly answer: Decision) {}
  authorize(): Decision { this.asked++; return this.answer; }
}

test('the first module with an opinion decides; later ones are not asked', async () => {
  const deny = new Fixed('deny', { decision: 'deny', reason: 'no' });
  const allow = new Fixed('allow', { decision: 'allow', reason: '' });
  const union = new UnionAuthorizer([new Fixed('quiet', { decision: 'no-opinion', reason: 'not mine' }), deny, allow]);
  assert.deepEqual(await union.authorize(attrs('u')), { decision: 'deny', reason: 'no' });
  assert.equal(allow.asked, 0);
});

test('when every module abstains, the reasons and evaluation errors are joined', async () => {
  const union = new UnionAuthorizer([
    new Fixed('a', { decision: 'no-opinion', reason: 'first', evaluationError: 'broken' }),
    new Fixed('b', { decision: 'no-opinion', reason: 'second' }),
  ]);
  assert.deepEqual(await union.authorize(attrs('u')), { decision: 'no-opinion', reason: 'first\nsecond', evaluationError: 'broken' });
});

test('system:masters is allowed before any mode is asked; others are not', async () => {
  const union = new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), new AlwaysDenyAuthorizer()]);
  assert.equal((await union.authorize(attrs('root', ['system:masters']))).decision, 'allow');
  const denied = await union.authorize(attrs('jane', ['system:authenticated']));
  assert.equal(denied.decision, 'no-opinion');
  assert.equal(denied.reason, 'Everything is forbidden.');
});

test('AlwaysDeny abstains as upstream, so a module after it may still allow', async () => {
  const union = new UnionAuthorizer([new AlwaysDenyAuthorizer(), new AlwaysAllowAuthorizer()]);
  assert.equal((await union.authorize(attrs('jane'))).decision, 'allow');
});

test('rules: AlwaysAllow lists everything, AlwaysDeny nothing, the union adds them up', async () => {
  const union = new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), new AlwaysDenyAuthorizer(), new AlwaysAllowAuthorizer()]);
  const rules = await union.rulesFor({ username: 'jane', groups: [] }, 'default');
  assert.deepEqual(rules.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }]);
  assert.deepEqual(rules.nonResourceRules, [{ verbs: ['*'], nonResourceURLs: ['*'] }]);
  assert.equal(rules.incomplete, false);
});

test('modes: unknown, repeated, and files without their mode are refused', () => {
  assert.equal(badAuthorizationMode('RBAC'), undefined);
  assert.match(badAuthorizationMode('Magic')!, /authorization-mode "Magic" is not a valid mode/);
  assert.equal(badAuthorizationMode('Node'), undefined);
  assert.equal(authorizationOptionsProblem({ modes: ['RBAC', 'RBAC'] }), 'authorization-mode "RBAC,RBAC" has mode specified more than once');
  assert.equal(authorizationOptionsProblem({ modes: ['ABAC'] }), 'authorization-mode ABAC\'s authorization policy file not passed');
  assert.equal(authorizationOptionsProblem({ modes: ['RBAC'], policyFile: 'p' }), 'cannot specify --authorization-policy-file without mode ABAC');
  assert.equal(authorizationOptionsProblem({ modes: ['Webhook'] }), 'authorization-mode Webhook\'s authorization config file not passed');
  assert.equal(authorizationOptionsProblem({ modes: ['RBAC'], webhookConfigFile: 'w' }), 'cannot specify --authorization-webhook-config-file without mode Webhook');
  assert.equal(authorizationOptionsProblem({ modes: [] }), 'at least one authorization-mode must be passed');
  assert.equal(authorizationOptionsProblem({ modes: ['Webhook', 'ABAC'], policyFile: 'p', webhookConfigFile: 'w' }), undefined);
});

test('--authorization-mode takes a comma-separated list, Node among them', () => {
  const parsed = parseFlags(['--authorization-mode', 'Webhook,RBAC']);
  assert.ok('options' in parsed);
  assert.deepEqual(parsed.options.authorizationMode, ['Webhook', 'RBAC']);
  const withNode = parseFlags(['--authorization-mode=Node,RBAC']);
  assert.ok('options' in withNode);
  assert.deepEqual(withNode.options.authorizationMode, ['Node', 'RBAC']);
  assert.throws(() => parseFlags(['--authorization-mode=Nodes,RBAC']), (e: unknown) => e instanceof FlagError && /"Nodes" is not a valid mode/.test(e.message));
});
