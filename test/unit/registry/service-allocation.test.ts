// How Services take cluster IPs and node ports, as upstream's service REST:
// families and policy worked out, addresses and ports by number or at
// random, upstream's refusals word for word, and transactions that give back
// what a failed write took and what an update no longer holds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/api/kind.js';
import { ApiError } from '../../../src/machinery/errors.js';
import type { IPFamily } from '../../../src/machinery/ipnet.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { NodePortRange, ServiceIPRange } from '../../../src/registry/allocation/ranges.js';
import { StoredRange } from '../../../src/registry/allocation/stored.js';
import { ServiceAllocators } from '../../../src/registry/allocation/service.js';

function allocators(...cidrs: string[]) {
  const backend = new MemoryBackend();
  const addresses = new Map<IPFamily, StoredRange<string>>();
  cidrs.forEach((cidr, i) => {
    const range = ServiceIPRange.parse(cidr)!;
    addresses.set(range.family, new StoredRange(backend, `/registry/ranges/${i ? 'secondary' : ''}serviceips`, range, 'IP'));
  });
  const ports = new StoredRange(backend, '/registry/ranges/servicenodeports', NodePortRange.parse('30000-32767'), 'port');
  const first = [...addresses.values()][0]!.range as ServiceIPRange;
  return { al: new ServiceAllocators(addresses, first.family, ports), addresses, ports };
}

const svc = (name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { type: 'ClusterIP', selector: { app: name }, ports: [{ port: 80, protocol: 'TCP' }], ...spec } });

const rejects = async (p: Promise<unknown>, code: number, message: string) =>
  assert.rejects(p, (e: ApiError) => { assert.equal(e.code, code); assert.equal(e.message, message); return true; });

test('a ClusterIP service gets one address of the default family, from above the static band', async () => {
  const { al, addresses } = allocators('10.0.0.0/24');
  const s = svc('a', {});
  await (await al.allocateCreate(s, false)).commit();
  const last = Number(s.spec.clusterIP.split('.')[3]);
  assert.ok(last > 16 && last < 255, s.spec.clusterIP);
  assert.deepEqual([s.spec.clusterIPs, s.spec.ipFamilies, s.spec.ipFamilyPolicy], [[s.spec.clusterIP], ['IPv4'], 'SingleStack']);
  assert.equal((await addresses.get('IPv4')!.read()).bitmap.used, 1);
});

test('an address asked for is taken once; upstream\'s refusals for a taken one, one outside the range, a family not configured', async () => {
  const { al } = allocators('10.0.0.0/24');
  const a = svc('a', { clusterIP: '10.0.0.10' });
  await al.allocateCreate(a, false);
  assert.deepEqual(a.spec.clusterIPs, ['10.0.0.10']);
  await rejects(al.allocateCreate(svc('b', { clusterIP: '10.0.0.10', clusterIPs: ['10.0.0.10'] }), false), 422,
    'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated');
  await rejects(al.allocateCreate(svc('c', { clusterIPs: ['10.1.0.1'] }), false), 422,
    'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.1"}: failed to allocate IP 10.1.0.1: the provided IP (10.1.0.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24');
  await rejects(al.allocateCreate(svc('d', { clusterIPs: ['fd00::1'] }), false), 422,
    'Service "d" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster');
  await rejects(al.allocateCreate(svc('e', { ipFamilyPolicy: 'RequireDualStack' }), false), 422,
    'Service "e" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
  await rejects(al.allocateCreate(svc('f', { ipFamilies: ['IPv6'] }), false), 422,
    'Service "f" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster');
});

test('a full range is upstream\'s 500', async () => {
  const { al } = allocators('10.0.0.0/30'); // two usable addresses
  await al.allocateCreate(svc('a', {}), false);
  await al.allocateCreate(svc('b', {}), false);
  await rejects(al.allocateCreate(svc('c', {}), false), 500, 'Internal error occurred: failed to allocate a serviceIP: range is full');
});

test('dual-stack: PreferDualStack gets both families, SingleStack one; headless selectorless services ask for both', async () => {
  const { al } = allocators('10.0.0.0/24', 'fd00::/108');
  const both = svc('both', { ipFamilyPolicy: 'PreferDualStack' });
  await al.allocateCreate(both, false);
  assert.deepEqual(both.spec.ipFamilies, ['IPv4', 'IPv6']);
  assert.match(both.spec.clusterIPs[1], /^fd00::/);
  const v6 = svc('v6', { ipFamilies: ['IPv6'] });
  await al.allocateCreate(v6, false);
  assert.deepEqual([v6.spec.ipFamilies, v6.spec.clusterIPs.length], [['IPv6'], 1]);
  const headless = svc('h', { clusterIP: 'None', clusterIPs: ['None'], selector: undefined });
  await al.allocateCreate(headless, false);
  assert.deepEqual([headless.spec.ipFamilyPolicy, headless.spec.ipFamilies, headless.spec.clusterIPs], ['RequireDualStack', ['IPv4', 'IPv6'], ['None']]);
  // Dropping to one family needs SingleStack.
  const down = structuredClone(both);
  down.spec.ipFamilies = ['IPv4'];
  await rejects(al.allocateUpdate(down, both, false), 422,
    'Service "both" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be \'SingleStack\' to release the secondary IP family');
});

test('node ports: one per service port, shared by ports of one number, asked-for ones by number; refusals as upstream', async () => {
  const { al, ports, addresses } = allocators('10.0.0.0/24');
  const np = svc('np', { type: 'NodePort', ports: [{ port: 53, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }, { port: 80, protocol: 'TCP', nodePort: 30080 }] });
  await al.allocateCreate(np, false);
  const [tcp, udp, web] = np.spec.ports.map((p: any) => p.nodePort);
  assert.equal(tcp, udp, 'the same port number shares its node port');
  assert.equal(web, 30080);
  assert.ok(tcp >= 30000 + 86, 'dynamic ports come from above the static band');
  await rejects(al.allocateCreate(svc('taken', { type: 'NodePort', ports: [{ port: 1, protocol: 'TCP', nodePort: 30080 }] }), false), 422,
    'Service "taken" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
  await rejects(al.allocateCreate(svc('outside', { type: 'NodePort', ports: [{ port: 1, protocol: 'TCP', nodePort: 80 }] }), false), 422,
    'Service "outside" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767');
  // A failed create gives back what it took before failing (its address here).
  assert.equal((await ports.read()).bitmap.used, 2);
  assert.equal((await addresses.get('IPv4')!.read()).bitmap.used, 1);
  const lb = svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' });
  await al.allocateCreate(lb, false);
  assert.ok(lb.spec.ports[0].nodePort && lb.spec.healthCheckNodePort && lb.spec.ports[0].nodePort !== lb.spec.healthCheckNodePort);
  const noPorts = svc('lb2', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false });
  await al.allocateCreate(noPorts, false);
  assert.equal(noPorts.spec.ports[0].nodePort, undefined);
});

test('transactions: a failed write gives back what it took; an update gives back what it dropped once stored; delete gives back all', async () => {
  const { al, addresses, ports } = allocators('10.0.0.0/24');
  const used = async () => [(await addresses.get('IPv4')!.read()).bitmap.used, (await ports.read()).bitmap.used];
  const np = svc('np', { type: 'NodePort' });
  const created = await al.allocateCreate(np, false);
  assert.deepEqual(await used(), [1, 1]);
  await created.revert();
  assert.deepEqual(await used(), [0, 0]);
  await (await al.allocateCreate(np, false)).commit();
  const toClusterIP = structuredClone(np);
  toClusterIP.spec.type = 'ClusterIP';
  delete toClusterIP.spec.ports[0].nodePort;
  const update = await al.allocateUpdate(toClusterIP, np, false);
  assert.deepEqual(await used(), [1, 1], 'nothing goes back before the write is stored');
  await update.commit();
  assert.deepEqual(await used(), [1, 0]);
  const toExternal = { ...structuredClone(toClusterIP), spec: { type: 'ExternalName', externalName: 'example.com' } };
  await (await al.allocateUpdate(toExternal, toClusterIP, false)).commit();
  assert.deepEqual(await used(), [0, 0]);
  const back = svc('np', { type: 'NodePort' });
  await (await al.allocateUpdate(back, toExternal, false)).commit();
  assert.deepEqual(await used(), [1, 1]);
  await al.releaseAll(back);
  assert.deepEqual(await used(), [0, 0]);
});

test('a dry run takes nothing, yet answers what a write would get', async () => {
  const { al, addresses, ports } = allocators('10.0.0.0/24');
  const s = svc('dry', { type: 'NodePort' });
  await al.allocateCreate(s, true);
  assert.equal(s.spec.clusterIP, '10.0.0.0', 'as upstream, a dry run shows the range\'s network address');
  assert.ok(s.spec.ports[0].nodePort >= 30000);
  assert.equal((await addresses.get('IPv4')!.read()).bitmap.used, 0);
  assert.equal((await ports.read()).bitmap.used, 0);
  await al.allocateCreate(svc('real', { type: 'NodePort', ports: [{ port: 1, protocol: 'TCP', nodePort: 30001 }] }), false);
  await rejects(al.allocateCreate(svc('dry2', { type: 'NodePort', ports: [{ port: 1, protocol: 'TCP', nodePort: 30001 }] }), true), 422,
    'Service "dry2" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated');
});

test('the range flags: upstream\'s refusals; hooks that finish a write; a repair from the stored Services', async () => {
  const { parseServiceIPRanges, parseNodePortRange, serviceAllocation } = await import('../../../src/registry/allocation/index.js');
  assert.deepEqual(parseServiceIPRanges('10.0.0.0/24,fd00::/108').map((r) => r.text), ['10.0.0.0/24', 'fd00::/108']);
  const refused: [string, string][] = [
    ['10.0.0.0/24,fd00::/108,10.1.0.0/24', '--service-cluster-ip-range must not contain more than two entries'],
    ['10.0.0.0', 'service-cluster-ip-range[0] is not a valid cidr'],
    ['10.0.0.0/24,x', 'service-cluster-ip-range[1] is not an ip net'],
    ['10.0.0.0/8', 'specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12'],
    ['10.0.0.0/24,fd00::/64', 'specified --service-cluster-ip-range[1] is too large; for 128-bit addresses, the mask must be >= 108'],
    ['10.0.0.0/24,10.1.0.0/24', '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family'],
  ];
  for (const [flag, message] of refused) assert.throws(() => parseServiceIPRanges(flag), { message }, flag);
  assert.throws(() => parseNodePortRange('32000-31000'), /end port cannot be less than start port/);

  const backend = new MemoryBackend();
  const allocation = serviceAllocation(backend, parseServiceIPRanges('10.0.0.0/24'), parseNodePortRange('30000-32767'));
  const s = svc('hooked', { type: 'NodePort' });
  const finish = await allocation.hooks.beginCreate!(s, { dryRun: false });
  await finish(false); // the write failed: everything goes back
  const used = async () => Promise.all([...allocation.allocators.addresses.values(), allocation.allocators.nodePorts].map(async (r) => (await (r as StoredRange<unknown>).read()).bitmap.used));
  assert.deepEqual(await used(), [0, 0]);
  // A stored Service whose values the ranges lost (a crash between the two writes) is marked again by a repair.
  const stored = svc('stored', { type: 'NodePort', clusterIP: '10.0.0.10', clusterIPs: ['10.0.0.10'], ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] });
  const reports = await allocation.repair(async () => [stored]);
  assert.deepEqual(reports.map((r) => r.notMarked), [['10.0.0.10'], ['30080']]);
  assert.deepEqual(await used(), [1, 1]);
  await rejects(allocation.allocators.allocateCreate(svc('late', { clusterIPs: ['10.0.0.10'] }), false), 422,
    'Service "late" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated');
  await allocation.hooks.afterDelete!(stored);
  assert.deepEqual(await used(), [0, 0]);
});
