// Two API servers on one real etcd hand out Service cluster IPs and node
// ports from shared ranges: 200 concurrent creates, half on each server,
// never get one value twice; deleting gives values back to both.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTwoServersOnEtcd, type ServersOnEtcd } from '../support/etcd.js';
import type { TestServer } from '../support/server.js';

let servers: ServersOnEtcd;
let one: TestServer;
let two: TestServer;
before(async () => {
  // 254 addresses for 200 services: the upper band runs out, so both bands are used.
  servers = await startTwoServersOnEtcd({ serviceClusterIpRange: '10.0.0.0/24', serviceNodePortRange: '30000-30299' });
  ({ one, two } = servers);
});
after(async () => { await servers?.close(); });

const service = (i: number) => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}` },
  spec: { type: 'NodePort', selector: { app: `a${i}` }, ports: [{ port: 80 }] },
});

test('200 concurrent creates on two servers never allocate one IP or node port twice', async () => {
  const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? two : one).client.post('/api/v1/namespaces/default/services', service(i))));
  for (const r of replies) assert.equal(r.status, 201, r.text);
  const list = (await one.client.get('/api/v1/namespaces/default/services')).json.items.filter((s: any) => s.metadata.name.startsWith('svc-'));
  assert.equal(list.length, 200);
  const ips = list.map((s: any) => s.spec.clusterIP);
  const ports = list.map((s: any) => s.spec.ports[0].nodePort);
  assert.equal(new Set(ips).size, 200, 'every cluster IP once');
  assert.equal(new Set(ports).size, 200, 'every node port once');
  for (const port of ports) assert.ok(port >= 30000 && port <= 30299);
});

test('values given back on one server are handed out again by the other', async () => {
  const gone = (await one.client.get('/api/v1/namespaces/default/services/svc-0')).json;
  assert.equal((await one.client.send('DELETE', '/api/v1/namespaces/default/services/svc-0')).status, 200);
  const again = await two.client.post('/api/v1/namespaces/default/services', {
    ...service(0), spec: { ...service(0).spec, clusterIP: gone.spec.clusterIP, ports: [{ port: 80, nodePort: gone.spec.ports[0].nodePort }] },
  });
  assert.equal(again.status, 201, again.text);
  const taken = await one.client.post('/api/v1/namespaces/default/services', { ...service(999), spec: { ...service(999).spec, clusterIP: gone.spec.clusterIP } });
  assert.equal(taken.status, 422);
  assert.match(taken.json.message, /provided IP is already allocated/);
});
