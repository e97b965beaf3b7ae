// The `authorizer` of webhook match conditions against a real in-process
// authorizer (ABAC policies): which questions each form of check asks, the
// decision's accessors, the fixed cost of a check, and failing closed when
// no authorizer answers.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMatchConditions, conditionsMatch } from '../../../src/admission/webhook/conditions.js';
import { AbacAuthorizer, abacApiVersion, parsePolicyFile } from '../../../src/auth/authz/abac.js';
import type { Attributes } from '../../../src/machinery/authorization.js';
import { configMaps } from '../../../src/api/core/v1/index.js';
import { admissionRequest, rejection } from '../../support/admission.js';
import { loadCel } from '../../../src/api/validation/engines.js';

// CEL loads on first need (validation/engines.ts); these tests call the code under it directly.
await loadCel();

const policy = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: abacApiVersion, kind: 'Policy', spec });
const abac = new AbacAuthorizer(parsePolicyFile('policy.jsonl', [
  policy({ user: 'bob', namespace: '*', resource: 'pods', apiGroup: '*' }),
  policy({ user: 'system:serviceaccount:ops:deployer', namespace: 'ops', resource: 'deployments', apiGroup: 'apps' }),
  policy({ user: 'bob', nonResourcePath: '/healthz', readonly: true }),
].join('\n')));

function askingAbac() {
  const asked: Attributes[] = [];
  return { asked, authorize: (a: Attributes) => { asked.push(a); return abac.authorize(a); } };
}

const invocation = { resource: { group: '', version: 'v1', resource: 'configmaps' }, kind: { group: '', version: 'v1', kind: 'ConfigMap' } };
function requestBy(username: string) {
  const r = admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod' });
  r.user = { username, groups: ['system:authenticated'] };
  return r;
}

async function holds(expression: string, username = 'bob', authorize = askingAbac().authorize): Promise<boolean> {
  return conditionsMatch(compileMatchConditions([{ name: 'c', expression }]), 'Fail', invocation, requestBy(username), authorize);
}

describe('authorizer in match conditions', () => {
  test('a resource check asks for the group, resource and verb of the requesting user, cluster-wide unless a namespace is named', async () => {
    const { asked, authorize } = askingAbac();
    assert.equal(await holds("authorizer.group('').resource('pods').check('create').allowed()", 'bob', authorize), true);
    assert.deepEqual(asked.map((a) => [a.user.username, a.verb, a.apiGroup, a.resource, a.namespace, a.isResourceRequest]), [['bob', 'create', '', 'pods', undefined, true]]);
    assert.equal(await holds("authorizer.group('').resource('pods').check('create').allowed()", 'carol'), false);
    const scoped = askingAbac();
    await holds("authorizer.group('apps').resource('deployments').subresource('scale').namespace('ops').name('web').check('update').allowed()", 'bob', scoped.authorize);
    assert.deepEqual(scoped.asked.map((a) => [a.apiGroup, a.resource, a.subresource, a.namespace, a.name, a.verb]), [['apps', 'deployments', 'scale', 'ops', 'web', 'update']]);
  });

  test('requestResource is the request\'s own resource; path checks ask about a non-resource URL', async () => {
    const { asked, authorize } = askingAbac();
    assert.equal(await holds("!authorizer.requestResource.check('create').allowed() && authorizer.path('/healthz').check('get').allowed()", 'bob', authorize), true);
    assert.deepEqual(asked.map((a) => [a.isResourceRequest, a.resource ?? a.path, a.namespace, a.name, a.verb]), [
      [true, 'configmaps', 'prod', 'cm', 'create'],
      [false, '/healthz', undefined, undefined, 'get'],
    ]);
  });

  test('serviceAccount checks as that account, in its groups', async () => {
    const { asked, authorize } = askingAbac();
    assert.equal(await holds("authorizer.serviceAccount('ops', 'deployer').group('apps').resource('deployments').namespace('ops').check('create').allowed()", 'carol', authorize), true);
    assert.deepEqual([asked[0]!.user.username, asked[0]!.user.groups], ['system:serviceaccount:ops:deployer', ['system:serviceaccounts', 'system:serviceaccounts:ops']]);
  });

  test('the decision\'s reason and error; an authorizer that fails answers errored, and fails closed', async () => {
    assert.equal(await holds("authorizer.group('').resource('secrets').check('get').reason() == 'No policy matched.'", 'bob'), true);
    const broken = () => { throw new Error('webhook authorizer unreachable'); };
    assert.equal(await holds("authorizer.group('').resource('pods').check('create').errored() && authorizer.group('').resource('pods').check('create').error() == 'webhook authorizer unreachable'", 'bob', broken), true);
    assert.equal(await holds("authorizer.group('').resource('pods').check('create').allowed()", 'bob', broken), false, 'an errored check is not allowed');
  });

  test('each check costs 350,000: a third check in one expression exceeds the per-call limit and the request is refused', async () => {
    const three = "['pods', 'secrets', 'services'].all(r, !authorizer.group('').resource(r).check('get').allowed())";
    const err = await rejection(holds(three, 'carol'));
    assert.equal(err.toStatus().code, 403);
    assert.match(err.toStatus().message ?? '', /resulted in error: operation cancelled: actual cost limit exceeded$/);
    assert.equal(await holds("['pods', 'secrets'].all(r, !authorizer.group('').resource(r).check('get').allowed())", 'carol'), true);
  });

  test('without an authorizer every check is an error, and failurePolicy Fail refuses', async () => {
    const conditions = compileMatchConditions([{ name: 'c', expression: "authorizer.group('').resource('pods').check('create').allowed()" }]);
    assert.equal(await conditionsMatch(conditions, 'Ignore', invocation, requestBy('bob')), false);
    const err = await rejection(conditionsMatch(conditions, 'Fail', invocation, requestBy('bob')));
    assert.equal(err.toStatus().message, `configmaps "cm" is forbidden: expression 'authorizer.group('').resource('pods').check('create').allowed()' resulted in error: no authorizer is configured`);
  });
});
