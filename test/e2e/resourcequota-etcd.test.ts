// Two API servers on one etcd charge one quota: 50 pod creates race for its
// last 5 units, half through each server. The charge is a compare-and-swap
// of the quota's status, so exactly 5 are admitted, whichever server each
// went through, and status.used counts exactly the pods stored.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTwoServersOnEtcd, type ServersOnEtcd } from '../support/etcd.js';
import type { TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let servers: ServersOnEtcd;
let one: TestServer;
let two: TestServer;
before(async () => {
  servers = await startTwoServersOnEtcd();
  ({ one, two } = servers);
});
after(async () => { await servers?.close(); });

const ns = '/api/v1/namespaces/race';
const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

test('50 creates on two servers for the last 5 units of a quota: exactly 5 succeed and status.used is exact', async () => {
  assert.equal((await one.client.post('/api/v1/namespaces', { metadata: { name: 'race' } })).status, 201);
  assert.equal((await one.client.post(`${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { pods: '10' } } })).status, 201);
  // Both servers see the quota with its use counted before the race.
  for (const s of [one, two]) {
    await eventually('the quota counted', async () => (await s.client.get(`${ns}/resourcequotas/q`)).json.status?.used?.pods === '0');
  }
  for (let i = 0; i < 5; i++) assert.equal((await (i % 2 ? two : one).client.post(`${ns}/pods`, pod(`before-${i}`))).status, 201);
  const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? two : one).client.post(`${ns}/pods`, pod(`race-${i}`))));
  const admitted = replies.filter((r) => r.status === 201);
  const refused = replies.filter((r) => r.status === 403);
  assert.equal(admitted.length, 5, replies.filter((r) => r.status !== 403).map((r) => r.text).join('\n'));
  assert.equal(refused.length, 45, replies.filter((r) => r.status !== 201 && r.status !== 403).map((r) => r.text).join('\n'));
  for (const r of refused) {
    assert.equal(r.json.reason, 'Forbidden');
    assert.match(r.json.message, /^pods "race-\d+" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10$/);
  }
  const stored = (await one.client.get(`${ns}/pods`)).json.items.length;
  assert.equal(stored, 10);
  for (const s of [one, two]) assert.deepEqual((await s.client.get(`${ns}/resourcequotas/q`)).json.status.used, { pods: '10' });
});
