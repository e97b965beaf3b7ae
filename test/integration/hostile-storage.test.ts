// Memory and storage bounds against a real server on a real SQLite file:
// large values rewritten in a burst must not pile up in the store's memory
// of recent events (its byte metric stays within its bound, here a small
// --watch-cache-window-bytes, so that a few writes show what 300 of 900 KB
// showed before) while watches begun before and after the burst still see
// every event, and an object
// whose stored bytes are over --max-stored-object-bytes (a custom resource
// swollen by its list items' defaults, a ConfigMap with many labels) is
// answered 413 as upstream's etcd refusal is, with nothing stored.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { Canary, assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { parsePrometheusText, value } from '../support/prometheus.js';
import { crdPath } from '../support/crds.js';

const ns = 'default';
const configmaps = `/api/v1/namespaces/${ns}/configmaps`;
/** What the store answers a value over the limit, passed on as upstream passes etcd's. */
const tooLarge = 'etcdserver: request is too large';
/** The caches' windows and the store's own recent events each hold at most this. */
const windowBytes = 256 * 1024;

let s: TestServer;
let canary: Canary;

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite', watchCacheWindowBytes: windowBytes });
  canary = await Canary.plant(s.client, ns, 'storage-canary');
});
after(async () => { await s.close(); });

async function watchMemory(): Promise<{ events: number; bytes: number; limit: number }> {
  const families = parsePrometheusText((await s.client.get('/metrics')).text);
  const read = (name: string) => {
    const v = value(families, name, {});
    assert.ok(v !== undefined, `${name} is served`);
    return v;
  };
  return { events: read('apiserver_storage_watch_events'), bytes: read('apiserver_storage_watch_bytes'), limit: read('apiserver_storage_watch_limit_bytes') };
}

/** The MODIFIED events of `name` in a watch, as [resourceVersion, data.seq]. */
const modified = (events: any[], name: string) => events
  .filter((e) => e.type === 'MODIFIED' && e.object.metadata.name === name)
  .map((e) => [e.object.metadata.resourceVersion, e.object.data.seq]);

test('a burst of rewrites of a large ConfigMap: the store keeps its byte bound for recent events, and watches from before and after the burst see every one', async () => {
  const filler = 'x'.repeat(64 * 1024);
  const made = await s.client.post(configmaps, { metadata: { name: 'big' }, data: { seq: '0', filler } });
  assert.equal(made.status, 201, made.text);
  const start = made.json.metadata.resourceVersion;
  const live = await s.client.watch(`${configmaps}?watch=1&resourceVersion=${start}&fieldSelector=metadata.name%3Dbig`);
  const rewrites = 16;
  // Unconditional PUTs (no resourceVersion), a few at a time: each is one write of 64 KB.
  for (let i = 1; i <= rewrites; i += 4) {
    const batch = [];
    for (let j = i; j < i + 4 && j <= rewrites; j++) batch.push(s.client.put(`${configmaps}/big`, { metadata: { name: 'big' }, data: { seq: String(j), filler } }));
    for (const r of await Promise.all(batch)) assert.equal(r.status, 200, r.text.slice(0, 300));
  }
  const held = await watchMemory();
  assert.equal(held.limit, windowBytes);
  assert.ok(held.bytes <= held.limit, `held ${held.bytes} bytes, over the bound ${held.limit}`);
  // Each of these events holds about 128 KB (value and previous value): two at most stay.
  assert.ok(held.events <= 2, `${held.events} events held`);

  await live.waitFor(rewrites);
  const seen = modified(live.events, 'big');
  live.close();
  assert.equal(seen.length, rewrites);
  assert.deepEqual(seen.map(([, seq]) => seq).sort((a, b) => Number(a) - Number(b)), Array.from({ length: rewrites }, (_, i) => String(i + 1)));
  const versions = seen.map(([rv]) => Number(rv));
  assert.deepEqual(versions, [...versions].sort((a, b) => a - b), 'in resourceVersion order');
  const last = (await s.client.get(`${configmaps}/big`)).json;
  assert.deepEqual(seen.at(-1), [last.metadata.resourceVersion, last.data.seq], 'the last event is the stored object');

  // From before the burst, begun after it: older than every window in memory, replayed from the store's history.
  const replay = await s.client.watch(`${configmaps}?watch=1&resourceVersion=${start}&fieldSelector=metadata.name%3Dbig`);
  await replay.waitFor(rewrites);
  replay.close();
  assert.deepEqual(modified(replay.events, 'big'), seen, 'the same events, from the history');

  // From after the burst: the next write only.
  const fresh = await s.client.watch(`${configmaps}?watch=1&resourceVersion=${last.metadata.resourceVersion}&fieldSelector=metadata.name%3Dbig`);
  const next = await s.client.put(`${configmaps}/big`, { metadata: { name: 'big' }, data: { seq: 'after', filler: 'small' } });
  assert.equal(next.status, 200, next.text.slice(0, 300));
  await fresh.waitFor(1);
  fresh.close();
  assert.deepEqual(modified(fresh.events, 'big'), [[next.json.metadata.resourceVersion, 'after']]);
  assert.equal((await s.client.delete(`${configmaps}/big`)).status, 200);
  await canary.assertServerIntact();
});

test('a custom resource swollen by its list items\' defaults past the stored-size limit is answered 413 and nothing is stored', async () => {
  const group = 'bounds.example.com';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: `swells.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { plural: 'swells', singular: 'swell', kind: 'Swell' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: {
          items: { type: 'array', items: { type: 'object', properties: {
            name: { type: 'string', default: 'item' },
            weight: { type: 'integer', default: 1 },
          } } },
        } } } } },
      }],
    },
  };
  assert.equal((await s.client.post(crdPath, crd)).status, 201);
  await eventually('swells established', async () => {
    const r = await s.client.get(`${crdPath}/swells.${group}`);
    return r.json.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True');
  });
  const swells = `/apis/${group}/v1/namespaces/${ns}/swells`;
  // 300,000 empty items: 0.9 MB sent, about 8 MB once every item has its defaults.
  const raw = `{"apiVersion":"${group}/v1","kind":"Swell","metadata":{"name":"swollen"},"spec":{"items":[${Array(300_000).fill('{}').join(',')}]}}`;
  assert.ok(raw.length < 1_000_000);
  const r = await s.client.send('POST', swells, { raw, headers: { 'Content-Type': 'application/json' } });
  assertStatus(r, 413, 'RequestEntityTooLarge', tooLarge);
  assert.equal((await s.client.get(`${swells}/swollen`)).status, 404, 'nothing is stored');
  assert.deepEqual((await s.client.get(swells)).json.items, []);
  // An ordinary one of the same kind still gets its defaults.
  const small = await s.client.post(swells, { apiVersion: `${group}/v1`, kind: 'Swell', metadata: { name: 'small' }, spec: { items: [{}] } });
  assert.equal(small.status, 201, small.text);
  assert.deepEqual(small.json.spec.items, [{ name: 'item', weight: 1 }]);
  await canary.assertServerIntact();
});

test('a ConfigMap whose stored bytes are over the limit is answered 413, on create and on update, and nothing changes', async () => {
  // Data within ConfigMap's own 1 MiB, labels beyond: together over 1.5 MiB stored.
  const data = { payload: 'p'.repeat(1_000_000) };
  const labels: Record<string, string> = {};
  for (let i = 0; i < 6_000; i++) labels[`label-${String(i).padStart(5, '0')}-${'k'.repeat(40)}`] = 'v'.repeat(60);
  const created = await s.client.post(configmaps, { metadata: { name: 'over', labels }, data });
  assertStatus(created, 413, 'RequestEntityTooLarge', tooLarge);
  assert.equal((await s.client.get(`${configmaps}/over`)).status, 404, 'nothing is stored');

  const fits = await s.client.post(configmaps, { metadata: { name: 'over' }, data });
  assert.equal(fits.status, 201, fits.text.slice(0, 300));
  const updated = await s.client.put(`${configmaps}/over`, { ...fits.json, metadata: { ...fits.json.metadata, labels } });
  assertStatus(updated, 413, 'RequestEntityTooLarge', tooLarge);
  const kept = await s.client.get(`${configmaps}/over`);
  assert.equal(kept.json.metadata.resourceVersion, fits.json.metadata.resourceVersion, 'the update left the object as it was');
  assert.equal(kept.json.metadata.labels, undefined);
  assert.equal((await s.client.delete(`${configmaps}/over`)).status, 200);
  await canary.assertServerIntact();
});
