// A client written with the upstream JavaScript client library
// (@kubernetes/client-node): its informer lists and watches a namespace while
// the test writes to it, and ends holding exactly the store's state. Also: an
// informer restarted after its history was compacted away gets 410, relists,
// and drops what was deleted meanwhile.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig, ListWatch, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite', etcdCompactionIntervalMs: 1500 }); });
after(async () => { await s.close(); });

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createNamespace(name: string): Promise<void> {
  const r = await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
}

/** name → resourceVersion of every ConfigMap in `ns`, from a list request. */
async function storeState(ns: string): Promise<Map<string, string>> {
  const r = await s.client.get(`/api/v1/namespaces/${ns}/configmaps`);
  assert.equal(r.status, 200, r.text);
  return new Map(r.json.items.map((i: any) => [i.metadata.name, i.metadata.resourceVersion]));
}

interface Watched {
  informer: ReturnType<typeof makeInformer<V1ConfigMap>>;
  /** Resource versions each object was seen at, in callback order. */
  seen: Map<string, number[]>;
  deleted: string[];
  errors: unknown[];
  lists: number;
  state(): Map<string, string>;
}

function informerOn(ns: string): Watched {
  const kc = new KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  const api = kc.makeApiClient(CoreV1Api);
  const w: Watched = {
    informer: undefined as never, seen: new Map(), deleted: [], errors: [], lists: 0,
    state: () => new Map(w.informer.list(ns).map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!])),
  };
  w.informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () => {
    w.lists++;
    return api.listNamespacedConfigMap({ namespace: ns });
  });
  const record = (o: V1ConfigMap) => {
    const name = o.metadata!.name!;
    if (!w.seen.has(name)) w.seen.set(name, []);
    w.seen.get(name)!.push(Number(o.metadata!.resourceVersion));
  };
  w.informer.on('add', record);
  w.informer.on('update', record);
  w.informer.on('delete', (o) => { record(o); w.deleted.push(o.metadata!.name!); });
  // stop() aborts the watch request, which the library reports as an AbortError.
  w.informer.on('error', (e) => { if ((e as Error)?.name !== 'AbortError') w.errors.push(e); });
  return w;
}

/** The names the test made (a controller may publish the root CA ConfigMap in every namespace). */
const ours = (names: Iterable<string>) => [...names].filter((n) => n !== vocabulary.rootCaConfigMap).sort();
const sortedEntries = (m: Map<string, string>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

/** Polls until the informer's cache equals the store's state (names and resourceVersions). */
async function converge(w: Watched, ns: string, ms = 15_000): Promise<Map<string, string>> {
  const deadline = Date.now() + ms;
  const want = await storeState(ns);
  while (Date.now() < deadline) {
    if (JSON.stringify(sortedEntries(w.state())) === JSON.stringify(sortedEntries(want))) return want;
    await sleep(20);
  }
  assert.deepEqual(sortedEntries(w.state()), sortedEntries(want), 'informer cache vs store');
  return want;
}

/** PUT with the latest copy, re-reading on a conflict (bounded). */
async function update(ns: string, name: string, data: Record<string, string>): Promise<void> {
  const path = `/api/v1/namespaces/${ns}/configmaps/${name}`;
  for (let attempt = 0; attempt < 20; attempt++) {
    const cur = await s.client.get(path);
    assert.equal(cur.status, 200, cur.text);
    const r = await s.client.put(path, { ...cur.json, data });
    if (r.status === 200) return;
    assert.equal(r.status, 409, r.text);
  }
  assert.fail(`${name}: too many conflicts`);
}

test('an informer of @kubernetes/client-node ends with exactly the store\'s state after concurrent writes', async () => {
  const ns = 'informed';
  await createNamespace(ns);
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  // Some objects exist before the informer starts: they come from its list.
  for (let i = 0; i < 5; i++) assert.equal((await s.client.post(base, cm(`pre-${i}`, { i: String(i) }))).status, 201);

  const w = informerOn(ns);
  try {
    await w.informer.start();
    assert.equal(w.lists, 1);
    await converge(w, ns);

    // 50 objects written by 10 concurrent writers: every object is created, every
    // third updated three times (also by two writers at once, so some PUTs
    // conflict and retry), every fifth deleted, and two of the listed ones go too.
    const N = 50;
    const names = Array.from({ length: N }, (_, i) => `obj-${String(i).padStart(2, '0')}`);
    const ops: (() => Promise<void>)[] = names.map((n, i) => async () => {
      const r = await s.client.post(base, cm(n, { v: '0' }));
      assert.equal(r.status, 201, r.text);
      if (i % 3 === 0) {
        await Promise.all([update(ns, n, { v: '1', by: 'a' }), update(ns, n, { v: '1', by: 'b' })]);
        await update(ns, n, { v: '2' });
      }
      if (i % 5 === 0) assert.equal((await s.client.delete(`${base}/${n}`)).status, 200);
    });
    ops.push(async () => { assert.equal((await s.client.delete(`${base}/pre-0`)).status, 200); });
    ops.push(async () => { await update(ns, 'pre-1', { changed: 'yes' }); });
    ops.push(async () => { assert.equal((await s.client.delete(`${base}/pre-2`)).status, 200); });
    let next = 0;
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (next < ops.length) await ops[next++]!();
    }));

    const final = await converge(w, ns);
    const expectedNames = [...names.filter((_, i) => i % 5 !== 0), 'pre-1', 'pre-3', 'pre-4'].sort();
    assert.deepEqual(ours(final.keys()), expectedNames);
    assert.deepEqual(w.errors, []);
    assert.equal(w.lists, 1, 'one list, then the watch carried everything');
    // Every callback saw an object at a newer version than the one before.
    for (const [name, rvs] of w.seen) {
      for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i]! > rvs[i - 1]!, `${name}: resourceVersions ${rvs.join(',')}`);
    }
    assert.deepEqual([...w.deleted].sort(), [...names.filter((_, i) => i % 5 === 0), 'pre-0', 'pre-2'].sort());
    // The updated objects carry their last data.
    const obj03 = w.informer.get('obj-03', ns);
    assert.deepEqual(obj03?.data, { v: '2' });
    assert.deepEqual(w.informer.get('pre-1', ns)?.data, { changed: 'yes' });
  } finally {
    await w.informer.stop();
  }
});

test('an informer restarted from a compacted resourceVersion gets 410, relists and drops what was deleted', async () => {
  const ns = 'relisted';
  await createNamespace(ns);
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  for (let i = 0; i < 6; i++) assert.equal((await s.client.post(base, cm(`k-${i}`, { i: String(i) }))).status, 201);
  const w = informerOn(ns);
  try {
    await w.informer.start();
    await converge(w, ns);
    const stoppedAt = (w.informer as ListWatch<V1ConfigMap>).latestResourceVersion();
    await w.informer.stop();

    // While it is stopped: deletes, updates and creates, then wait (bounded)
    // until a watch from where the informer stopped is answered with 410.
    assert.equal((await s.client.delete(`${base}/k-0`)).status, 200);
    assert.equal((await s.client.delete(`${base}/k-1`)).status, 200);
    await update(ns, 'k-2', { i: 'two' });
    assert.equal((await s.client.post(base, cm('k-new', {}))).status, 201);
    const deadline = Date.now() + 20_000;
    let expired = false;
    while (!expired && Date.now() < deadline) {
      await sleep(200);
      await update(ns, 'k-3', { tick: String(Date.now()) });
      const probe = await s.client.watch(`${base}?watch=1&resourceVersion=${stoppedAt}`);
      const events = await probe.waitFor(1, 2000);
      probe.close();
      expired = events[0]?.type === 'ERROR' && events[0].object.code === 410;
    }
    assert.ok(expired, `the history after ${stoppedAt} was never compacted`);

    const listsBefore = w.lists;
    await w.informer.start();
    const final = await converge(w, ns);
    assert.ok(w.lists > listsBefore, 'the 410 made the informer list again');
    assert.deepEqual(ours(final.keys()), ['k-2', 'k-3', 'k-4', 'k-5', 'k-new']);
    assert.ok(w.deleted.includes('k-0') && w.deleted.includes('k-1'), `deleted while stopped: ${w.deleted}`);
    assert.deepEqual(w.informer.get('k-2', ns)?.data, { i: 'two' });
    assert.deepEqual(w.errors, []);

    // And it keeps watching after the relist.
    assert.equal((await s.client.post(base, cm('k-after', {}))).status, 201);
    await converge(w, ns);
    assert.ok(w.informer.get('k-after', ns));
  } finally {
    await w.informer.stop();
  }
});
