// The TypeScript client's calls against a real server: discovery, every
// verb and patch type, server-side apply, typed Status errors, Warning
// headers, paging, watches as async iterators and the controller kit's
// informer running over HTTPS.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { Informer, RemoteClient, ResourceClient, StatusError, type ApiObject, type WatchEvent } from '../../src/client/index.js';

let s: TestServer;
let client: RemoteClient;
const warnings: string[] = [];
let configMaps: ResourceClient;

before(async () => {
  s = await startTestServer();
  client = await RemoteClient.fromKubeconfig({ paths: [s.kubeconfigPath], onWarning: (w) => warnings.push(w) });
  configMaps = (await client.resource({ group: '', resource: 'configmaps' })).inNamespace('default');
});
after(async () => {
  client.close();
  await s.close();
});

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data });

test('discovery lists the served types, core and named groups, with scope and verbs', async () => {
  const types = await client.discover();
  const pods = types.find((t) => t.group === '' && t.resource === 'pods');
  assert.deepEqual(pods && { kind: pods.kind, namespaced: pods.namespaced, version: pods.version }, { kind: 'Pod', namespaced: true, version: 'v1' });
  assert.ok(pods!.verbs.includes('watch'));
  const crbs = types.find((t) => t.resource === 'clusterrolebindings' && t.group === 'rbac.authorization.plat.io');
  assert.equal(crbs?.namespaced, false);
  await assert.rejects(client.resource({ group: 'nothing.example', resource: 'things' }), (e: unknown) => e instanceof StatusError && e.code === 404);
});

test('create, get, update, every patch type, apply with its field manager, delete and deletecollection', async () => {
  const created = await configMaps.create(cm('calls', { a: '1' }));
  assert.equal(created.metadata?.namespace, 'default');
  assert.equal((await configMaps.get('calls')).data.a, '1');
  const updated = await configMaps.update({ ...created, data: { a: '2' } });
  assert.equal(updated.data.a, '2');
  assert.equal((await configMaps.patch('calls', 'merge', { data: { b: '3' } })).data.b, '3');
  assert.equal((await configMaps.patch('calls', 'strategic', { data: { c: '4' } })).data.c, '4');
  assert.deepEqual((await configMaps.patch('calls', 'json', [{ op: 'remove', path: '/data/a' }])).data, { b: '3', c: '4' });

  const applied = await configMaps.apply({ metadata: { name: 'applied' }, data: { owner: 'one' } }, { fieldManager: 'one' });
  assert.equal(applied.metadata?.managedFields?.[0]?.manager, 'one');
  await assert.rejects(configMaps.apply({ metadata: { name: 'applied' }, data: { owner: 'two' } }, { fieldManager: 'two' }), (e: unknown) => e instanceof StatusError && e.code === 409 && e.reason === 'Conflict');
  assert.equal((await configMaps.apply({ metadata: { name: 'applied' }, data: { owner: 'two' } }, { fieldManager: 'two', force: true })).data.owner, 'two');

  const dry = await configMaps.create(cm('dry'), { dryRun: true });
  assert.equal(dry.metadata?.name, 'dry');
  await assert.rejects(configMaps.get('dry'), (e: unknown) => e instanceof StatusError && e.code === 404);

  await configMaps.delete('calls');
  await assert.rejects(configMaps.get('calls'), (e: unknown) => e instanceof StatusError && e.reason === 'NotFound');
  await configMaps.create(cm('gone-1', {}, { batch: 'x' }));
  await configMaps.create(cm('gone-2', {}, { batch: 'x' }));
  await configMaps.deleteCollection({ labelSelector: 'batch=x' });
  assert.deepEqual((await configMaps.list({ labelSelector: 'batch=x' })).items, []);
  // The ApiClient face the controllers use answers absence with undefined and false.
  const type = configMaps.type;
  assert.equal(await client.get(type, 'default', 'calls'), undefined);
  assert.equal(await client.delete(type, 'default', 'calls'), false);
});

test('errors are typed Status values with the server\'s code, reason, message and details', async () => {
  await assert.rejects(configMaps.get('absent'), (e: unknown) => {
    assert.ok(e instanceof StatusError);
    assert.deepEqual([e.code, e.reason, e.message], [404, 'NotFound', 'configmaps "absent" not found']);
    assert.deepEqual(e.details, { name: 'absent', kind: 'configmaps' });
    return true;
  });
  await assert.rejects(configMaps.create(cm('Not_A_Name')), (e: unknown) => e instanceof StatusError && e.code === 422 && e.reason === 'Invalid' && Array.isArray(e.details?.causes));
  await configMaps.create(cm('twice'));
  await assert.rejects(configMaps.create(cm('twice')), (e: unknown) => e instanceof StatusError && e.code === 409 && e.reason === 'AlreadyExists');
});

test('Warning headers reach the warning handler', async () => {
  warnings.length = 0;
  await configMaps.create({ ...cm('warned'), unknownField: 1 } as ApiObject, { fieldValidation: 'Warn' });
  assert.deepEqual(warnings, ['unknown field "unknownField"']);
});

test('lists page with limit and continue, and listAll walks every page', async () => {
  for (let i = 0; i < 5; i++) await configMaps.create(cm(`page-${i}`, {}, { paged: 'yes' }));
  const first = await configMaps.list({ labelSelector: 'paged=yes', limit: 2 });
  assert.equal(first.items.length, 2);
  assert.ok(first.continue);
  assert.equal(first.items[0]!.kind, 'ConfigMap', 'items carry their kind');
  const names: string[] = [];
  for await (const o of configMaps.listAll({ labelSelector: 'paged=yes', pageSize: 2 })) names.push(o.metadata?.name);
  assert.deepEqual(names, ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
});

test('watch yields the current objects, then changes in order, and stops when the loop ends', async () => {
  await configMaps.create(cm('w-before', {}, { w: 'yes' }));
  const seen: string[] = [];
  const iterator = configMaps.watch({ labelSelector: 'w=yes' });
  const next = async () => ((await iterator.next()).value as WatchEvent);
  let e = await next();
  seen.push(`${e.type} ${e.object.metadata?.name}`);
  await configMaps.create(cm('w-after', {}, { w: 'yes' }));
  await configMaps.patch('w-before', 'merge', { data: { x: '1' } });
  await configMaps.delete('w-after');
  for (let i = 0; i < 3; i++) {
    e = await next();
    seen.push(`${e.type} ${e.object.metadata?.name}`);
  }
  await iterator.return(undefined);
  assert.deepEqual(seen, ['ADDED w-before', 'ADDED w-after', 'MODIFIED w-before', 'DELETED w-after']);
});

test('the controller kit\'s informer runs over the remote client: a synced indexed cache and its handlers', async () => {
  await client.discover();
  const added: string[] = [];
  const informer = new Informer(client, configMaps.type, { onAdd: (o) => added.push(o.metadata?.name) }, { namespace: 'default', labelSelector: 'inf=yes' });
  await configMaps.create(cm('inf-1', {}, { inf: 'yes' }));
  assert.equal(informer.hasSynced(), false);
  await informer.start();
  assert.equal(informer.hasSynced(), true);
  assert.deepEqual(added, ['inf-1']);
  await configMaps.create(cm('inf-2', {}, { inf: 'yes' }));
  const deadline = Date.now() + 5000;
  while (added.length < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  assert.deepEqual(added, ['inf-1', 'inf-2']);
  assert.deepEqual(informer.byIndex('namespace', 'default').map((o) => o.metadata?.name).sort(), ['inf-1', 'inf-2']);
  informer.stop();
});

test('with protobuf on, gets and lists of built-in kinds read the same objects as JSON', async () => {
  const binary = await RemoteClient.fromKubeconfig({ paths: [s.kubeconfigPath], protobuf: true });
  const viaProtobuf = (await binary.resource({ group: '', resource: 'configmaps' })).inNamespace('default');
  await configMaps.create(cm('pb-1', { text: 'a' }, { pb: 'yes' }));
  assert.deepEqual(await viaProtobuf.get('pb-1'), await configMaps.get('pb-1'));
  assert.deepEqual((await viaProtobuf.list({ labelSelector: 'pb=yes' })).items, (await configMaps.list({ labelSelector: 'pb=yes' })).items);
  const raw = await binary.request('GET', '/api/v1/namespaces/default/configmaps/pb-1', { accept: await binary.readAccept(configMaps.type) });
  assert.match(String(raw.headers['content-type']), /protobuf/);
  await assert.rejects(viaProtobuf.get('absent'), (e: unknown) => e instanceof StatusError && e.reason === 'NotFound');
  // A watch too: its events decode to what a JSON read gives.
  const { resourceVersion } = await configMaps.list({ limit: 1 });
  const watch = viaProtobuf.watch({ labelSelector: 'pb=yes', resourceVersion });
  await configMaps.create(cm('pb-2', { text: 'b' }, { pb: 'yes' }));
  const event = (await watch.next()).value as WatchEvent;
  await watch.return(undefined);
  assert.deepEqual([event.type, event.object], ['ADDED', await configMaps.get('pb-2')]);
  binary.close();
});

test('typed methods for a built-in kind need no discovery and carry its interface', async () => {
  const fresh = await RemoteClient.fromKubeconfig({ paths: [s.kubeconfigPath] });
  const typed = fresh.typed('ConfigMap', 'default');
  const made = await typed.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed' }, data: { k: 'v' } });
  const data: Record<string, string> | undefined = made.data;
  assert.deepEqual(data, { k: 'v' });
  const namespaces = await fresh.typed('Namespace').list();
  assert.ok(namespaces.items.some((n) => n.metadata?.name === 'default'));
  assert.throws(() => fresh.resources(), /call discover\(\) before resources\(\)/, 'no discovery was made');
  fresh.close();
});
