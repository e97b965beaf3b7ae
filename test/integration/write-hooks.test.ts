// A kind's write hooks (registry/hooks.ts), on a running server: a create or
// an update begins once its object is final and learns whether it was
// stored (validation failures, taken names and lost races are not; dry runs
// are), may fill in fields nobody then owns, and a removal is heard after it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { gadgetGroup, gadgets } from '../support/gadgets.js';
import type { KubeObject } from '../../src/api/kind.js';

let s: TestServer;
const heard: string[] = [];
before(async () => {
  s = await startTestServer();
  s.registry.addKind(gadgets);
  s.registry.store(gadgetGroup, 'v1', 'gadgets')!.useHooks({
    async beginCreate(obj: KubeObject, { dryRun }) {
      heard.push(`begin create ${obj.metadata!.name}${dryRun ? ' (dry)' : ''}`);
      obj.spec = { ...obj.spec, color: obj.spec?.color ?? 'assigned' };
      return async (stored) => { heard.push(`create ${obj.metadata!.name} ${stored ? 'stored' : 'not stored'}`); };
    },
    async beginUpdate(obj: KubeObject, old: KubeObject) {
      heard.push(`begin update ${obj.metadata!.name} from ${old.spec?.replicas ?? 0}`);
      return async (stored) => { heard.push(`update ${obj.metadata!.name} ${stored ? 'stored' : 'not stored'}`); };
    },
    async afterDelete(obj: KubeObject) {
      heard.push(`deleted ${obj.metadata!.name}`);
    },
  });
});
after(async () => { await s.close(); });

const path = (name = '') => `/apis/${gadgetGroup}/v1/namespaces/default/gadgets${name ? `/${name}` : ''}`;
const gadget = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: `${gadgetGroup}/v1`, kind: 'Gadget', metadata: { name, ...extra }, spec: { replicas: 1 } });
const take = () => heard.splice(0);

test('a create begins after admission, may fill fields nobody owns, and hears whether it was stored', async () => {
  const created = await s.client.post(path(), gadget('a'));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.spec.color, 'assigned');
  assert.deepEqual(created.json.metadata.managedFields[0].fieldsV1, { 'f:spec': { '.': {}, 'f:replicas': {} } }, 'the filled-in colour is nobody\'s');
  assert.deepEqual(take(), ['begin create a', 'create a stored']);
  assert.equal((await s.client.post(path(), gadget('a'))).status, 409);
  assert.deepEqual(take(), ['begin create a', 'create a not stored']);
  assert.equal((await s.client.post(path(), gadget('b', { labels: { 'not a key!': 'x' } }))).status, 422);
  assert.deepEqual(take(), ['begin create b', 'create b not stored']);
  assert.equal((await s.client.post(`${path()}?dryRun=All`, gadget('c'))).status, 201);
  assert.deepEqual(take(), ['begin create c (dry)', 'create c stored']);
});

test('an update begins with the old object and hears whether it was stored; a removal is heard once it happened', async () => {
  const live = (await s.client.get(path('a'))).json;
  assert.equal((await s.client.put(path('a'), { ...live, spec: { ...live.spec, replicas: 2 } })).status, 200);
  assert.deepEqual(take(), ['begin update a from 1', 'update a stored']);
  const now = (await s.client.get(path('a'))).json;
  assert.equal((await s.client.put(path('a'), { ...now, metadata: { ...now.metadata, labels: { 'not a key!': 'x' } } })).status, 422);
  // A failure on a cached copy is tried once more on a fresh read: each attempt is finished.
  assert.deepEqual([...new Set(take())], ['begin update a from 2', 'update a not stored']);
  // Held by a finalizer, the object is not gone yet; the update that lets it go removes it.
  const held = (await s.client.get(path('a'))).json;
  assert.equal((await s.client.put(path('a'), { ...held, metadata: { ...held.metadata, finalizers: ['test/hold'] } })).status, 200);
  take();
  assert.equal((await s.client.delete(path('a'))).status, 200);
  assert.deepEqual(take().filter((h) => h.startsWith('deleted')), []);
  const deleting = (await s.client.get(path('a'))).json;
  assert.equal((await s.client.put(path('a'), { ...deleting, metadata: { ...deleting.metadata, finalizers: [] } })).status, 200);
  assert.deepEqual(take(), ['begin update a from 2', 'deleted a', 'update a stored']);
  assert.equal((await s.client.post(path(), gadget('d'))).status, 201);
  take();
  assert.equal((await s.client.delete(path('d'))).status, 200);
  assert.deepEqual(take(), ['deleted d']);
});
