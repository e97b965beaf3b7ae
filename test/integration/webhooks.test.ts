// Admission webhooks end to end: a real server over HTTPS calling real HTTPS
// webhooks (with a CA of their own) as users configure them with kubectl or
// the API. Each test keeps to its own namespaces through namespaceSelector
// and waits until its configuration has reached the server's informer by
// probing with dry runs (never by sleeping).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertStatus } from '../support/hostile.js';
import {
  active as activeHook, allow, configMaps, configure as configureHooks, deny, eventually, labelledNamespace, patchWith, setLabel,
  unconfigure as unconfigureHooks, webhookEntry, webhookSuite, type ConfigurationKind,
} from '../support/webhook.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { toStoredBytes } from '../../src/registry/objects.js';

const suite = webhookSuite();

const group = vocabulary.admissionRegistrationGroup;
const apiVersion = `${group}/v1`;
const cms = configMaps;
const scene = suite.scene;
const namespace = (name: string, labels?: Record<string, string>) => labelledNamespace(scene(), name, labels);
const webhook = (name: string, path: string, namespaceLabel: string, extra: Record<string, unknown> = {}) => webhookEntry(scene(), name, path, namespaceLabel, extra);
const configure = (which: ConfigurationKind, name: string, ...webhooks: Record<string, unknown>[]) => configureHooks(scene(), which, name, ...webhooks);
const unconfigure = (which: ConfigurationKind, name: string) => unconfigureHooks(scene(), which, name);
/** Dry-run creates in `ns` until the webhook at `path` has been called: its configuration is in effect. */
const active = (path: string, ns: string, labels: Record<string, string> = {}) => activeHook(scene(), path, cms(ns), { metadata: { labels }, data: {} });

test('a mutating webhook configured with kubectl adds a label with a JSON patch; the review carries the whole request', async () => {
  const ns = await namespace('mutated');
  suite.hooks.on('/label', patchWith((review) => setLabel(review.request.object, 'stamped', review.request.operation.toLowerCase())));
  const manifest = JSON.stringify({ apiVersion, kind: 'MutatingWebhookConfiguration', metadata: { name: 'stamper' }, webhooks: [webhook('stamp.example.com', '/label', ns)] });
  const applied = await suite.server.kubectl(['apply', '-f', '-'], manifest);
  assert.equal(applied.code, 0, applied.stderr);
  await active('/label', ns);

  const created = await suite.server.client.post(cms(ns), { metadata: { name: 'cm1', labels: { mine: 'yes' } }, data: { a: 'b' } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.metadata.labels, { mine: 'yes', stamped: 'create' });
  assert.deepEqual((await suite.server.client.get(`${cms(ns)}/cm1`)).json.metadata.labels, { mine: 'yes', stamped: 'create' }, 'stored with the label');

  const review = suite.hooks.callsTo('/label').at(-1)!.review;
  assert.equal(review.apiVersion, `${vocabulary.admissionGroup}/v1`);
  const request = review.request;
  assert.match(request.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.deepEqual(request.resource, { group: '', version: 'v1', resource: 'configmaps' });
  assert.deepEqual(request.requestKind, request.kind);
  assert.deepEqual(request.requestResource, request.resource);
  assert.equal(request.name, 'cm1');
  assert.equal(request.namespace, ns);
  assert.equal(request.operation, 'CREATE');
  assert.equal(request.userInfo.username, 'admin');
  assert.ok(request.userInfo.groups.includes('system:masters'));
  assert.deepEqual(request.object.data, { a: 'b' });
  assert.equal(request.oldObject, null);
  assert.equal(request.dryRun, false);
  assert.equal(request.options.kind, 'CreateOptions');

  // kubectl's own writes go through the webhook too; an update shows the old object.
  const edited = await suite.server.kubectl(['label', 'configmap', 'cm1', '-n', ns, 'more=yes']);
  assert.equal(edited.code, 0, edited.stderr);
  const update = suite.hooks.callsTo('/label').at(-1)!.review.request;
  assert.equal(update.operation, 'UPDATE');
  assert.equal(update.options.kind, 'PatchOptions');
  assert.equal(update.oldObject.metadata.labels.stamped, 'create');
  const stored = (await suite.server.client.get(`${cms(ns)}/cm1`)).json;
  assert.equal(stored.metadata.labels.stamped, 'update');
  // As upstream, managed fields are worked out before mutating admission: what the webhook adds belongs to no manager.
  const owners = stored.metadata.managedFields.filter((e: any) => e.fieldsV1?.['f:metadata']?.['f:labels']);
  assert.deepEqual(owners.map((e: any) => Object.keys(e.fieldsV1['f:metadata']['f:labels']).sort()), [['.', 'f:mine'], ['f:more']]);
  await unconfigure('mutating', 'stamper');
});

test('a validating webhook rejects with its own code and message; /metrics counts the rejection', async () => {
  const ns = await namespace('guarded');
  suite.hooks.on('/guard', (review, call) => (review.request.object.data?.ok === 'yes' ? allow() : deny({ code: 418, message: 'data.ok must be yes' }))(review, call));
  await configure('validating', 'guard', webhook('guard.example.com', '/guard', ns));
  await active('/guard', ns);

  const refused = await suite.server.client.post(cms(ns), { metadata: { name: 'bad' }, data: { ok: 'no' } });
  assertStatus(refused, 418, 'Forbidden');
  assert.equal(refused.json.message, 'configmaps "bad" is forbidden: admission webhook "guard.example.com" denied the request: data.ok must be yes');
  assert.deepEqual(refused.json.details, { name: 'bad', kind: 'configmaps' });
  assert.equal((await suite.server.client.get(`${cms(ns)}/bad`)).status, 404, 'nothing stored');
  assert.equal((await suite.server.client.post(cms(ns), { metadata: { name: 'good' }, data: { ok: 'yes' } })).status, 201);

  const metrics = await suite.server.client.get('/metrics');
  assert.equal(metrics.status, 200);
  assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const line = /^apiserver_admission_webhook_rejection_count\{name="guard\.example\.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="418"\} (\d+)$/m.exec(metrics.text);
  assert.ok(line, 'the rejection is counted');
  assert.ok(Number(line[1]) >= 2, 'the probe and the real request'); // the dry-run probe carried no data: rejected too
  for (const name of ['apiserver_admission_webhook_admission_duration_seconds_bucket', 'apiserver_admission_step_admission_duration_seconds_bucket', 'process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes']) {
    assert.match(metrics.text, new RegExp(`^${name}`, 'm'), name);
  }
  await unconfigure('validating', 'guard');
});

test('namespaceSelector and objectSelector pick which writes a webhook sees', async () => {
  const on = await namespace('picked', { suite: 'picked', team: 'a' });
  const off = await namespace('skipped', { suite: 'picked', team: 'b' });
  await configure('validating', 'picky', webhook('picky.example.com', '/picky', 'picked', {
    namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] },
    objectSelector: { matchLabels: { watched: 'yes' } },
  }));
  await active('/picky', on, { watched: 'yes' });
  const seen = () => suite.hooks.callsTo('/picky').filter((c) => !c.review.request.dryRun).map((c) => `${c.review.request.namespace}/${c.review.request.name}`);
  for (const [ns, name, labels] of [[on, 'w1', { watched: 'yes' }], [on, 'u1', {}], [off, 'w2', { watched: 'yes' }], [off, 'u2', {}]] as const) {
    assert.equal((await suite.server.client.post(cms(ns), { metadata: { name, labels }, data: {} })).status, 201);
  }
  // Removing the label is still seen: the old object matches.
  const unlabelled = await suite.server.client.send('PATCH', `${cms(on)}/w1`, { raw: JSON.stringify({ metadata: { labels: null } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(unlabelled.status, 200, unlabelled.text);
  assert.deepEqual(seen(), [`${on}/w1`, `${on}/w1`]);
  await unconfigure('validating', 'picky');
});

test('reinvocationPolicy IfNeeded: a webhook is called again after a later webhook changed the object', async () => {
  const ns = await namespace('reinvoked');
  // Idempotent, as mutating webhooks must be: it labels once.
  suite.hooks.on('/first', patchWith((review) => (review.request.object.metadata.labels?.first ? [] : setLabel(review.request.object, 'first', 'yes'))));
  suite.hooks.on('/second', patchWith((review) => setLabel(review.request.object, 'second', 'yes')));
  await configure('mutating', 'a-first', webhook('first.example.com', '/first', ns, { reinvocationPolicy: 'IfNeeded' }));
  await configure('mutating', 'b-second', webhook('second.example.com', '/second', ns));
  await active('/second', ns);
  const before = suite.hooks.calls.length;
  const r = await suite.server.client.post(cms(ns), { metadata: { name: 'twice' }, data: {} });
  assert.equal(r.status, 201, r.text);
  const calls = suite.hooks.calls.slice(before);
  assert.deepEqual(calls.map((c) => c.path), ['/first', '/second', '/first']);
  assert.deepEqual(calls[2]!.review.request.object.metadata.labels, { first: 'yes', second: 'yes' }, 'the second call sees the later change');
  assert.deepEqual(r.json.metadata.labels, { first: 'yes', second: 'yes' });
  await unconfigure('mutating', 'a-first');
  await unconfigure('mutating', 'b-second');
});

test('a webhook that hangs past its timeout: 500 under Fail, the write goes on under Ignore', async () => {
  const ns = await namespace('slow');
  await configure('validating', 'slow', webhook('slow.example.com', '/slow', ns), webhook('slow-ignored.example.com', '/slow-ignored', ns, { failurePolicy: 'Ignore', namespaceSelector: { matchLabels: { suite: 'slow-ignored' } } }));
  const ignoredNs = await namespace('slow-ignored');
  await active('/slow', ns);
  await active('/slow-ignored', ignoredNs);
  suite.hooks.on('/slow', () => ({ hang: true }));
  suite.hooks.on('/slow-ignored', () => ({ hang: true }));

  const failed = await suite.server.client.post(cms(ns), { metadata: { name: 'late' }, data: {} });
  assertStatus(failed, 500, 'InternalError');
  assert.match(failed.json.message, /^Internal error occurred: failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded$/);
  assert.equal((await suite.server.client.get(`${cms(ns)}/late`)).status, 404);

  const passed = await suite.server.client.post(cms(ignoredNs), { metadata: { name: 'late' }, data: {} });
  assert.equal(passed.status, 201, passed.text);
  await unconfigure('validating', 'slow');
});

test('an answer with another uid is a failed call: 500 under Fail', async () => {
  const ns = await namespace('confused');
  suite.hooks.on('/confused', () => ({ response: { uid: randomUUID(), allowed: true } }));
  await configure('validating', 'confused', webhook('confused.example.com', '/confused', ns));
  await active('/confused', ns);
  const r = await suite.server.client.post(cms(ns), { metadata: { name: 'x' }, data: {} });
  assertStatus(r, 500, 'InternalError');
  assert.match(r.json.message, /^Internal error occurred: failed calling webhook "confused\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "[0-9a-f-]{36}"$/);
  assert.deepEqual(r.json.details.causes, [{ message: r.json.message.replace('Internal error occurred: ', '') }]);
  await unconfigure('validating', 'confused');
});

test('a dry run that would call a webhook with side effects fails with 400; NoneOnDryRun webhooks are told it is a dry run', async () => {
  const ns = await namespace('dry');
  // v1 no longer accepts sideEffects Some; a configuration stored by an older server still has it.
  const store = suite.server.registry.store(group, 'v1', 'validatingwebhookconfigurations')!;
  const stored = { apiVersion, kind: 'ValidatingWebhookConfiguration', metadata: { name: 'legacy', uid: randomUUID(), creationTimestamp: '2020-01-01T00:00:00Z', generation: 1 }, webhooks: [webhook('legacy.example.com', '/legacy', ns, { sideEffects: 'Some' })] };
  await suite.server.registry.backend.create(store.key(undefined, 'legacy'), toStoredBytes(stored));
  let answer: Awaited<ReturnType<typeof suite.server.client.post>> | undefined;
  await eventually('the legacy configuration is in effect', async () => {
    answer = await suite.server.client.post(`${cms(ns)}?dryRun=All`, { metadata: { name: 'x' }, data: {} });
    return answer.status === 400;
  });
  assert.equal(answer!.json.message, 'admission webhook "legacy.example.com" does not support dry run');
  assert.equal(suite.hooks.callsTo('/legacy').length, 0, 'the webhook was not called');
  assert.equal((await suite.server.client.post(cms(ns), { metadata: { name: 'real' }, data: {} })).status, 201, 'a real write calls it');
  assert.equal(suite.hooks.callsTo('/legacy').length, 1);
  await unconfigure('validating', 'legacy');

  await configure('validating', 'careful', webhook('careful.example.com', '/careful', ns, { sideEffects: 'NoneOnDryRun' }));
  await active('/careful', ns);
  const review = suite.hooks.callsTo('/careful').at(-1)!.review.request;
  assert.equal(review.dryRun, true);
  assert.deepEqual(review.options.dryRun, ['All']);
  await unconfigure('validating', 'careful');
});

test('a deleted configuration stops being called; writes of configurations never reach webhooks', async () => {
  const ns = await namespace('forgotten');
  suite.hooks.on('/wall', deny({ message: 'no' }));
  await configure('validating', 'wall', { ...webhook('wall.example.com', '/wall', ns), rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }], namespaceSelector: {} });
  await active('/wall', ns);
  assertStatus(await suite.server.client.post(cms(ns), { metadata: { name: 'x' }, data: {} }), 403, 'Forbidden');
  // The wall rejects everything, its own configuration's deletion excepted.
  await unconfigure('validating', 'wall');
  await eventually('the configuration is gone from the informer', async () => (await suite.server.client.post(`${cms(ns)}?dryRun=All`, { metadata: { name: 'x' }, data: {} })).status === 201);
});
