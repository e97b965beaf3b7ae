// The rules the endpoints controllers share, as upstream's endpoint
// utilities: which pods are endpoints, the port a Service port leads to, the
// trigger-time format, and how Endpoints subsets are packed and capped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { managedElsewhere, podIsEndpoint, podPortFor, serviceFamilies, TriggerTimes } from '../../../src/controllers/endpointpods.js';
import { maxEndpointsAddresses, packSubsets } from '../../../src/controllers/endpoints.js';
import { platServiceName } from '../../../src/controllers/platservice.js';

const pod = (extra: Record<string, any> = {}) => ({ metadata: { name: 'p' }, spec: { restartPolicy: 'Always', ...extra.spec }, status: { podIP: '10.0.0.1', phase: 'Running', ...extra.status }, ...(extra.deleting ? { metadata: { name: 'p', deletionTimestamp: '2024-01-01T00:00:00Z' } } : {}) });

test('which pods are endpoints: an address, not finished for good, terminating only when asked', () => {
  assert.equal(podIsEndpoint(pod(), false), true);
  assert.equal(podIsEndpoint(pod({ status: { podIP: undefined } }), false), false);
  assert.equal(podIsEndpoint(pod({ deleting: true }), false), false);
  assert.equal(podIsEndpoint(pod({ deleting: true }), true), true);
  assert.equal(podIsEndpoint(pod({ spec: { restartPolicy: 'Never' }, status: { phase: 'Succeeded' } }), false), false);
  assert.equal(podIsEndpoint(pod({ spec: { restartPolicy: 'OnFailure' }, status: { phase: 'Failed' } }), false), true);
  assert.equal(podIsEndpoint(pod({ spec: { restartPolicy: 'Always' }, status: { phase: 'Failed' } }), false), true);
});

test('the port of a Service port on a pod: a number as it is, a name looked up by name and protocol', () => {
  const p = { spec: { containers: [{ ports: [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }] }] } };
  assert.equal(podPortFor(p, { port: 80 }), 80);
  assert.equal(podPortFor(p, { port: 80, targetPort: 9090 }), 9090);
  assert.equal(podPortFor(p, { port: 80, targetPort: 'http' }), 8080);
  assert.equal(podPortFor(p, { port: 53, targetPort: 'dns' }), undefined);
  assert.equal(podPortFor(p, { port: 53, targetPort: 'dns', protocol: 'UDP' }), 53);
});

test('Services the controllers leave alone, and the families of a Service\'s endpoints', () => {
  assert.equal(managedElsewhere({ metadata: { namespace: 'default', name: platServiceName }, spec: { selector: { a: 'b' } } }), true);
  assert.equal(managedElsewhere({ metadata: { namespace: 'default', name: 'x' }, spec: {} }), true);
  assert.equal(managedElsewhere({ metadata: { namespace: 'default', name: 'x' }, spec: { selector: {} } }), false);
  assert.equal(managedElsewhere({ metadata: { namespace: 'default', name: 'x' }, spec: { type: 'ExternalName', externalName: 'a.example.com', selector: { a: 'b' } } }), true);
  assert.deepEqual(serviceFamilies({ spec: { ipFamilies: ['IPv6', 'IPv4'] } }), ['IPv6', 'IPv4']);
  assert.deepEqual(serviceFamilies({ spec: { clusterIP: 'fd00::10' } }), ['IPv6']);
  assert.deepEqual(serviceFamilies({ spec: { clusterIP: 'None' } }), ['IPv4']);
});

test('trigger times are the latest change seen, in Go\'s RFC3339Nano form, taken once', () => {
  let now = Date.parse('2024-05-06T07:08:09.120Z');
  const times = new TriggerTimes(() => now);
  times.observe('a/b');
  now += 5;
  times.observe('a/b');
  assert.equal(times.take('a/b'), '2024-05-06T07:08:09.125Z');
  assert.equal(times.take('a/b'), undefined);
  now = Date.parse('2024-05-06T07:08:10.000Z');
  times.observe('a/b');
  assert.equal(times.take('a/b'), '2024-05-06T07:08:10Z');
});

test('subsets: ports that share their addresses go together, sorted; more than 1000 addresses are cut, ready ones kept first', () => {
  const addr = (ip: string) => ({ ip, targetRef: { uid: ip } });
  const groups = new Map([
    ['a', { ports: [{ name: 'b', port: 2, protocol: 'TCP' }], ready: [addr('10.0.0.2'), addr('10.0.0.1')], notReady: [] as any[] }],
    ['b', { ports: [{ name: 'a', port: 1, protocol: 'TCP' }], ready: [addr('10.0.0.1'), addr('10.0.0.2')], notReady: [] as any[] }],
  ]);
  assert.deepEqual(packSubsets(groups), {
    truncated: false,
    subsets: [{ addresses: [addr('10.0.0.1'), addr('10.0.0.2')], ports: [{ name: 'a', port: 1, protocol: 'TCP' }, { name: 'b', port: 2, protocol: 'TCP' }] }],
  });
  const many = (n: number, base: number) => Array.from({ length: n }, (_, i) => addr(`10.${base}.${i >> 8}.${i & 255}`));
  const big = packSubsets(new Map([['x', { ports: [{ port: 80, protocol: 'TCP' }], ready: many(900, 1), notReady: many(300, 2) }]]));
  assert.equal(big.truncated, true);
  assert.equal(big.subsets[0].addresses.length, 900);
  assert.equal(big.subsets[0].notReadyAddresses.length, maxEndpointsAddresses - 900);
});
