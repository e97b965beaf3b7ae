// The endpoints and endpoint-slice controllers on a real server, from pods
// whose status the test writes (no node agent runs): ready and not-ready
// pods, named target ports, a terminating then deleted pod, a changed
// selector, published not-ready addresses, more than 100 pods, and the
// Services the controllers leave alone (no selector, the product's own).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { upstreamCompat, vocabulary } from '../../src/machinery/vocabulary.js';
import { platServiceName } from '../../src/controllers/platservice.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.client.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
});
after(async () => { await s.close(); });

const ns = '/api/v1/namespaces/default';
const slicesPath = `/apis/${vocabulary.endpointDiscoveryGroup}/v1/namespaces/default/endpointslices`;

async function makePod(name: string, app: string, ip: string, ready: boolean, withNamedPort = true, finalizers?: string[]): Promise<void> {
  const ports = withNamedPort ? [{ name: 'http-port', containerPort: 8080 }] : [];
  const made = await s.client.post(`${ns}/pods`, {
    metadata: { name, labels: { app }, finalizers },
    spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx', ports }] },
  });
  assert.equal(made.status, 201, made.text);
  await setStatus(name, ip, ready);
}

async function setStatus(name: string, ip: string, ready: boolean): Promise<void> {
  const pod = (await s.client.get(`${ns}/pods/${name}`)).json;
  pod.status = { ...pod.status, phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  const put = await s.client.put(`${ns}/pods/${name}/status`, pod);
  assert.equal(put.status, 200, put.text);
}

const endpointsOf = async (name: string) => {
  const r = await s.client.get(`${ns}/endpoints/${name}`);
  return r.status === 200 ? r.json : undefined;
};
const slicesOf = async (name: string) => (await s.client.get(`${slicesPath}?labelSelector=${encodeURIComponent(`${vocabulary.serviceNameLabel}=${name}`)}`)).json.items as any[];
const ips = (addresses: any[] | undefined) => (addresses ?? []).map((a) => a.ip);

test('Endpoints and EndpointSlices follow the pods of a Service: ready, not ready, named ports', async () => {
  const svc = await s.client.post(`${ns}/services`, {
    metadata: { name: 'web', labels: { tier: 'front' } },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http-port' }, { name: 'metrics', port: 9090, targetPort: 9090 }] },
  });
  assert.equal(svc.status, 201, svc.text);
  // A finalizer keeps web-1 terminating for a while when it is deleted (no node agent runs to finish it).
  await makePod('web-1', 'web', '10.1.0.1', true, true, ['example.com/hold']);
  await makePod('web-2', 'web', '10.1.0.2', false);
  await makePod('web-3', 'web', '10.1.0.3', true, false);
  await makePod('other', 'other', '10.1.0.9', true);
  const ep = await eventually('the Endpoints list three pods', async () => {
    const e = await endpointsOf('web');
    const all = (e?.subsets ?? []).flatMap((x: any) => [...ips(x.addresses), ...ips(x.notReadyAddresses)]);
    return new Set(all).size === 3 && e;
  });
  // web-3 has no port named http-port: it is in the metrics subset only, so the ports do not share their addresses.
  const bySubsetPorts = Object.fromEntries(ep.subsets.map((x: any) => [x.ports.map((p: any) => `${p.name}:${p.port}`).join(','), [ips(x.addresses), ips(x.notReadyAddresses)]]));
  assert.deepEqual(bySubsetPorts, {
    'http:8080': [['10.1.0.1'], ['10.1.0.2']],
    'metrics:9090': [['10.1.0.1', '10.1.0.3'], ['10.1.0.2']],
  });
  const address = ep.subsets[0].addresses[0];
  assert.equal(address.nodeName, 'node-a');
  assert.equal(address.targetRef.kind, 'Pod');
  assert.equal(address.targetRef.name, 'web-1');
  assert.deepEqual(ep.metadata.labels, { tier: 'front' });
  assert.match(ep.metadata.annotations[vocabulary.lastChangeTriggerTimeAnnotation], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

  const slices = await eventually('two slices, one per port set', async () => {
    const list = await slicesOf('web');
    return list.length === 2 && list.reduce((n, x) => n + x.endpoints.length, 0) === 3 && list;
  });
  for (const slice of slices) {
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.metadata.labels[vocabulary.endpointSliceManagedByLabel], vocabulary.endpointSliceControllerName);
    assert.equal(slice.metadata.labels.tier, 'front');
    assert.match(slice.metadata.name, /^web-/);
    assert.deepEqual(slice.metadata.ownerReferences.map((o: any) => [o.kind, o.name, o.uid, o.controller]), [['Service', 'web', svc.json.metadata.uid, true]]);
  }
  const both = slices.find((x) => x.ports.length === 2);
  assert.deepEqual(both.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'metrics', port: 9090, protocol: 'TCP' }]);
  assert.deepEqual(both.endpoints.map((e: any) => [e.addresses[0], e.conditions]), [
    ['10.1.0.1', { ready: true, serving: true, terminating: false }],
    ['10.1.0.2', { ready: false, serving: false, terminating: false }],
  ]);
  // kubectl reads both kinds.
  assert.match(await s.kubectlOk(['get', 'endpoints', 'web']), /^web\s+10\.1\.0\.1:8080,10\.1\.0\.1:9090,10\.1\.0\.3:9090\s+\S+$/m);
  assert.match(await s.kubectlOk(['get', 'endpointslices', '-l', `${vocabulary.serviceNameLabel}=web`]), /^web-\S+\s+IPv4\s+8080,9090\s+10\.1\.0\.1,10\.1\.0\.2\s+\S+$/m);
});

test('a pod turning ready moves to addresses; a terminating pod leaves Endpoints and is terminating in its slice; a deleted one leaves both', async () => {
  await setStatus('web-2', '10.1.0.2', true);
  await eventually('web-2 is ready in the Endpoints', async () => {
    const e = await endpointsOf('web');
    return e?.subsets.some((x: any) => ips(x.addresses).includes('10.1.0.2'));
  });
  // The held pod terminates first: deleted at once (grace 0), as nothing would end a graceful deletion here, and held by its finalizer.
  const del = await s.client.delete(`${ns}/pods/web-1?gracePeriodSeconds=0`);
  assert.equal(del.status, 200, del.text);
  await eventually('web-1 leaves the Endpoints', async () => {
    const e = await endpointsOf('web');
    return e && !e.subsets.some((x: any) => [...ips(x.addresses), ...ips(x.notReadyAddresses)].includes('10.1.0.1'));
  });
  const terminating = await eventually('web-1 is terminating in its slice', async () => {
    const found = (await slicesOf('web')).flatMap((x) => x.endpoints).find((e: any) => e.addresses[0] === '10.1.0.1');
    return found?.conditions.terminating === true && found;
  });
  assert.deepEqual(terminating.conditions, { ready: false, serving: true, terminating: true });
  const released = await s.client.send('PATCH', `${ns}/pods/web-1`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(released.status, 200, released.text);
  await eventually('web-1 leaves the slices', async () => !(await slicesOf('web')).flatMap((x) => x.endpoints).some((e: any) => e.addresses[0] === '10.1.0.1'));
});

test('a changed selector changes the endpoints; publishNotReadyAddresses lists not-ready pods as addresses', async () => {
  const svc = (await s.client.get(`${ns}/services/web`)).json;
  svc.spec.selector = { app: 'other' };
  svc.spec.publishNotReadyAddresses = true;
  assert.equal((await s.client.put(`${ns}/services/web`, svc)).status, 200);
  await setStatus('other', '10.1.0.9', false);
  await eventually('only the other pod, as a ready address', async () => {
    const e = await endpointsOf('web');
    return e && JSON.stringify(e.subsets.map((x: any) => [ips(x.addresses), ips(x.notReadyAddresses)])) === JSON.stringify([[['10.1.0.9'], []]]);
  });
  await eventually('one slice with the other pod, ready because published', async () => {
    const eps = (await slicesOf('web')).flatMap((x) => x.endpoints);
    return eps.length === 1 && eps[0].addresses[0] === '10.1.0.9' && eps[0].conditions.ready === true && eps[0].conditions.serving === true;
  });
});

test('a Service without selector and the product\'s own Service are left alone; a deleted Service takes its Endpoints and slices', async () => {
  await s.client.post(`${ns}/services`, { metadata: { name: 'external' }, spec: { ports: [{ port: 80 }] } });
  const byHand = await s.client.post(`${ns}/endpoints`, { metadata: { name: 'external' }, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80 }] }] });
  assert.equal(byHand.status, 201);
  const plat = await eventually('the product\'s Service has its Endpoints', () => endpointsOf(platServiceName));
  assert.ok(plat.subsets.every((x: any) => x.addresses.every((a: any) => a.targetRef === undefined)));
  // Let the controllers see the changes above, then check nothing was written for these Services.
  await s.client.post(`${ns}/services`, { metadata: { name: 'marker' }, spec: { selector: { app: 'none' }, ports: [{ port: 80 }] } });
  await eventually('the marker Service has its placeholder slice', async () => (await slicesOf('marker')).length === 1);
  assert.deepEqual((await endpointsOf('external')).subsets, byHand.json.subsets);
  assert.equal((await slicesOf('external')).length, 0);
  // The product's Service has one slice, the API server's own (platslice.ts), never the controller's.
  const platSlices = await slicesOf(platServiceName);
  assert.deepEqual(platSlices.map((x) => [x.metadata.name, x.metadata.labels]), [[platServiceName, { [vocabulary.serviceNameLabel]: platServiceName, [upstreamCompat.serviceNameLabel]: platServiceName }]]);
  const placeholder = (await slicesOf('marker'))[0];
  assert.deepEqual([placeholder.endpoints, placeholder.ports ?? []], [[], []]);

  assert.equal((await s.client.delete(`${ns}/services/web`)).status, 200);
  await eventually('the Endpoints go with the Service', async () => (await endpointsOf('web')) === undefined);
  await eventually('the slices go with the Service (garbage collector)', async () => (await slicesOf('web')).length === 0);
});

test('more than 100 pods make more than one slice; Endpoints hold them all', async () => {
  await s.client.post(`${ns}/services`, { metadata: { name: 'many' }, spec: { selector: { app: 'many' }, ports: [{ port: 80 }] } });
  const count = 130;
  for (let i = 0; i < count; i++) await makePod(`many-${i}`, 'many', `10.2.${Math.floor(i / 200)}.${(i % 200) + 1}`, i % 2 === 0, false);
  const slices = await eventually('130 endpoints in slices', async () => {
    const list = await slicesOf('many');
    return list.reduce((n, x) => n + x.endpoints.length, 0) === count && list;
  });
  assert.deepEqual(slices.map((x) => x.endpoints.length).sort((a, b) => a - b), [30, 100]);
  await eventually('130 addresses in the Endpoints', async () => {
    const e = await endpointsOf('many');
    return e?.subsets.reduce((n: number, x: any) => n + (x.addresses ?? []).length + (x.notReadyAddresses ?? []).length, 0) === count;
  });
});
