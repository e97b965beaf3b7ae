// The off-by-default plugins that default and check pods and services, as a
// user meets them: one server with them all turned on, one with the default
// set (they are off there, so the same requests pass unchanged).
// AlwaysPullImages, LimitPodHardAntiAffinityTopology, SecurityContextDeny,
// ExtendedResourceToleration and DenyServiceExternalIPs have no
// configuration.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const plugins = ['AlwaysPullImages', 'LimitPodHardAntiAffinityTopology', 'SecurityContextDeny', 'ExtendedResourceToleration', 'DenyServiceExternalIPs'];
// The ServiceAccount plugin (default-on) is not what these tests are about: no account has to exist first.
const common = { disableAdmissionPlugins: ['ServiceAccount'] };

let on: TestServer;
let off: TestServer;

before(async () => {
  [on, off] = await Promise.all([startTestServer({ ...common, enableAdmissionPlugins: plugins }), startTestServer(common)]);
  for (const s of [on, off]) assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'pods' } })).status, 201);
});

after(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

const pods = '/api/v1/namespaces/pods/pods';
const pod = (name: string, spec: Record<string, unknown> = {}, containers: Record<string, unknown>[] = [{ name: 'c', image: 'busybox' }]) =>
  ({ metadata: { name }, spec: { containers, ...spec } });

test('AlwaysPullImages sets every container to pull Always on create, and on an update that brings a new image', async () => {
  const body = pod('pull', { initContainers: [{ name: 'init', image: 'alpine', imagePullPolicy: 'Never' }] }, [{ name: 'c', image: 'busybox:1', imagePullPolicy: 'IfNotPresent' }]);
  const created = await on.client.post(pods, body);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.spec.containers[0].imagePullPolicy, 'Always');
  assert.equal(created.json.spec.initContainers[0].imagePullPolicy, 'Always');
  const plain = await off.client.post(pods, body);
  assert.equal(plain.json.spec.containers[0].imagePullPolicy, 'IfNotPresent', 'off by default');
  assert.equal(plain.json.spec.initContainers[0].imagePullPolicy, 'Never');
});

test('LimitPodHardAntiAffinityTopology refuses a required anti-affinity over any key but the hostname label', async () => {
  const term = (topologyKey: string) => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'x' } }, topologyKey }] } } });
  const zone = pod('spread', term('topology.example/zone'));
  const refused = await on.client.post(pods, zone);
  assertStatus(refused, 403, 'Forbidden',
    `pods "spread" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.example/zone but only key ${vocabulary.hostnameLabel} is allowed`);
  assert.equal((await on.client.post(pods, pod('by-host', term(vocabulary.hostnameLabel)))).status, 201);
  assert.equal((await off.client.post(pods, zone)).status, 201, 'off by default');
});

test('SecurityContextDeny refuses the elevated pod and container security-context fields, the first one found named', async () => {
  const cases: [Record<string, unknown>, Record<string, unknown>[] | undefined, string][] = [
    [{ securityContext: { supplementalGroups: [5] } }, undefined, 'pod.Spec.SecurityContext.SupplementalGroups is forbidden'],
    [{ securityContext: { runAsUser: 0, fsGroup: 3 } }, undefined, 'pod.Spec.SecurityContext.RunAsUser is forbidden'],
    [{ securityContext: { fsGroup: 3 } }, undefined, 'pod.Spec.SecurityContext.FSGroup is forbidden'],
    [{}, [{ name: 'c', image: 'busybox', securityContext: { seLinuxOptions: { level: 's0' } } }], 'SecurityContext.SELinuxOptions is forbidden'],
    [{ initContainers: [{ name: 'i', image: 'busybox', securityContext: { runAsUser: 7 } }] }, undefined, 'SecurityContext.RunAsUser is forbidden'],
  ];
  for (const [i, [spec, containers, why]] of cases.entries()) {
    const body = pod(`sc-${i}`, spec, containers);
    assertStatus(await on.client.post(pods, body), 403, 'Forbidden', `pods "sc-${i}" is forbidden: ${why}`);
    assert.equal((await off.client.post(pods, body)).status, 201, `off by default: ${why}`);
  }
  // runAsNonRoot and the rest of the context stay allowed.
  assert.equal((await on.client.post(pods, pod('sc-ok', { securityContext: { runAsNonRoot: true } }))).status, 201);
});

test('ExtendedResourceToleration adds a NoSchedule toleration per extended resource requested, once', async () => {
  const containers = [
    { name: 'a', image: 'busybox', resources: { requests: { 'example.com/gpu': '1', cpu: '1' }, limits: { 'example.com/gpu': '1' } } },
    { name: 'b', image: 'busybox', resources: { requests: { 'example.com/fpga': '2', [`${vocabulary.hostnameLabel.split('/')[0]}/native`]: '1' }, limits: { 'example.com/fpga': '2' } } },
  ];
  const body = pod('gpu', { tolerations: [{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }, containers);
  const created = await on.client.post(pods, body);
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.spec.tolerations, [
    { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'example.com/fpga', operator: 'Exists', effect: 'NoSchedule' },
  ]);
  const plain = await off.client.post(pods, body);
  assert.deepEqual(plain.json.spec.tolerations, [{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }], 'off by default');
});

test('DenyServiceExternalIPs refuses external IPs on a new service and added to an existing one', async () => {
  const services = '/api/v1/namespaces/pods/services';
  const service = (name: string, externalIPs?: string[]) => ({ metadata: { name }, spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) } });
  assertStatus(await on.client.post(services, service('ext', ['192.0.2.1'])), 403, 'Forbidden', 'services "ext" is forbidden: Use of external IPs is denied by admission control');
  assert.equal((await off.client.post(services, service('ext', ['192.0.2.1']))).status, 201, 'off by default');
  const plain = await on.client.post(services, service('plain'));
  assert.equal(plain.status, 201, plain.text);
  const added = { ...plain.json, spec: { ...plain.json.spec, externalIPs: ['192.0.2.9'] } };
  assertStatus(await on.client.put(`${services}/plain`, added), 403, 'Forbidden', 'services "plain" is forbidden: Use of external IPs is denied by admission control');
  // Keeping or removing existing ones is in test/unit/admission/pod-plugins.test.ts (no service here can have any).
});
