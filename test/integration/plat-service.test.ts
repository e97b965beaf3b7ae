// The product's Service in default (upstream's `kubernetes` Service): made
// at start at the first address of the range, its Endpoints listing every
// API server whose store lease is alive, each server joining and leaving as
// upstream's lease reconciler lets it. The addresses are given (TEST-NET),
// never dialed.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { PlatServiceController } from '../../src/controllers/platservice.js';
import { StoredServerLeases } from '../../src/registry/masterleases.js';
import { product, upstreamCompat, vocabulary } from '../../src/machinery/vocabulary.js';
import { sliceFromEndpoints } from '../../src/controllers/platslice.js';

let s: TestServer;
before(async () => { s = await startTestServer({ advertiseAddress: '192.0.2.10', serviceClusterIpRange: '10.98.0.0/24' }); });
after(async () => { await s.close(); });

const endpoints = async () => (await s.client.get(`/api/v1/namespaces/default/endpoints/${product.name}`)).json;
const slice = async () => (await s.client.get(`/apis/${vocabulary.endpointDiscoveryGroup}/v1/namespaces/default/endpointslices/${product.name}`)).json;

test('the Service is made at the range\'s first address, 443 to the secure port, and its Endpoints name this server', async () => {
  await eventually('the Service exists', async () => (await s.client.get(`/api/v1/namespaces/default/services/${product.name}`)).status === 200);
  const svc = (await s.client.get(`/api/v1/namespaces/default/services/${product.name}`)).json;
  assert.deepEqual([svc.spec.type, svc.spec.clusterIP, svc.spec.ports], ['ClusterIP', '10.98.0.1', [{ name: 'https', port: 443, protocol: 'TCP', targetPort: s.port }]]);
  assert.deepEqual(svc.metadata.labels, { component: 'apiserver', provider: product.name });
  await eventually('the Endpoints list this server', async () => (await endpoints()).subsets?.length === 1);
  assert.deepEqual((await endpoints()).subsets, [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'https', port: s.port, protocol: 'TCP' }] }]);
  assert.deepEqual((await endpoints()).metadata.labels, { [vocabulary.endpointSliceSkipMirrorLabel]: 'true' });
  // Its EndpointSlice, as upstream's EndpointsAdapter writes it: the Service's name, the service-name label only, a ready endpoint per server.
  await eventually('the EndpointSlice lists this server', async () => (await slice()).endpoints?.length === 1);
  const made = await slice();
  assert.deepEqual([made.metadata.labels, made.addressType, made.endpoints, made.ports], [
    { [vocabulary.serviceNameLabel]: product.name, [upstreamCompat.serviceNameLabel]: product.name }, 'IPv4', [{ addresses: ['192.0.2.10'], conditions: { ready: true } }], [{ name: 'https', port: s.port, protocol: 'TCP' }],
  ]);
  assert.equal(made.metadata.ownerReferences, undefined);
  // kubectl shows it as upstream's kubernetes Service.
  const shown = await s.kubectl(['get', 'svc', product.name, '-n', 'default', '-o', 'wide']);
  assert.match(shown.stdout, new RegExp(`${product.name}\\s+ClusterIP\\s+10\\.98\\.0\\.1\\s+<none>\\s+443/TCP`));
});

test('another server joins the Endpoints while its lease is renewed, and leaves when it stops', async () => {
  const other = new PlatServiceController(new InProcessClient(s.registry, 'other-apiserver'), {
    advertise: { ip: '192.0.2.11', port: 7443 }, clusterIP: '10.98.0.1', securePort: 7443,
    leases: new StoredServerLeases(s.registry.backend), intervalMs: 50,
  });
  other.start();
  try {
    await eventually('both servers are listed', async () => (await endpoints()).subsets?.length === 2);
    assert.deepEqual((await endpoints()).subsets.map((x: any) => [x.addresses, x.ports[0].port]),
      [[[{ ip: '192.0.2.11' }], 7443], [[{ ip: '192.0.2.10' }], s.port]].sort((a: any, b: any) => a[1] - b[1]));
    // The slice follows the Endpoints' first subset (upstream's servers share one port); both on one port share it.
    const first = (await endpoints()).subsets[0];
    await eventually('the slice follows the first subset', async () => deepEqualish((await slice()).endpoints, first.addresses.map((a: any) => ({ addresses: [a.ip], conditions: { ready: true } }))));
    assert.deepEqual((await slice()).ports, first.ports);
  } finally {
    await other.stop();
  }
  assert.deepEqual((await endpoints()).subsets.map((x: any) => x.addresses[0].ip), ['192.0.2.10']);
  assert.deepEqual((await slice()).endpoints, [{ addresses: ['192.0.2.10'], conditions: { ready: true } }]);
  const same = new PlatServiceController(new InProcessClient(s.registry, 'same-port-apiserver'), {
    advertise: { ip: '192.0.2.13', port: s.port }, clusterIP: '10.98.0.1', securePort: s.port,
    leases: new StoredServerLeases(s.registry.backend), intervalMs: 50,
  });
  same.start();
  try {
    await eventually('two servers on one port share the slice', async () => (await slice()).endpoints?.length === 2);
    assert.deepEqual((await slice()).endpoints.map((e: any) => e.addresses[0]), ['192.0.2.10', '192.0.2.13']);
  } finally {
    await same.stop();
  }
  assert.deepEqual((await slice()).endpoints.map((e: any) => e.addresses[0]), ['192.0.2.10']);
  // A lease that expired without its server saying goodbye is dropped by whoever reads the leases next.
  const leases = new StoredServerLeases(s.registry.backend);
  await leases.renew({ ip: '192.0.2.12', port: 8443 }, -1);
  assert.deepEqual((await leases.alive()).map((a) => a.ip), ['192.0.2.10']);
});

const deepEqualish = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

test('the slice upstream derives from an Endpoints: IPv6 only when every address is, addresses of the other family left out, not-ready ones not ready', () => {
  const from = (addresses: string[], notReady: string[] = []) => sliceFromEndpoints({ metadata: { name: 'x', namespace: 'default' }, subsets: [{
    addresses: addresses.map((ip) => ({ ip })), notReadyAddresses: notReady.map((ip) => ({ ip })), ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
  }] });
  assert.equal(from(['fd00::1', 'fd00::2']).addressType, 'IPv6');
  const mixed = from(['192.0.2.1', 'fd00::1'], ['192.0.2.2']);
  assert.deepEqual([mixed.addressType, mixed.endpoints], ['IPv4', [
    { addresses: ['192.0.2.1'], conditions: { ready: true } }, { addresses: ['192.0.2.2'], conditions: { ready: false } },
  ]]);
  const none = sliceFromEndpoints({ metadata: { name: 'x', namespace: 'default' }, subsets: [] });
  assert.deepEqual([none.addressType, none.endpoints, none.ports], ['IPv4', [], []]);
});
