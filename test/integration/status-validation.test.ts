// The status sub-resource of the core kinds (and of disruption budgets)
// validates what it is sent as upstream's ValidateXStatusUpdate does, with
// upstream's messages, and never changes the spec: a status write keeps the
// stored spec whatever it carries. Table-driven, one write per row.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertStatusWrite, startTestServer, TestServer, createdAt, writeStatus } from '../support/server.js';

let s: TestServer;
after(async () => { await s.close(); });

type Obj = Record<string, any>;
const ns = '/api/v1/namespaces/default';
const container = { name: 'c', image: 'nginx' };

/** [what, object path, change, the messages expected (none: accepted)]. */
type Row = [string, () => string, (obj: Obj) => void, string[]];

const paths: Record<string, string> = {};
before(async () => {
  s = await startTestServer();
  paths.pod = await createdAt(s, `${ns}/pods`, { metadata: { name: 'p' }, spec: { nodeName: 'node-a', restartPolicy: 'Never', containers: [container] } });
  paths.svc = await createdAt(s, `${ns}/services`, { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } });
  paths.lb = await createdAt(s, `${ns}/services`, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } });
  paths.rc = await createdAt(s, `${ns}/replicationcontrollers`, { metadata: { name: 'rc' }, spec: { replicas: 1, selector: { app: 'a' }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [container] } } } });
  paths.quota = await createdAt(s, `${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { pods: '5' } } });
  paths.pvc = await createdAt(s, `${ns}/persistentvolumeclaims`, { metadata: { name: 'claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  paths.pv = await createdAt(s, '/api/v1/persistentvolumes', { metadata: { name: 'pv' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } } });
  paths.node = await createdAt(s, '/api/v1/nodes', { metadata: { name: 'node-a' } });
  paths.pdb = await createdAt(s, '/apis/policy/v1/namespaces/default/poddisruptionbudgets', { metadata: { name: 'budget' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'none' } } } });
});

const condition = { type: 'Custom', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Because', message: '' };

const rows: Row[] = [
  ['pod: custom condition types are qualified names (reported under metadata, as upstream)', () => paths.pod!, (p) => { p.status.conditions = [{ type: 'Ready', status: 'True' }, { type: 'bad type!', status: 'True' }]; },
    ['metadata.conditions[1].Type: Invalid value: "bad type!": name part must consist of alphanumeric characters']],
  ['pod: pod IPs are addresses, one per family, never twice', () => paths.pod!, (p) => { p.status.podIP = '10.0.0.1'; p.status.podIPs = [{ ip: '10.0.0.1' }, { ip: '300.1.1.1' }]; },
    ['status.podIPs[1]: Invalid value: "300.1.1.1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)', 'status.podIPs: Invalid value:', 'may specify no more than one IP for each IP family']],
  ['pod: a repeated pod IP', () => paths.pod!, (p) => { p.status.podIPs = [{ ip: 'fd00::1' }, { ip: 'fd00::1' }]; }, ['status.podIPs[1]: Duplicate value:']],
  ['pod: host IPs start with hostIP', () => paths.pod!, (p) => { p.status.hostIP = '192.0.2.1'; p.status.hostIPs = [{ ip: '192.0.2.2' }]; }, ['status.hostIPs[0].ip: Invalid value: "192.0.2.2": must be equal to `hostIP`']],
  ['pod: the nominated node is a node name', () => paths.pod!, (p) => { p.status.nominatedNodeName = 'Bad_Node'; }, ['status.nominatedNodeName: Invalid value: "Bad_Node": a lowercase RFC 1123 subdomain']],
  ['pod: a valid status is taken, dual-stack', () => paths.pod!, (p) => {
    p.status = { ...p.status, phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], hostIP: '192.0.2.1', hostIPs: [{ ip: '192.0.2.1' }],
      containerStatuses: [{ name: 'c', image: 'nginx', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, startedAt: null, finishedAt: null } } }] };
  }, []],
  ['pod: a container of a pod that never restarts stays terminated', () => paths.pod!, (p) => { p.status.containerStatuses[0].state = { running: {} }; },
    ['status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state']],
  ['service: ingress points only for load balancers', () => paths.svc!, (svc) => { svc.status.loadBalancer = { ingress: [{ ip: '192.0.2.5' }] }; },
    ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"]],
  ['service: ingress addresses, hostnames and conditions', () => paths.lb!, (svc) => {
    svc.status.loadBalancer = { ingress: [{ ip: 'not-an-ip', ipMode: 'VIP' }, { hostname: '192.0.2.9' }, { ip: '192.0.2.7', ipMode: 'Tunnel' }] };
    svc.status.conditions = [{ ...condition, reason: '' }];
  }, [
    'status.loadBalancer.ingress[0].ip: Invalid value: "not-an-ip": must be a valid IP address',
    'status.loadBalancer.ingress[1].hostname: Invalid value: "192.0.2.9": must be a DNS name, not an IP address',
    'status.loadBalancer.ingress[2].ipMode: Unsupported value: "Tunnel": supported values: "Proxy", "VIP"',
    'status.conditions[0].reason: Required value: must be set',
  ]],
  ['replication controller: counts are never negative, never above replicas', () => paths.rc!, (rc) => { rc.status = { replicas: -1, readyReplicas: 2, availableReplicas: 3 }; }, [
    'status.replicas: Invalid value: -1: must be greater than or equal to 0',
    'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas',
  ]],
  ['quota: used quantities are not negative', () => paths.quota!, (q) => { q.status = { hard: { pods: '5' }, used: { pods: '-1' } }; }, [
    'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0',
  ]],
  ['claim: capacity is a quantity; only storage is allocated', () => paths.pvc!, (c) => { c.status = { capacity: { storage: '-1Gi' }, allocatedResources: { cpu: '1' } }; }, [
    'status.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity', 'status.allocatedResources: Unsupported value: "cpu": supported values: "storage"',
  ]],
  ['volume: any phase is taken, without a version too (an unconditional update)', () => paths.pv!, (pv) => { pv.status = { phase: 'Available' }; delete pv.metadata.resourceVersion; }, []],
  ['node: capacity is never negative; no address twice', () => paths.node!, (n) => {
    n.status = { capacity: { cpu: '-2', pods: '110' }, addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'InternalIP', address: '192.0.2.10' }] };
  }, ['status.capacity.cpu: Invalid value: "-2": must be greater than or equal to 0', 'status.addresses[1]: Duplicate value:']],
  ['disruption budget: counts never negative; conditions as metav1 says', () => paths.pdb!, (b) => {
    b.status = { ...b.status, disruptionsAllowed: -1, conditions: [{ ...condition, status: 'Maybe' }] };
  }, ['status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0', 'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"']],
];

for (const [what, path, change, expected] of rows) {
  test(`status validation: ${what}`, async () => {
    assertStatusWrite(await writeStatus(s, path(), change), expected);
  });
}

test('a status write never changes the spec, and a load balancer address defaults to a VIP', async () => {
  const r = await writeStatus(s, paths.lb!, (svc) => {
    svc.spec.ports = [{ port: 9999 }];
    svc.status = { loadBalancer: { ingress: [{ ip: '192.0.2.8' }] } };
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.spec.ports[0].port, 80);
  assert.deepEqual(r.json.status.loadBalancer.ingress, [{ ip: '192.0.2.8', ipMode: 'VIP' }]);
  const pod = await writeStatus(s, paths.pod!, (p) => { p.spec.nodeName = 'node-b'; p.spec.containers[0].image = 'other'; });
  assert.equal(pod.status, 200, pod.text);
  assert.equal(pod.json.spec.nodeName, 'node-a');
  assert.equal(pod.json.spec.containers[0].image, 'nginx');
});
