// Admission webhook matchConditions end to end: a real server calling a
// real HTTPS webhook only when every CEL condition over the request holds;
// a condition that fails to evaluate follows the webhook's failurePolicy;
// `authorizer` checks asked of the server's RBAC.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertStatus } from '../support/hostile.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import {
  active, configMaps as cms, configurations, configure, deny, eventually, labelledNamespace, unconfigure, webhookEntry, webhookSuite,
} from '../support/webhook.js';

const suite = webhookSuite();
const scene = suite.scene;
const realCalls = (path: string) => suite.hooks.callsTo(path).filter((c) => !c.review.request.dryRun).map((c) => c.review.request.name);

test('a webhook is called only for requests whose matchConditions all hold', async () => {
  const ns = await labelledNamespace(scene(), 'conditioned');
  suite.hooks.on('/picky', deny({ code: 403, message: 'checked and refused' }));
  await configure(scene(), 'validating', 'conditions', webhookEntry(scene(), 'picky.example.com', '/picky', ns, {
    matchConditions: [
      { name: 'wants-check', expression: "has(object.data) && 'check' in object.data" },
      { name: 'from-admin', expression: "request.userInfo.username == 'admin' && request.operation in ['CREATE', 'UPDATE']" },
      { name: 'not-exempt', expression: "object.?metadata.?labels[?'exempt'].orValue('no') != 'yes'" },
    ],
  }));
  await active(scene(), '/picky', cms(ns), { data: { check: 'yes' } });

  const checked = await suite.server.client.post(cms(ns), { metadata: { name: 'checked' }, data: { check: 'yes' } });
  assertStatus(checked, 403, 'Forbidden');
  assert.equal(checked.json.message, 'configmaps "checked" is forbidden: admission webhook "picky.example.com" denied the request: checked and refused');

  const unchecked = await suite.server.client.post(cms(ns), { metadata: { name: 'unchecked' }, data: { other: 'x' } });
  assert.equal(unchecked.status, 201, 'the first condition is false: the webhook is skipped');
  const exempt = await suite.server.client.post(cms(ns), { metadata: { name: 'exempt', labels: { exempt: 'yes' } }, data: { check: 'yes' } });
  assert.equal(exempt.status, 201, 'the third condition is false');
  assert.deepEqual(realCalls('/picky'), ['checked'], 'only the matching request reached the webhook');
  await unconfigure(scene(), 'validating', 'conditions');
});

test('a condition that errors refuses the request under failurePolicy Fail and skips the webhook under Ignore', async () => {
  const ns = await labelledNamespace(scene(), 'erring');
  suite.hooks.on('/fail', deny({ code: 403, message: 'never reached' }));
  suite.hooks.on('/ignore', deny({ code: 403, message: 'never reached either' }));
  const broken = { name: 'reads-missing', expression: "object.data.missing == 'x'" };
  await configure(scene(), 'validating', 'erring-fail', webhookEntry(scene(), 'fail.example.com', '/fail', ns, { matchConditions: [broken], failurePolicy: 'Fail' }));

  let refused: Awaited<ReturnType<typeof suite.server.client.post>> | undefined;
  await eventually('the condition is in effect', async () => {
    // Data of its own: an empty map is left out of the object, as upstream's typed encoding does (then `data` itself is missing).
    refused = await suite.server.client.post(cms(ns), { metadata: { name: 'refused' }, data: { present: 'y' } });
    return refused.status === 403;
  });
  assertStatus(refused!, 403, 'Forbidden');
  assert.equal(refused!.json.message, `configmaps "refused" is forbidden: expression 'object.data.missing == 'x'' resulted in error: no such key: missing`);
  await unconfigure(scene(), 'validating', 'erring-fail');

  await configure(scene(), 'validating', 'erring-ignore', webhookEntry(scene(), 'ignore.example.com', '/ignore', ns, {
    matchConditions: [broken, { name: 'always', expression: 'true' }], failurePolicy: 'Ignore',
  }));
  // The Fail configuration's deletion and this one's creation reach the informer in order: once a write passes, both are in effect.
  await eventually('the Fail configuration is gone', async () => (await suite.server.client.post(`${cms(ns)}?dryRun=All`, { metadata: { generateName: 'p-' }, data: {} })).status === 201);
  const passed = await suite.server.client.post(cms(ns), { metadata: { name: 'passed' }, data: {} });
  assert.equal(passed.status, 201, passed.text);
  assert.deepEqual(realCalls('/ignore'), [], 'the erring webhook is skipped');
  assert.deepEqual(realCalls('/fail'), []);
  await unconfigure(scene(), 'validating', 'erring-ignore');
});

test('a configuration with bad matchConditions is refused with upstream messages', async () => {
  const bad = await suite.server.client.post(configurations('validating'), {
    metadata: { name: 'bad-conditions' },
    webhooks: [webhookEntry(scene(), 'bad.example.com', '/bad', 'nowhere', {
      matchConditions: [{ name: 'a', expression: 'object.' }, { name: 'a', expression: 'true' }, { name: 'bad name!', expression: ' ' }],
    })],
  });
  assertStatus(bad, 422, 'Invalid');
  const causes: string[] = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  assert.match(causes[0]!, /^webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object\.": compilation failed: ERROR: <input>:1:8: Syntax error: mismatched input '<EOF>' expecting IDENTIFIER$/);
  assert.deepEqual(causes.slice(1), [
    'webhooks[0].matchConditions[1].name: Duplicate value: "a"',
    'webhooks[0].matchConditions[2].expression: Required value',
    'webhooks[0].matchConditions[2].name: Invalid value: "bad name!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
  ]);
});

test('authorizer checks in a condition: RBAC decides whether the webhook is called', async () => {
  const ns = await labelledNamespace(scene(), 'authorized');
  const client = suite.server.client;
  const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
  // Without a namespace the check asks about the whole cluster, as upstream: bob may create pods everywhere, carol only configmaps here.
  const grant = async (scope: string, kind: 'Role' | 'ClusterRole', user: string, resources: string[]) => {
    const binding = kind === 'Role' ? 'rolebindings' : 'clusterrolebindings';
    assert.equal((await client.post(`${rbac}${scope}/${kind === 'Role' ? 'roles' : 'clusterroles'}`, {
      metadata: { name: `conditions-${user}` }, rules: [{ apiGroups: [''], resources, verbs: ['create'] }],
    })).status, 201);
    assert.equal((await client.post(`${rbac}${scope}/${binding}`, {
      metadata: { name: `conditions-${user}` }, roleRef: { apiGroup: vocabulary.rbacGroup, kind, name: `conditions-${user}` },
      subjects: [{ apiGroup: vocabulary.rbacGroup, kind: 'User', name: user }],
    })).status, 201);
  };
  await grant('', 'ClusterRole', 'bob', ['pods', 'configmaps']);
  await grant(`/namespaces/${ns}`, 'Role', 'carol', ['configmaps']);
  suite.hooks.on('/authz', deny({ code: 403, message: 'pod creators are checked' }));
  await configure(scene(), 'validating', 'authz', webhookEntry(scene(), 'authz.example.com', '/authz', ns, {
    matchConditions: [
      { name: 'pod-creator', expression: "authorizer.group('').resource('pods').check('create').allowed()" },
      { name: 'may-write-this', expression: "authorizer.requestResource.check('create').allowed() && !authorizer.requestResource.check('create').errored()" },
    ],
  }));
  await active(scene(), '/authz', cms(ns));
  const as = (user: string) => ({ 'Impersonate-User': user });

  let bob: Awaited<ReturnType<typeof client.post>> | undefined;
  await eventually('RBAC knows bob', async () => {
    bob = await client.post(cms(ns), { metadata: { name: 'by-bob' }, data: {} }, as('bob'));
    return bob.status !== 403 || bob.json.message.includes('denied the request');
  });
  assertStatus(bob!, 403, 'Forbidden');
  assert.equal(bob!.json.message, 'configmaps "by-bob" is forbidden: admission webhook "authz.example.com" denied the request: pod creators are checked');

  let carol: Awaited<ReturnType<typeof client.post>> | undefined;
  await eventually('RBAC knows carol', async () => {
    carol = await client.post(cms(ns), { metadata: { name: 'by-carol' }, data: {} }, as('carol'));
    return carol.status !== 403;
  });
  assert.equal(carol!.status, 201, 'carol may not create pods: the webhook is skipped');
  assert.deepEqual(realCalls('/authz'), ['by-bob'], 'only the pod creator reached the webhook');
  await unconfigure(scene(), 'validating', 'authz');
});
