// Pods are indexed by spec.nodeName in the watch cache, as upstream's are: a
// node agent's list and watch read only its pods. What a client sees must
// not change: an indexed list answers what the same list filtered from all
// pods answers, and a pod bound to a node leaves the unbound pods' watchers
// and reaches the node's.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
const namespaces = ['idx-a', 'idx-b'];
const nodes = ['n1', 'n2', 'n3'];
const podsPath = (ns?: string) => (ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods');
const pod = (name: string, nodeName?: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] } });
const key = (p: any) => `${p.metadata.namespace}/${p.metadata.name}`;
const selector = (text: string) => `fieldSelector=${encodeURIComponent(text)}`;

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  for (const ns of namespaces) {
    assert.equal((await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
    // Names out of node order, so that each node's pods interleave with the others' in key order.
    for (let i = 0; i < 12; i++) {
      const made = await s.client.post(podsPath(ns), pod(`p${String((i * 7) % 12).padStart(2, '0')}`, i % 4 === 3 ? undefined : nodes[i % 3]));
      assert.equal(made.status, 201, made.text);
    }
  }
});
after(async () => { await s.close(); });

/** Every page of a list, following continue tokens. */
async function pages(path: string, query: string, limit: number): Promise<{ items: any[]; resourceVersions: string[] }> {
  const items: any[] = [];
  const resourceVersions: string[] = [];
  let next = '';
  for (;;) {
    const r = await s.client.get(`${path}?${query}&limit=${limit}${next ? `&continue=${encodeURIComponent(next)}` : '&resourceVersion=0'}`);
    assert.equal(r.status, 200, r.text);
    items.push(...r.json.items);
    resourceVersions.push(r.json.metadata.resourceVersion);
    next = r.json.metadata.continue ?? '';
    if (!next) return { items, resourceVersions };
  }
}

test('a list by node answers the pods a filter of all pods finds, in the same order, at the same resourceVersion', async () => {
  for (const ns of [undefined, namespaces[1]]) {
    for (const [text, keep] of [
      ['spec.nodeName=n1', (p: any) => p.spec.nodeName === 'n1'] as const,
      ['spec.nodeName=', (p: any) => p.spec.nodeName === undefined] as const,
      ['spec.nodeName==n2,status.phase=Pending,metadata.name!=p03', (p: any) => p.spec.nodeName === 'n2' && p.metadata.name !== 'p03'] as const,
    ]) {
      for (const rv of ['', '&resourceVersion=0']) {
        // The same cache state for both (a write elsewhere moves the revision): retried until they agree on it.
        await eventually(`${ns ?? 'all'} ${text}${rv}`, async () => {
          const all = await s.client.get(`${podsPath(ns)}?${rv.slice(1)}`);
          const indexed = await s.client.get(`${podsPath(ns)}?${selector(text)}${rv}`);
          assert.equal(indexed.status, 200, indexed.text);
          if (all.json.metadata.resourceVersion !== indexed.json.metadata.resourceVersion) return false;
          assert.deepEqual(indexed.json.items.map(key), all.json.items.filter(keep).map(key), `${ns ?? 'all'} ${text}`);
          assert.deepEqual(indexed.json.items, all.json.items.filter(keep));
          return true;
        });
      }
      // In pages of two: the first from the cache by index, the rest at the token's revision.
      const paged = await pages(podsPath(ns), selector(text), 2);
      const all = await s.client.get(`${podsPath(ns)}?resourceVersion=${paged.resourceVersions[0]}&resourceVersionMatch=Exact`);
      assert.deepEqual(paged.items.map(key), all.json.items.filter(keep).map(key), `${ns ?? 'all'} ${text} paged`);
      assert.equal(new Set(paged.resourceVersions).size, 1, 'every page at the first page\'s resourceVersion');
    }
  }
});

test('a pod bound to a node is DELETED for the unbound pods\' watchers and ADDED for that node\'s, and nothing for another node\'s', async () => {
  const ns = namespaces[0]!;
  const made = await s.client.post(podsPath(ns), pod('moving'));
  assert.equal(made.status, 201, made.text);
  const rv = made.json.metadata.resourceVersion;
  const watch = (text: string) => s.client.watch(`${podsPath()}?watch=1&resourceVersion=${rv}&${selector(text)}`);
  const unbound = await watch('spec.nodeName=');
  const onN2 = await watch('spec.nodeName=n2');
  const onN3 = await watch('spec.nodeName=n3');
  const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'moving' }, target: { kind: 'Node', name: 'n2' } };
  const bound = await s.client.post(`${podsPath(ns)}/moving/binding`, binding);
  assert.equal(bound.status, 201, bound.text);
  // A later pod on n3 marks the end of what n3's watcher could have been sent.
  assert.equal((await s.client.post(podsPath(ns), pod('marker', 'n3'))).status, 201);
  const left = await unbound.waitFor(1);
  const arrived = await onN2.waitFor(1);
  const other = await onN3.waitFor(1);
  for (const w of [unbound, onN2, onN3]) w.close();
  assert.deepEqual(left.map((e) => [e.type, e.object.metadata.name, e.object.spec.nodeName]), [['DELETED', 'moving', 'n2']]);
  assert.deepEqual(arrived.map((e) => [e.type, e.object.metadata.name, e.object.spec.nodeName]), [['ADDED', 'moving', 'n2']]);
  assert.deepEqual(other.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'marker']]);
  assert.equal(left[0].object.metadata.resourceVersion, arrived[0].object.metadata.resourceVersion);
});

test('a node\'s watch without a resourceVersion starts with exactly that node\'s pods', async () => {
  const all = await s.client.get(podsPath());
  const w = await s.client.watch(`${podsPath()}?watch=1&${selector('spec.nodeName=n1')}`);
  const expected = all.json.items.filter((p: any) => p.spec.nodeName === 'n1').map(key);
  const events = await w.waitFor(expected.length);
  w.close();
  assert.deepEqual(events.map((e) => [e.type, key(e.object)]), expected.map((k: string) => ['ADDED', k]));
});
