// The shared informer factory against an in-process registry (memory
// backend): two readers of one resource share one list and one watch, other
// selectors get informers of their own, indexes follow changes, a late reader
// hears of what is held already, resync redelivers on a fake clock, and the
// last reader to stop stops the informer.

import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { Registry } from '../../../src/registry/registry.js';
import { InProcessClient } from '../../../src/apiserver/inprocess.js';
import type { ApiClient, ApiObject, ListOptions, ResourceType, WatchHandlers } from '../../../src/client/types.js';
import { InformerFactory, namespaceIndex } from '../../../src/client/informer.js';
import { resources, resourceType } from '../../../src/client/resources.js';
import { FakeClock } from '../../support/clock.js';
import { eventually } from '../../support/eventually.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** An in-process client that counts the lists and watches it is asked for, and how many watches are open. */
class CountingClient extends InProcessClient {
  lists: string[] = [];
  watches: string[] = [];
  open = 0;

  override list(type: ResourceType, namespace?: string, options?: ListOptions) {
    this.lists.push(`${type.resource} ${JSON.stringify(options ?? {})}`);
    return super.list(type, namespace, options);
  }

  override async watch(type: ResourceType, namespace: string | undefined, rv: string, handlers: WatchHandlers, options?: ListOptions) {
    this.watches.push(`${type.resource} ${JSON.stringify(options ?? {})}`);
    const w = await super.watch(type, namespace, rv, handlers, options);
    this.open++;
    return { stop: () => { this.open--; w.stop(); } };
  }
}

async function cluster(): Promise<CountingClient> {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  cleanups.push(async () => { await caches.stopAll(); await backend.close(); });
  return new CountingClient(registry, 'informer-test');
}

const configMap = (namespace: string, name: string, labels: Record<string, string> = {}): ApiObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data: { k: 'v' } });

async function namespaces(client: ApiClient, ...names: string[]): Promise<void> {
  for (const name of names) await client.create(resourceType(client, resources.namespaces), undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

test('two readers of one resource share one list and one watch; another selector gets its own', async () => {
  const client = await cluster();
  const factory = new InformerFactory(client);
  cleanups.push(() => factory.stopAll());
  const cms = resourceType(client, resources.configMaps);
  await namespaces(client, 'a');
  await client.create(cms, 'a', configMap('a', 'one'));

  const seenA: string[] = [];
  const seenB: string[] = [];
  const first = factory.subscribe(cms, { onAdd: (o) => seenA.push(o.metadata!.name) });
  const second = factory.subscribe(cms, { onAdd: (o) => seenB.push(o.metadata!.name) });
  assert.equal(first.hasSynced(), false);
  await Promise.all([first.start(), second.start()]);
  assert.ok(first.hasSynced() && second.hasSynced());
  assert.equal(client.lists.length, 1);
  assert.equal(client.watches.length, 1);
  assert.equal(factory.size, 1);

  await client.create(cms, 'a', configMap('a', 'two'));
  await eventually('both readers hear of the new object', () => seenA.length === 2 && seenB.length === 2);
  assert.deepEqual(seenA, ['one', 'two']);
  assert.deepEqual(seenB, ['one', 'two']);
  assert.equal(first.get('a', 'two')?.metadata?.name, 'two');

  const selected = factory.subscribe(cms, {}, { fieldSelector: 'metadata.name=one' });
  await selected.start();
  assert.equal(client.lists.length, 2, 'a selector of its own: a list of its own');
  assert.deepEqual(selected.list().map((o) => o.metadata!.name), ['one']);
});

test('a late reader hears of what the informer holds; indexes follow adds, changes and deletes', async () => {
  const client = await cluster();
  const factory = new InformerFactory(client);
  cleanups.push(() => factory.stopAll());
  const cms = resourceType(client, resources.configMaps);
  await namespaces(client, 'a', 'b');
  await client.create(cms, 'a', configMap('a', 'x', { team: 'red' }));
  await client.create(cms, 'b', configMap('b', 'y', { team: 'blue' }));
  const early = factory.subscribe(cms, {}, { indexers: { team: (o) => [o.metadata?.labels?.team ?? ''] } });
  await early.start();

  const late: string[] = [];
  const second = factory.subscribe(cms, { onAdd: (o) => late.push(o.metadata!.name) });
  await second.start();
  assert.deepEqual(late.sort(), ['x', 'y']);
  assert.equal(client.lists.length, 1);

  const names = (objs: ApiObject[]) => objs.map((o) => o.metadata!.name).sort();
  assert.deepEqual(names(early.byIndex(namespaceIndex, 'a')), ['x']);
  assert.deepEqual(names(second.byIndex('team', 'red')), ['x'], 'an index is shared by every reader of the informer');
  const x = early.get('a', 'x')!;
  await client.update(cms, 'a', { ...x, metadata: { ...x.metadata, labels: { team: 'blue' } } });
  await eventually('x moves to blue', () => names(early.byIndex('team', 'blue')).join() === 'x,y');
  assert.deepEqual(early.byIndex('team', 'red'), []);
  await client.delete(cms, 'b', 'y');
  await eventually('y leaves the indexes', () => names(early.byIndex('team', 'blue')).join() === 'x');
  assert.deepEqual(early.byIndex(namespaceIndex, 'b'), []);
  assert.throws(() => early.byIndex('nosuch', 'v'), /no index "nosuch"/);
});

/** A factory on a fake clock over a cluster holding one ConfigMap, `a/x`. */
async function oneConfigMapOnFakeClock() {
  const client = await cluster();
  const clock = new FakeClock();
  const factory = new InformerFactory(client, clock);
  cleanups.push(() => factory.stopAll());
  const cms = resourceType(client, resources.configMaps);
  await namespaces(client, 'a');
  await client.create(cms, 'a', configMap('a', 'x'));
  return { clock, factory, cms };
}

test('resync redelivers every object as an update at its period, on the injected clock', async () => {
  const { clock, factory, cms } = await oneConfigMapOnFakeClock();
  const updates: string[] = [];
  const s = factory.subscribe(cms, { onUpdate: (old, obj) => { assert.equal(old, obj); updates.push(obj.metadata!.name); } }, { resyncMs: 60_000 });
  await s.start();
  clock.advance(59_999);
  assert.deepEqual(updates, []);
  clock.advance(1);
  assert.deepEqual(updates, ['x']);
  clock.advance(60_000);
  assert.deepEqual(updates, ['x', 'x']);
  s.stop();
  clock.advance(60_000);
  assert.deepEqual(updates, ['x', 'x'], 'a stopped reader resyncs no more');
});

test('a second start is the first: nothing replayed, no second resync timer', async () => {
  const { clock, factory, cms } = await oneConfigMapOnFakeClock();
  const adds: string[] = [];
  const updates: string[] = [];
  const s = factory.subscribe(cms, { onAdd: (o) => adds.push(o.metadata!.name), onUpdate: (_old, o) => updates.push(o.metadata!.name) }, { resyncMs: 60_000 });
  const first = s.start();
  assert.equal(s.start(), first);
  await first;
  await s.start();
  assert.deepEqual(adds, ['x']);
  clock.advance(60_000);
  assert.deepEqual(updates, ['x']);
});

test('the informer lives while someone reads it: the last reader to stop ends its watch', async () => {
  const client = await cluster();
  const factory = new InformerFactory(client);
  cleanups.push(() => factory.stopAll());
  const cms = resourceType(client, resources.configMaps);
  const one = factory.subscribe(cms, {});
  const two = factory.subscribe(cms, {});
  await Promise.all([one.start(), two.start()]);
  assert.equal(client.open, 1);
  one.stop();
  assert.equal(client.open, 1, 'still read by the other');
  assert.equal(factory.size, 1);
  two.stop();
  assert.equal(client.open, 0);
  assert.equal(factory.size, 0);
  const again = factory.subscribe(cms, {});
  await again.start();
  assert.equal(client.lists.length, 2, 'a new reader later gets a new informer');
  assert.equal(client.open, 1);
});
