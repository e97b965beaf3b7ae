// A custom resource served at two versions converted by a real HTTPS
// conversion webhook started here (its own CA, given as caBundle): v1 is
// stored (spec.color), v2 names it spec.colour. Reads, lists (one review
// for the whole list), watches, creates and patches at v2 go through the
// webhook; a failing or unreachable webhook is a 500 naming it and nothing
// stored changes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { startWebhookServer, type TestWebhookServer, type WebhookBehaviour } from '../support/webhook.js';
import { renameKeys } from '../../src/machinery/ownkeys.js';
import { crdPath, widgetGroup } from '../support/crds.js';

let s: TestServer;
let hook: TestWebhookServer;
const v1 = `/apis/${widgetGroup}/v1/namespaces/default/things`;
const v2 = `/apis/${widgetGroup}/v2/namespaces/default/things`;

/** Renames spec fields between the versions, as a conversion webhook written for upstream answers (its group name). */
const converting: WebhookBehaviour = (review) => {
  const { uid, desiredAPIVersion, objects } = review.request;
  const toV2 = desiredAPIVersion.endsWith('/v2');
  const convertedObjects = objects.map((o: any) => ({
    ...o, apiVersion: desiredAPIVersion,
    spec: o.spec && renameKeys(o.spec, toV2 ? { color: 'colour' } : { colour: 'color' }),
  }));
  return { status: 200, raw: JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, convertedObjects, result: { status: 'Success' } } }) };
};

const failing: WebhookBehaviour = (review) => ({
  status: 200, raw: JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Failure', message: 'colours are hard' } } }),
});

function schema(field: string) {
  return { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'string' } } } } } };
}

before(async () => {
  s = await startTestServer();
  hook = await startWebhookServer();
  hook.on('/convert', converting);
  const made = await s.client.post(crdPath, {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `things.${widgetGroup}` },
    spec: {
      group: widgetGroup, scope: 'Namespaced', names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: schema('color') }, { name: 'v2', served: true, storage: false, schema: schema('colour') }],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url('/convert'), caBundle: hook.caBundle } } },
    },
  });
  assert.equal(made.status, 201, made.text);
  await eventually('v2 served', async () => ((await s.client.get(v2)).status === 200 ? true : undefined));
});
after(async () => { await s.close(); await hook.close(); });

test('reads, lists, watches and writes at a version converted by the webhook', async () => {
  const made = await s.client.post(v2, { apiVersion: `${widgetGroup}/v2`, kind: 'Thing', metadata: { name: 't1' }, spec: { colour: 'teal' } });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual([made.json.apiVersion, made.json.spec], [`${widgetGroup}/v2`, { colour: 'teal' }]);
  const stored = await s.client.get(`${v1}/t1`);
  assert.deepEqual(stored.json.spec, { color: 'teal' }, 'stored in v1\'s shape');
  const review = hook.callsTo('/convert').at(-1)!.review;
  assert.equal(review.kind, 'ConversionReview');
  assert.equal(review.request.desiredAPIVersion, `${widgetGroup}/v2`);

  await s.client.post(v1, { apiVersion: `${widgetGroup}/v1`, kind: 'Thing', metadata: { name: 't2' }, spec: { color: 'plum' } });
  const before = hook.callsTo('/convert').length;
  const list = await s.client.get(v2);
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(list.json.items.map((i: any) => i.spec.colour), ['teal', 'plum']);
  assert.equal(hook.callsTo('/convert').length, before + 1, 'one review for the whole list');
  assert.equal(hook.callsTo('/convert').at(-1)!.review.request.objects.length, 2);

  const patched = await s.client.send('PATCH', `${v2}/t2`, { raw: '{"spec":{"colour":"gold"}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual((await s.client.get(`${v1}/t2`)).json.spec, { color: 'gold' });

  const applied = await s.client.send('PATCH', `${v2}/t3?fieldManager=tests`, {
    raw: JSON.stringify({ apiVersion: `${widgetGroup}/v2`, kind: 'Thing', metadata: { name: 't3' }, spec: { colour: 'navy' } }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  assert.equal(applied.status, 201, applied.text);
  const reapplied = await s.client.send('PATCH', `${v2}/t3?fieldManager=tests`, {
    raw: JSON.stringify({ apiVersion: `${widgetGroup}/v2`, kind: 'Thing', metadata: { name: 't3' }, spec: { colour: 'ruby' } }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  assert.equal(reapplied.status, 200, reapplied.text);
  assert.deepEqual(reapplied.json.spec, { colour: 'ruby' });
  assert.deepEqual((await s.client.get(`${v1}/t3`)).json.spec, { color: 'ruby' }, 'server-side apply at v2 stored in v1\'s shape');

  const watch = await s.client.watch(`${v2}?watch=1&resourceVersion=${reapplied.json.metadata.resourceVersion}`);
  try {
    await s.client.send('PATCH', `${v1}/t2`, { raw: '{"spec":{"color":"jade"}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
    const [event] = await watch.waitFor(1);
    assert.deepEqual([event.type, event.object.apiVersion, event.object.spec], ['MODIFIED', `${widgetGroup}/v2`, { colour: 'jade' }]);
  } finally {
    watch.close();
  }
});

test('a failing webhook is a 500 naming it; nothing stored changes', async () => {
  hook.on('/convert', failing);
  try {
    const got = await s.client.get(`${v2}/t1`);
    assert.equal(got.status, 500, got.text);
    assert.equal(got.json.reason, 'InternalError');
    assert.equal(got.json.message, `Internal error occurred: conversion webhook for ${widgetGroup}/v1, Kind=Thing returned failure: colours are hard`);
    const write = await s.client.put(`${v2}/t1`, { apiVersion: `${widgetGroup}/v2`, kind: 'Thing', metadata: { name: 't1' }, spec: { colour: 'red' } });
    assert.equal(write.status, 500, write.text);
    assert.match(write.json.message, new RegExp(`conversion webhook for ${widgetGroup}/v2, Kind=Thing returned failure: colours are hard`));
    assert.deepEqual((await s.client.get(`${v1}/t1`)).json.spec, { color: 'teal' }, 'the stored version answers without the webhook');
  } finally {
    hook.on('/convert', converting);
  }
  const port = hook.port;
  await hook.close();
  const down = await s.client.get(`${v2}/t1`);
  assert.equal(down.status, 500, down.text);
  assert.match(down.json.message, new RegExp(`^Internal error occurred: conversion webhook for ${widgetGroup}/v1, Kind=Thing failed: Post "https://127.0.0.1:${port}/convert\\?timeout=30s": `));
  hook = await startWebhookServer();
});
