// Deleting a namespace that holds 10,000 objects of several kinds, with every
// controller running: the namespace goes, /readyz (polled every 100 ms
// throughout) never answers anything but 200, and no controller's queue ever
// ran more syncs at once than its worker bound (each queue keeps its
// high-water mark).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { resources, resourceType, type ResourceHandle } from '../../src/client/resources.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { eventually } from '../support/eventually.js';

const ns = 'crowded';
const total = 10_000;
const kinds: { handle: ResourceHandle; body: (name: string) => Record<string, unknown> }[] = [
  { handle: resources.configMaps, body: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } }) },
  { handle: resources.secrets, body: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: { k: 'dg==' } }) },
  { handle: resources.serviceAccounts, body: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }) },
  {
    handle: resources.roles,
    body: (name) => ({ apiVersion: `${vocabulary.rbacGroup}/v1`, kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }),
  },
];

let s: TestServer;
before(async () => { s = await startTestServer({ controllers: ['*'] }); });
after(async () => { await s.close(); });

test(`a namespace of ${total.toLocaleString('en-US')} objects goes without /readyz failing, each queue within its worker bound`, async (t) => {
  const r = await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  assert.equal(r.status, 201, r.text);
  // Written in-process: the test is about the deletion, not about HTTP writes.
  const client = new InProcessClient(s.registry, 'namespace-deletion-test');
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = next++; i < total; i = next++) {
      const kind = kinds[i % kinds.length]!;
      await client.create(resourceType(client, kind.handle), ns, kind.body(`obj-${i}`));
    }
  }));

  let polls = 0;
  const failures: string[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      polls++;
      try {
        const ready = await s.client.get('/readyz');
        if (ready.status !== 200) failures.push(`${ready.status} ${ready.text}`);
      } catch (e) {
        failures.push(String(e));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    const del = await s.client.delete(`/api/v1/namespaces/${ns}`);
    assert.equal(del.status, 200, del.text);
    await eventually(`namespace ${ns} is gone`, async () => {
      const got = await s.client.get(`/api/v1/namespaces/${ns}`);
      if (got.status !== 404) assert.equal(got.status, 200, got.text);
      return got.status === 404;
    }, 120_000);
  } finally {
    probing = false;
    await prober;
  }
  assert.ok(polls > 1, 'the probe ran during the deletion');
  assert.deepEqual(failures, [], '/readyz never failed');

  const queues = s.controllerManager.queues();
  const byName = new Map(queues.map((q) => [q.name, q]));
  for (const name of ['namespace', 'serviceaccount_tokens_service', 'serviceaccount_tokens_secret', 'garbage_collector_attempt_to_delete']) {
    assert.ok(byName.has(name), `queue ${name} runs`);
  }
  assert.ok(byName.get('serviceaccount_tokens_service')!.peakRunning >= 1, 'the token controller had work');
  t.diagnostic(`${polls} /readyz polls; peak syncs at once: ${queues.map((q) => `${q.name} ${q.peakRunning}/${q.workers}`).join(', ')}`);
  for (const q of queues) assert.ok(q.peakRunning <= q.workers, `${q.name}: ${q.peakRunning} syncs at once, bound ${q.workers}`);
});
