// What sees a custom object at a version its conversion webhook converts:
// as upstream, every road sees the webhook's answer, never the stored object
// relabelled. v1 (stored) names the field spec.color, v2 spec.colour; a real
// HTTPS server started here converts between them, and is also the
// admission webhooks. Covered: the ConversionReview's group (upstream's,
// answers taken in either), field selectors on v2's selectableFields in
// lists and watches, managed fields of writes at v2 and of managers at the
// other version, admission reviews and match conditions at v2, and the
// in-process client (controllers) reading and watching at v2.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { allow, configure, startWebhookServer, type TestWebhookServer, type WebhookBehaviour } from '../support/webhook.js';
import { renameKeys } from '../../src/machinery/ownkeys.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { crdPath, widgetGroup } from '../support/crds.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';

let s: TestServer;
let hook: TestWebhookServer;
const v1 = `/apis/${widgetGroup}/v1/namespaces/default/gadgets`;
const v2 = `/apis/${widgetGroup}/v2/namespaces/default/gadgets`;

/** Answers a ConversionReview under `group`, renaming spec.color and spec.colour. */
const converting = (group = 'apiextensions.k8s.io', kind = 'ConversionReview'): WebhookBehaviour => (review) => {
  const { uid, desiredAPIVersion, objects } = review.request;
  const toV2 = desiredAPIVersion.endsWith('/v2');
  const convertedObjects = objects.map((o: any) => ({
    ...o, apiVersion: desiredAPIVersion,
    spec: o.spec && renameKeys(o.spec, toV2 ? { color: 'colour' } : { colour: 'color' }),
  }));
  return { status: 200, raw: JSON.stringify({ apiVersion: `${group}/v1`, kind, response: { uid, convertedObjects, result: { status: 'Success' } } }) };
};

function version(name: string, field: string, storage: boolean) {
  return {
    name, served: true, storage, selectableFields: [{ jsonPath: `.spec.${field}` }],
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'string' } } } } } },
  };
}

const gadget = (name: string, color: string) => ({ apiVersion: `${widgetGroup}/v1`, kind: 'Gadget', metadata: { name }, spec: { color } });
const mergePatch = (body: unknown) => ({ raw: JSON.stringify(body), headers: { 'Content-Type': 'application/merge-patch+json' } });
const applyPatch = (body: unknown) => ({ raw: JSON.stringify(body), headers: { 'Content-Type': 'application/apply-patch+yaml' } });

before(async () => {
  s = await startTestServer();
  hook = await startWebhookServer();
  hook.on('/convert', converting());
  const made = await s.client.post(crdPath, {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `gadgets.${widgetGroup}` },
    spec: {
      group: widgetGroup, scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [version('v1', 'color', true), version('v2', 'colour', false)],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url('/convert'), caBundle: hook.caBundle } } },
    },
  });
  assert.equal(made.status, 201, made.text);
  await eventually('v2 served', async () => ((await s.client.get(v2)).status === 200 ? true : undefined));
});
after(async () => { await s.close(); await hook.close(); });

test('the ConversionReview goes out in upstream\'s group; an answer in either group is taken, another kind is not', async () => {
  const made = await s.client.post(v2, { apiVersion: `${widgetGroup}/v2`, kind: 'Gadget', metadata: { name: 'g0' }, spec: { colour: 'teal' } });
  assert.equal(made.status, 201, made.text);
  const review = hook.callsTo('/convert').at(-1)!.review;
  assert.deepEqual([review.apiVersion, review.kind], ['apiextensions.k8s.io/v1', 'ConversionReview']);
  try {
    hook.on('/convert', converting(vocabulary.apiextensionsGroup));
    const got = await s.client.get(`${v2}/g0`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json.spec, { colour: 'teal' });
    hook.on('/convert', converting('apiextensions.k8s.io', 'AdmissionReview'));
    const refused = await s.client.get(`${v2}/g0`);
    assert.equal(refused.status, 500, refused.text);
    assert.equal(refused.json.message, `Internal error occurred: conversion webhook for ${widgetGroup}/v1, Kind=Gadget failed: expected ${vocabulary.apiextensionsGroup}/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview`);
  } finally {
    hook.on('/convert', converting());
  }
});

test('field selectors on a version\'s selectableFields read the object its webhook converted, in lists and watches', async () => {
  for (const [name, color] of [['f1', 'teal'], ['f2', 'plum']]) assert.equal((await s.client.post(v1, gadget(name, color))).status, 201);
  const teal = await s.client.get(`${v2}?fieldSelector=spec.colour%3Dteal`);
  assert.equal(teal.status, 200, teal.text);
  assert.deepEqual(teal.json.items.map((i: any) => [i.metadata.name, i.spec.colour]), [['f1', 'teal'], ['g0', 'teal']]);
  const notTeal = await s.client.get(`${v2}?fieldSelector=spec.colour!%3Dteal`);
  assert.deepEqual(notTeal.json.items.map((i: any) => i.metadata.name), ['f2']);

  const watch = await s.client.watch(`${v2}?watch=1&fieldSelector=spec.colour%3Dplum&resourceVersion=${teal.json.metadata.resourceVersion}`);
  try {
    await s.client.send('PATCH', `${v1}/f1`, mergePatch({ spec: { color: 'plum' } }));
    await s.client.send('PATCH', `${v1}/f2`, mergePatch({ spec: { color: 'teal' } }));
    const events = await watch.waitFor(2);
    assert.deepEqual(events.map((e: any) => [e.type, e.object.metadata.name, e.object.spec.colour]), [['ADDED', 'f1', 'plum'], ['DELETED', 'f2', 'teal']]);
  } finally {
    watch.close();
  }
});

test('managed fields are worked out in the version each manager wrote, on objects the webhook converted', async () => {
  assert.equal((await s.client.send('PATCH', `${v1}/m1?fieldManager=alice`, applyPatch(gadget('m1', 'red')))).status, 201);
  const painted = await s.client.send('PATCH', `${v2}/m1?fieldManager=painter`, mergePatch({ spec: { colour: 'gold' } }));
  assert.equal(painted.status, 200, painted.text);
  const entries = Object.fromEntries(painted.json.metadata.managedFields.map((e: any) => [e.manager, [e.apiVersion, JSON.stringify(e.fieldsV1['f:spec'])]]));
  assert.deepEqual(entries, {
    painter: [`${widgetGroup}/v2`, '{"f:colour":{}}'],
  }, 'painter changed spec.colour at v2 and took it from alice, who owned spec.color at v1');

  const conflict = await s.client.send('PATCH', `${v1}/m1?fieldManager=alice`, applyPatch(gadget('m1', 'red')));
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal(conflict.json.message, `Apply failed with 1 conflict: conflict with "painter" using ${widgetGroup}/v2: .spec.colour`);

  const mixed = await s.client.send('PATCH', `${v2}/m1?fieldManager=bob`, mergePatch({ metadata: { labels: { by: 'bob' } } }));
  assert.equal(mixed.status, 200, mixed.text);
  assert.deepEqual(mixed.json.metadata.managedFields.map((e: any) => e.manager).sort(), ['bob', 'painter'], 'painter keeps spec.colour through a write that did not change it');
});

test('admission webhooks matched at the converted version see (and patch) the object the webhook converted', async () => {
  hook.on('/validate', allow());
  hook.on('/mutate', (review) => ({
    response: {
      uid: review.request.uid, allowed: true, patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(review.request.object.spec.colour === 'teal' ? [{ op: 'replace', path: '/spec/colour', value: 'amber' }] : [])).toString('base64'),
    },
  }));
  const rules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [widgetGroup], apiVersions: ['v2'], resources: ['gadgets'] }];
  const common = { rules, matchPolicy: 'Equivalent', sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 5 };
  await configure({ client: s.client, hooks: hook }, 'validating', 'gadgets-v2', {
    ...common, name: 'validate.gadgets.example.com', clientConfig: { url: hook.url('/validate'), caBundle: hook.caBundle },
    matchConditions: [{ name: 'has-colour', expression: 'has(object.spec.colour)' }],
  });
  await configure({ client: s.client, hooks: hook }, 'mutating', 'gadgets-v2', {
    ...common, name: 'mutate.gadgets.example.com', clientConfig: { url: hook.url('/mutate'), caBundle: hook.caBundle },
  });
  await eventually('the webhooks are called', async () => {
    await s.client.post(`${v1}?dryRun=All`, gadget(`probe-${Date.now()}`, 'red'));
    return hook.callsTo('/validate').length > 0;
  });

  const made = await s.client.post(v1, gadget('a1', 'teal'));
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json.spec, { color: 'amber' }, 'the mutating webhook\'s patch at v2, converted back to v1');
  const mutated = hook.callsTo('/mutate').at(-1)!.review.request;
  assert.deepEqual([mutated.kind.version, mutated.object.apiVersion, mutated.object.spec], ['v2', `${widgetGroup}/v2`, { colour: 'teal' }]);
  const validated = hook.callsTo('/validate').at(-1)!.review.request;
  assert.deepEqual([validated.object.apiVersion, validated.object.spec], [`${widgetGroup}/v2`, { colour: 'amber' }]);

  const updated = await s.client.send('PATCH', `${v1}/a1`, mergePatch({ spec: { color: 'jade' } }));
  assert.equal(updated.status, 200, updated.text);
  const update = hook.callsTo('/validate').at(-1)!.review.request;
  assert.deepEqual([update.operation, update.object.spec, update.oldObject.spec], ['UPDATE', { colour: 'jade' }, { colour: 'amber' }]);
});

test('the in-process client reads, lists and watches at the converted version through the webhook', async () => {
  const client = new InProcessClient(s.registry, 'tests');
  const type = { group: widgetGroup, version: 'v2', resource: 'gadgets', kind: 'Gadget', namespaced: true, verbs: [] };
  assert.deepEqual((await client.get(type, 'default', 'f1'))?.spec, { colour: 'plum' });
  const list = await client.list(type, 'default');
  assert.ok(list.items.length > 0 && list.items.every((i) => i.apiVersion === `${widgetGroup}/v2` && i.spec?.color === undefined), JSON.stringify(list.items[0]));
  const seen: any[] = [];
  const watch = await client.watch(type, 'default', list.resourceVersion, { onEvents: (events) => seen.push(...events), onEnd: () => {} });
  try {
    assert.equal((await s.client.send('PATCH', `${v1}/f2`, mergePatch({ spec: { color: 'rose' } }))).status, 200);
    await eventually('the change seen', async () => (seen.length > 0 ? true : undefined));
    assert.deepEqual([seen[0].type, seen[0].object.metadata.name, seen[0].object.spec], ['MODIFIED', 'f2', { colour: 'rose' }]);
  } finally {
    watch.stop();
  }
});
