// The garbage collector against an in-process registry (memory backend,
// watch caches, in-process client): cascades, uid checks, the orphan and
// foreground policies, cluster-scoped owners and a restart mid-way. Every
// wait polls a condition with a deadline.

import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { Registry } from '../../../src/registry/registry.js';
import { InProcessClient } from '../../../src/apiserver/inprocess.js';
import { ApiClient, ApiObject, ResourceType } from '../../../src/client/types.js';
import { collectableTypes, GarbageCollector } from '../../../src/controllers/garbagecollector/index.js';
import { InformerFactory } from '../../../src/client/informer.js';
import { eventually } from '../../support/eventually.js';

interface Cluster {
  client: InProcessClient;
  type(resource: string): ResourceType;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function newCluster(): Promise<Cluster> {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  const client = new InProcessClient(registry, 'gc-test');
  const cluster: Cluster = {
    client,
    type: (resource) => client.resources().find((t) => t.resource === resource)!,
    async close() {
      await caches.stopAll();
      await backend.close();
    },
  };
  cleanups.push(() => cluster.close());
  return cluster;
}

/** A collector with informers of its own; stopping it stops them too. */
async function startCollector(client: ApiClient): Promise<GarbageCollector> {
  const informers = new InformerFactory(client);
  const gc = new GarbageCollector(client, undefined, informers);
  const stop = gc.stop.bind(gc);
  gc.stop = () => { stop(); informers.stopAll(); };
  cleanups.push(() => gc.stop());
  await gc.start();
  return gc;
}

function ownerRef(owner: ApiObject, extra: { blockOwnerDeletion?: boolean; uid?: string } = {}) {
  return {
    apiVersion: owner.apiVersion ?? 'v1', kind: owner.kind!, name: owner.metadata!.name, uid: extra.uid ?? owner.metadata!.uid,
    ...(extra.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: extra.blockOwnerDeletion } : {}),
  };
}

async function serviceAccount(c: Cluster, name: string, ns = 'default'): Promise<ApiObject> {
  return c.client.create(c.type('serviceaccounts'), ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
}

async function configMap(c: Cluster, name: string, owners: object[], extra: { finalizers?: string[]; ns?: string } = {}): Promise<ApiObject> {
  return c.client.create(c.type('configmaps'), extra.ns ?? 'default', {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name, ownerReferences: owners, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}) },
    data: { k: 'v' },
  });
}

const get = (c: Cluster, resource: string, name: string, ns: string | undefined = 'default') => c.client.get(c.type(resource), ns, name);
const gone = (c: Cluster, resource: string, name: string, ns: string | undefined = 'default') => async () => (await get(c, resource, name, ns)) === undefined;

async function removeFinalizers(c: Cluster, resource: string, name: string, ns = 'default'): Promise<void> {
  await c.client.patch(c.type(resource), ns, name, 'merge', { metadata: { finalizers: null } });
}

test('background cascade: a ConfigMap owned by a ServiceAccount goes after the ServiceAccount', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const sa = await serviceAccount(c, 'owner');
  await configMap(c, 'dependent', [ownerRef(sa)]);
  await configMap(c, 'bystander', []);
  assert.ok(await get(c, 'configmaps', 'dependent'), 'a dependent of a live owner stays');
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner', { propagationPolicy: 'Background' });
  await eventually('the dependent to be collected', gone(c, 'configmaps', 'dependent'));
  assert.ok(await get(c, 'configmaps', 'bystander'), 'objects without owners are left alone');
});

test('the owner uid counts, not only its name', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const sa = await serviceAccount(c, 'owner');
  await configMap(c, 'wrong-uid', [ownerRef(sa, { uid: 'not-the-owners-uid' })]);
  await configMap(c, 'right-uid', [ownerRef(sa)]);
  await eventually('the object naming another uid to be collected', gone(c, 'configmaps', 'wrong-uid'));
  assert.ok(await get(c, 'configmaps', 'right-uid'));

  // The owner is deleted and a new one takes its name: the dependent of the old one still goes.
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner');
  const again = await serviceAccount(c, 'owner');
  assert.notEqual(again.metadata!.uid, sa.metadata!.uid);
  await eventually('the dependent of the replaced owner to be collected', gone(c, 'configmaps', 'right-uid'));
  assert.equal((await get(c, 'serviceaccounts', 'owner'))?.metadata?.uid, again.metadata!.uid, 'the new owner stays');
});

test('an object created with a reference to an owner that never existed is collected (events are not watched, as upstream)', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const ghost = { apiVersion: 'v1', kind: 'ServiceAccount', name: 'ghost', uid: '00000000-0000-0000-0000-00000000dead' };
  await c.client.create(c.type('events'), 'default', {
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev', ownerReferences: [ghost] },
    involvedObject: { kind: 'ServiceAccount', name: 'ghost', namespace: 'default' }, reason: 'Test', message: 'm',
  });
  await configMap(c, 'orphan-at-birth', [ghost]);
  await eventually('the object to be collected', gone(c, 'configmaps', 'orphan-at-birth'));
  assert.ok(await get(c, 'events', 'ev'), 'the collector does not watch events');
});

test('orphan: dependents keep living without the reference; the owner goes', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const sa = await serviceAccount(c, 'owner');
  const other = await serviceAccount(c, 'other-owner');
  await configMap(c, 'dep-1', [ownerRef(sa)]);
  await configMap(c, 'dep-2', [ownerRef(sa), ownerRef(other)]);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner', { propagationPolicy: 'Orphan' });
  await eventually('the owner to go', gone(c, 'serviceaccounts', 'owner'));
  const dep1 = await get(c, 'configmaps', 'dep-1');
  const dep2 = await get(c, 'configmaps', 'dep-2');
  assert.ok(dep1 && dep2, 'orphaned dependents stay');
  assert.equal(dep1.metadata!.ownerReferences, undefined);
  assert.deepEqual(dep2.metadata!.ownerReferences.map((r: any) => r.name), ['other-owner'], 'only the orphaning owner is removed');
});

test('foreground: the owner waits, deleting, until its blocking dependents are gone', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const sa = await serviceAccount(c, 'owner');
  const keeper = await serviceAccount(c, 'keeper');
  await configMap(c, 'blocking', [ownerRef(sa, { blockOwnerDeletion: true })], { finalizers: ['example.com/hold'] });
  await configMap(c, 'not-blocking', [ownerRef(sa)]);
  await configMap(c, 'kept-by-another', [ownerRef(sa, { blockOwnerDeletion: true }), ownerRef(keeper)]);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner', { propagationPolicy: 'Foreground' });

  await eventually('the non-blocking dependent to go', gone(c, 'configmaps', 'not-blocking'));
  const kept = await eventually('the other owner to keep its dependent, without the deleting owner', async () => {
    const cm = await get(c, 'configmaps', 'kept-by-another');
    return cm?.metadata?.ownerReferences?.length === 1 ? cm : undefined;
  });
  assert.equal(kept.metadata!.ownerReferences[0].name, 'keeper');
  assert.equal(kept.metadata!.deletionTimestamp, undefined);
  await eventually('the blocking dependent to be deleting', async () => (await get(c, 'configmaps', 'blocking'))?.metadata?.deletionTimestamp);
  const owner = await get(c, 'serviceaccounts', 'owner');
  assert.ok(owner?.metadata?.deletionTimestamp, 'the owner is still there, deleting');
  assert.deepEqual(owner.metadata.finalizers, ['foregroundDeletion']);

  await removeFinalizers(c, 'configmaps', 'blocking');
  await eventually('the blocking dependent to go', gone(c, 'configmaps', 'blocking'));
  await eventually('the owner to go last', gone(c, 'serviceaccounts', 'owner'));
});

test('foreground through a chain: a dependent with dependents of its own is deleted in foreground', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const sa = await serviceAccount(c, 'top');
  const secret = await c.client.create(c.type('secrets'), 'default', {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'middle', ownerReferences: [ownerRef(sa, { blockOwnerDeletion: true })] },
  });
  await configMap(c, 'bottom', [ownerRef(secret, { blockOwnerDeletion: true })], { finalizers: ['example.com/hold'] });
  await c.client.delete(c.type('serviceaccounts'), 'default', 'top', { propagationPolicy: 'Foreground' });

  await eventually('the middle to be deleting in foreground', async () => {
    const m = await get(c, 'secrets', 'middle');
    return m?.metadata?.deletionTimestamp && m.metadata.finalizers?.includes('foregroundDeletion');
  });
  await eventually('the bottom to be deleting', async () => (await get(c, 'configmaps', 'bottom'))?.metadata?.deletionTimestamp);
  assert.ok(await get(c, 'serviceaccounts', 'top'), 'the top waits for the whole chain');
  await removeFinalizers(c, 'configmaps', 'bottom');
  await eventually('the middle to go', gone(c, 'secrets', 'middle'));
  await eventually('the top to go', gone(c, 'serviceaccounts', 'top'));
});

test('foreground deletion of an owner without dependents completes', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  await serviceAccount(c, 'alone');
  await c.client.delete(c.type('serviceaccounts'), 'default', 'alone', { propagationPolicy: 'Foreground' });
  await eventually('the owner to go', gone(c, 'serviceaccounts', 'alone'));
});

test('many dependents: a background cascade and an orphaning both reach every one', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const doomed = await serviceAccount(c, 'doomed');
  const orphaning = await serviceAccount(c, 'orphaning');
  const n = 40;
  for (let i = 0; i < n; i++) {
    await configMap(c, `bg-${i}`, [ownerRef(doomed)]);
    await configMap(c, `or-${i}`, [ownerRef(orphaning)]);
  }
  await c.client.delete(c.type('serviceaccounts'), 'default', 'doomed');
  await c.client.delete(c.type('serviceaccounts'), 'default', 'orphaning', { propagationPolicy: 'Orphan' });
  await eventually('every background dependent to go', async () => {
    const { items } = await c.client.list(c.type('configmaps'), 'default');
    return !items.some((cm) => cm.metadata!.name.startsWith('bg-'));
  });
  await eventually('the orphaning owner to go', gone(c, 'serviceaccounts', 'orphaning'));
  const { items } = await c.client.list(c.type('configmaps'), 'default');
  const orphans = items.filter((cm) => cm.metadata!.name.startsWith('or-'));
  assert.equal(orphans.length, n);
  assert.ok(orphans.every((cm) => cm.metadata!.ownerReferences === undefined));
});

test('multiple owners: the dangling reference is removed, the object kept', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const a = await serviceAccount(c, 'a');
  const b = await serviceAccount(c, 'b');
  await configMap(c, 'shared', [ownerRef(a), ownerRef(b)]);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'b');
  const left = await eventually('the reference to b to be removed', async () => {
    const cm = await get(c, 'configmaps', 'shared');
    return cm?.metadata?.ownerReferences?.length === 1 ? cm : undefined;
  });
  assert.equal(left.metadata!.ownerReferences[0].uid, a.metadata!.uid);
  assert.ok(await get(c, 'configmaps', 'shared'));
});

test('a cluster-scoped owner (Namespace) of a namespaced object; a namespaced owner of a cluster-scoped object is invalid', async () => {
  const c = await newCluster();
  await startCollector(c.client);
  const nsType = c.type('namespaces');
  const ns = await c.client.create(nsType, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owner-ns' } });
  await configMap(c, 'owned-by-ns', [ownerRef(ns)]);
  await configMap(c, 'wrong-ns-uid', [ownerRef(ns, { uid: 'not-the-namespace' })]);
  await eventually('the object naming another uid to be collected', gone(c, 'configmaps', 'wrong-ns-uid'));
  assert.ok(await get(c, 'configmaps', 'owned-by-ns'), 'a cluster-scoped owner is found without a namespace');

  // Deleting the namespace leaves it Terminating until finalized; then it is gone, and so is its dependent.
  await c.client.delete(nsType, undefined, 'owner-ns');
  const terminating = (await c.client.get(nsType, undefined, 'owner-ns'))!;
  await c.client.update(nsType, undefined, { ...terminating, spec: { finalizers: [] } }, 'finalize');
  await eventually('the namespace to go', gone(c, 'namespaces', 'owner-ns', undefined));
  await eventually('the dependent of the namespace to be collected', gone(c, 'configmaps', 'owned-by-ns'));

  // A Namespace claiming a ServiceAccount as its owner: the reference can never hold.
  const sa = await serviceAccount(c, 'not-an-owner-of-namespaces');
  await c.client.create(nsType, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'invalid-owner', ownerReferences: [ownerRef(sa)] } });
  await eventually('the namespace with an invalid owner to be deleted', async () => (await c.client.get(nsType, undefined, 'invalid-owner'))?.metadata?.deletionTimestamp);
});

test('restart: a collector stopped mid-way through orphaning leaves work the next one finishes', async () => {
  const c = await newCluster();
  const sa = await serviceAccount(c, 'owner');
  await configMap(c, 'dep-1', [ownerRef(sa)]);
  await configMap(c, 'dep-2', [ownerRef(sa)]);

  // The first collector's patch of dep-2 hangs until it is stopped.
  let reached!: () => void;
  const reachedDep2 = new Promise<void>((resolve) => { reached = resolve; });
  let abort!: (e: Error) => void;
  const held = new Promise<never>((_resolve, reject) => { abort = reject; });
  held.catch(() => undefined);
  const gated: ApiClient = {
    resources: () => c.client.resources(),
    get: (...a) => c.client.get(...a),
    list: (...a) => c.client.list(...a),
    create: (...a) => c.client.create(...a),
    update: (...a) => c.client.update(...a),
    delete: (...a) => c.client.delete(...a),
    watch: (...a) => c.client.watch(...a),
    patch: async (type, ns, name, patchType, patch) => {
      if (name === 'dep-2') { reached(); await held; }
      return c.client.patch(type, ns, name, patchType, patch);
    },
  };
  const first = await startCollector(gated);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner', { propagationPolicy: 'Orphan' });
  await reachedDep2;
  await eventually('dep-1 to be orphaned', async () => (await get(c, 'configmaps', 'dep-1'))?.metadata?.ownerReferences === undefined);
  first.stop();
  abort(new Error('stopped'));
  const owner = await get(c, 'serviceaccounts', 'owner');
  assert.deepEqual(owner?.metadata?.finalizers, ['orphan'], 'the owner is still held');
  assert.equal((await get(c, 'configmaps', 'dep-2'))?.metadata?.ownerReferences?.length, 1);

  // While no collector runs, another owner goes in the background.
  const other = await serviceAccount(c, 'other');
  await configMap(c, 'dep-3', [ownerRef(other)]);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'other');

  await startCollector(c.client);
  await eventually('the orphaning owner to go', gone(c, 'serviceaccounts', 'owner'));
  const dep2 = await get(c, 'configmaps', 'dep-2');
  assert.ok(dep2, 'dep-2 stays');
  assert.equal(dep2.metadata!.ownerReferences, undefined, 'dep-2 is orphaned');
  assert.ok(await get(c, 'configmaps', 'dep-1'));
  await eventually('the dependent of the owner deleted while stopped to be collected', gone(c, 'configmaps', 'dep-3'));
});

test('a stopped collector leaves no timers or handles behind', async () => {
  const c = await newCluster();
  const gc = await startCollector(c.client);
  const sa = await serviceAccount(c, 'owner');
  await configMap(c, 'dependent', [ownerRef(sa)]);
  await c.client.delete(c.type('serviceaccounts'), 'default', 'owner');
  await configMap(c, 'never-owned', [{ apiVersion: 'v1', kind: 'ServiceAccount', name: 'ghost', uid: 'no-such-uid' }]);
  await eventually('the dependent to be collected', gone(c, 'configmaps', 'dependent'));
  await eventually('the object with a missing owner to be collected', gone(c, 'configmaps', 'never-owned'));
  // Nodes kept for owners that were never seen are dropped once nothing names them.
  await eventually('the graph to hold just the live objects', async () => {
    let live = 0;
    for (const t of collectableTypes(c.client.resources())) live += (await c.client.list(t)).items.length;
    return gc.graphSize === live;
  });
  gc.stop();
  await c.close();
  // Work queue backoffs and informer retries are cleared on stop; only the test runner's own handles may remain.
  await eventually('timers to be cleared', async () => !process.getActiveResourcesInfo().includes('Timeout'));
});
