// Admission of the creates a sub-resource answers without storing them
// (pods/eviction, pods/binding, bindings, serviceaccounts/token), as
// upstream's create handler: the webhook sees a CREATE of the request's own
// kind (an Eviction) on the URL's resource (pods, sub-resource eviction),
// and the writes the sub-resource then makes (the pod's delete, its node)
// are not admitted again. A real HTTPS validating webhook decides.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allow, configure, deny, eventually, unconfigure, webhookEntry, webhookSuite } from '../support/webhook.js';

const suite = webhookSuite();
const ns = '/api/v1/namespaces/default';
const createRule = (resources: string[], operations = ['CREATE']) => ({ rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources }], namespaceSelector: {} });
const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });

async function pod(name: string, nodeName?: string): Promise<void> {
  const made = await suite.server.client.post(`${ns}/pods`, { metadata: { name }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] } });
  assert.equal(made.status, 201, made.text);
}

test('a webhook on CREATE pods/eviction sees the Eviction and can refuse it; the pod stays', async () => {
  const s = suite.server;
  const scene = suite.scene();
  await pod('evicted');
  suite.hooks.on('/no-evictions', deny({ message: 'evictions are paused', code: 403 }));
  await configure(scene, 'validating', 'no-evictions', webhookEntry(scene, 'no-evictions.example.com', '/no-evictions', 'any', createRule(['pods/eviction'])));
  await eventually('the webhook refuses evictions', async () => (await s.client.post(`${ns}/pods/evicted/eviction`, eviction('evicted'))).status === 403);
  const refused = await s.client.post(`${ns}/pods/evicted/eviction`, eviction('evicted'));
  assert.equal(refused.json.message, 'pods "evicted" is forbidden: admission webhook "no-evictions.example.com" denied the request: evictions are paused');
  assert.equal((await s.client.get(`${ns}/pods/evicted`)).status, 200);

  const review = suite.hooks.callsTo('/no-evictions').at(-1)!.review.request;
  assert.equal(review.operation, 'CREATE');
  assert.deepEqual(review.kind, { group: 'policy', version: 'v1', kind: 'Eviction' });
  assert.deepEqual(review.resource, { group: '', version: 'v1', resource: 'pods' });
  assert.deepEqual(review.requestResource, { group: '', version: 'v1', resource: 'pods' });
  assert.equal(review.subResource, 'eviction');
  assert.equal(review.name, 'evicted');
  assert.equal(review.namespace, 'default');
  assert.equal(review.object.kind, 'Eviction');
  assert.equal(review.object.metadata.name, 'evicted');
  assert.equal(review.options.kind, 'CreateOptions');
  await unconfigure(scene, 'validating', 'no-evictions');
});

test('an eviction\'s own delete is not admitted again: a webhook refusing pod deletes does not stop it', async () => {
  const s = suite.server;
  const scene = suite.scene();
  await pod('going');
  await pod('kept');
  suite.hooks.on('/no-deletes', deny({ message: 'no deletes', code: 403 }));
  await configure(scene, 'validating', 'no-deletes', webhookEntry(scene, 'no-deletes.example.com', '/no-deletes', 'any', createRule(['pods'], ['DELETE'])));
  await eventually('plain deletes are refused', async () => (await s.client.delete(`${ns}/pods/kept`)).status === 403);
  const calls = suite.hooks.callsTo('/no-deletes').length;
  const evicted = await s.client.post(`${ns}/pods/going/eviction`, eviction('going'));
  assert.equal(evicted.status, 201, evicted.text);
  assert.equal((await s.client.get(`${ns}/pods/going`)).status, 404, 'an unscheduled pod goes at once');
  assert.equal(suite.hooks.callsTo('/no-deletes').length, calls);
  await unconfigure(scene, 'validating', 'no-deletes');
});

test('pods/binding and bindings are admitted as CREATEs of a Binding; the pod\'s update is not admitted again', async () => {
  const s = suite.server;
  const scene = suite.scene();
  await pod('unbound');
  suite.hooks.on('/bindings', (review, ...rest) => (review.request.object.target.name === 'forbidden-node'
    ? deny({ message: 'not on that node', code: 403 })(review, ...rest) : allow()(review, ...rest)));
  suite.hooks.on('/no-pod-updates', deny({ message: 'no pod updates', code: 403 }));
  await configure(scene, 'validating', 'bindings', webhookEntry(scene, 'bindings.example.com', '/bindings', 'any', createRule(['pods/binding', 'bindings'])));
  await configure(scene, 'validating', 'no-pod-updates', webhookEntry(scene, 'no-pod-updates.example.com', '/no-pod-updates', 'any', createRule(['pods', 'pods/*'], ['UPDATE'])));
  const binding = (node: string) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'unbound' }, target: { kind: 'Node', name: node } });
  await eventually('the binding webhook refuses', async () => (await s.client.post(`${ns}/pods/unbound/binding`, binding('forbidden-node'))).status === 403);
  const viaCollection = await s.client.post(`${ns}/bindings`, binding('forbidden-node'));
  assert.equal(viaCollection.status, 403);
  assert.match(viaCollection.json.message, /admission webhook "bindings\.example\.com" denied the request: not on that node/);
  const review = suite.hooks.callsTo('/bindings').at(-1)!.review.request;
  assert.deepEqual([review.operation, review.kind.kind, review.resource.resource, review.subResource], ['CREATE', 'Binding', 'bindings', undefined]);

  const updatesBefore = suite.hooks.callsTo('/no-pod-updates').length;
  const bound = await s.client.post(`${ns}/pods/unbound/binding`, binding('node-a'));
  assert.equal(bound.status, 201, bound.text);
  assert.equal((await s.client.get(`${ns}/pods/unbound`)).json.spec.nodeName, 'node-a');
  assert.equal(suite.hooks.callsTo('/no-pod-updates').length, updatesBefore);
  const seen = suite.hooks.callsTo('/bindings').at(-1)!.review.request;
  assert.deepEqual([seen.resource.resource, seen.subResource, seen.name], ['pods', 'binding', 'unbound']);
  await unconfigure(scene, 'validating', 'bindings');
  await unconfigure(scene, 'validating', 'no-pod-updates');
});

test('a webhook on CREATE serviceaccounts/token sees the TokenRequest and can refuse it', async () => {
  const s = suite.server;
  const scene = suite.scene();
  suite.hooks.on('/no-tokens', deny({ message: 'no tokens today', code: 403 }));
  await configure(scene, 'validating', 'no-tokens', webhookEntry(scene, 'no-tokens.example.com', '/no-tokens', 'any', createRule(['serviceaccounts/token'])));
  const path = `${ns}/serviceaccounts/default/token`;
  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['api'] } };
  await eventually('the webhook refuses tokens', async () => (await s.client.post(path, body)).status === 403);
  const review = suite.hooks.callsTo('/no-tokens').at(-1)!.review.request;
  assert.deepEqual([review.operation, review.kind.kind, review.resource.resource, review.subResource, review.name], ['CREATE', 'TokenRequest', 'serviceaccounts', 'token', 'default']);
  assert.equal(review.object.token, undefined, 'admission never sees a token');
  const refused = await s.kubectl(['create', 'token', 'default']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /no tokens today/);
  await unconfigure(scene, 'validating', 'no-tokens');
  await eventually('tokens are issued again', async () => (await s.client.post(path, body)).status === 201);
});
