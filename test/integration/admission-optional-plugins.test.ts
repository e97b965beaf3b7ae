// The off-by-default plugins that default and check pods, services and
// events, as a user meets them: one server with them all turned on, one with the default
// set (they are off there, so the same requests pass unchanged).
// AlwaysPullImages, LimitPodHardAntiAffinityTopology, SecurityContextDeny,
// ExtendedResourceToleration and DenyServiceExternalIPs have no
// configuration; PodNodeSelector, PodTolerationRestriction and
// EventRateLimit read theirs from --admission-control-config-file (inline or
// in a file of its own), the first two also namespace annotations. The namespace `pods` sets empty
// annotations, so that the scheduling plugins leave its pods alone.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';
import { AdmissionConfigError } from '../../src/admission/index.js';

const plugins = ['AlwaysPullImages', 'LimitPodHardAntiAffinityTopology', 'SecurityContextDeny', 'ExtendedResourceToleration', 'DenyServiceExternalIPs', 'PodNodeSelector', 'PodTolerationRestriction', 'EventRateLimit',
  'OwnerReferencesPermissionEnforcement'];
const scheduler = `scheduler.alpha.${product.domain}`;
const memoryPressure = { key: `node.${product.domain}/memory-pressure`, operator: 'Exists', effect: 'NoSchedule' };
const dedicated = { key: 'dedicated', operator: 'Equal', value: 'general', effect: 'NoSchedule' };

/** An admission configuration file: PodTolerationRestriction inline, PodNodeSelector's in `nodeselector.yaml` beside it (`nodeSelectors` its entries). */
function admissionConfig(nodeSelectors: Record<string, string>, tolerations: Record<string, unknown>, eventLimits: unknown[] = []): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'nodeselector.yaml'), YAML.stringify({ podNodeSelectorPluginConfig: nodeSelectors }));
  const path = join(dir, 'admission.yaml');
  writeFileSync(path, YAML.stringify({
    apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'AdmissionConfiguration',
    plugins: [
      { name: 'PodNodeSelector', path: 'nodeselector.yaml' },
      { name: 'PodTolerationRestriction', configuration: { apiVersion: `podtolerationrestriction.admission.${product.domain}/v1alpha1`, kind: 'Configuration', ...tolerations } },
      // Upstream's group name is accepted for the configuration kinds.
      { name: 'EventRateLimit', configuration: { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits: eventLimits } },
    ],
  }));
  return path;
}
const goodConfig = () => admissionConfig({ clusterDefaultNodeSelector: 'zone=z1', scoped: 'env=prod,tier=web' }, { default: [dedicated], whitelist: [dedicated, memoryPressure] },
  [{ type: 'Namespace', qps: 1, burst: 3, cacheSize: 10 }, { type: 'User', qps: 1000, burst: 1000 }]);
// Default-on plugins that change pods are not what these tests are about: no account has to exist first, and
// the not-ready/unreachable tolerations DefaultTolerationSeconds adds would fall outside the whitelist here (as upstream).
const common = { disableAdmissionPlugins: ['ServiceAccount', 'DefaultTolerationSeconds'] };

let on: TestServer;
let off: TestServer;

before(async () => {
  [on, off] = await Promise.all([startTestServer({ ...common, enableAdmissionPlugins: plugins, admissionControlConfigFile: goodConfig() }), startTestServer(common)]);
  const namespaces: [string, Record<string, string>][] = [
    ['pods', { [`${scheduler}/node-selector`]: '', [`${scheduler}/defaultTolerations`]: '', [`${scheduler}/tolerationsWhitelist`]: '' }],
    // Neither annotation: the configuration's cluster defaults and whitelist.
    ['plain', {}],
    ['scoped', {
      [`${scheduler}/node-selector`]: 'env=prod',
      [`${scheduler}/defaultTolerations`]: JSON.stringify([{ key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' }]),
      [`${scheduler}/tolerationsWhitelist`]: JSON.stringify([{ key: 'team', operator: 'Exists' }, memoryPressure]),
    }],
    // Annotations a user got wrong: each pod created there fails, the server goes on.
    ['garbled', { [`${scheduler}/node-selector`]: 'a=b=c' }],
    ['garbled-tolerations', { [`${scheduler}/node-selector`]: '', [`${scheduler}/defaultTolerations`]: '{"key": ' }],
    // Upstream's annotation names are read too.
    ['upstream-named', { 'scheduler.alpha.kubernetes.io/node-selector': 'disk=ssd', 'scheduler.alpha.kubernetes.io/tolerationsWhitelist': '' }],
  ];
  for (const s of [on, off]) {
    for (const [name, annotations] of namespaces) assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name, annotations } })).status, 201);
  }
});

after(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

const pods = '/api/v1/namespaces/pods/pods';
const pod = (name: string, spec: Record<string, unknown> = {}, containers: Record<string, unknown>[] = [{ name: 'c', image: 'busybox' }]) =>
  ({ metadata: { name }, spec: { containers, ...spec } });

test('AlwaysPullImages sets every container, init ones too, to pull Always on create', async () => {
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
    memoryPressure, // PodTolerationRestriction's, for a pod that requests CPU
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

/** Upstream answers a plugin's plain (non-Status) error with 500, its text, and no reason. */
function assertPlainFailure(r: { status: number; json: any }, message: string): void {
  assert.equal(r.status, 500, JSON.stringify(r.json));
  assert.deepEqual({ kind: r.json.kind, code: r.json.code, reason: r.json.reason, message: r.json.message }, { kind: 'Status', code: 500, reason: undefined, message });
}

const podsIn = (namespace: string) => `/api/v1/namespaces/${namespace}/pods`;

test('PodNodeSelector merges the namespace selector (annotation, else the cluster default) and checks the namespace whitelist', async () => {
  const plain = await on.client.post(podsIn('plain'), pod('default-zone'));
  assert.equal(plain.status, 201, plain.text);
  assert.deepEqual(plain.json.spec.nodeSelector, { zone: 'z1' });
  const merged = await on.client.post(podsIn('scoped'), pod('web', { nodeSelector: { tier: 'web' } }));
  assert.equal(merged.status, 201, merged.text);
  assert.deepEqual(merged.json.spec.nodeSelector, { env: 'prod', tier: 'web' });
  assertStatus(await on.client.post(podsIn('scoped'), pod('dev', { nodeSelector: { env: 'dev' } })), 403, 'Forbidden',
    'pods "dev" is forbidden: pod node label selector conflicts with its namespace node label selector');
  assertStatus(await on.client.post(podsIn('scoped'), pod('ssd', { nodeSelector: { disk: 'ssd' } })), 403, 'Forbidden',
    'pods "ssd" is forbidden: pod node label selector labels conflict with its namespace whitelist');
  // An empty annotation selects nothing: no selector is added.
  assert.equal((await on.client.post(pods, pod('anywhere'))).json.spec.nodeSelector, undefined);
  const upstreamNamed = await on.client.post(podsIn('upstream-named'), pod('aliased'));
  assert.deepEqual(upstreamNamed.json.spec.nodeSelector, { disk: 'ssd' });
  // Off by default: nothing merged, nothing refused.
  const offPlain = await off.client.post(podsIn('plain'), pod('default-zone'));
  assert.equal(offPlain.json.spec.nodeSelector, undefined);
  assert.equal((await off.client.post(podsIn('scoped'), pod('dev', { nodeSelector: { env: 'dev' } }))).status, 201);
});

test('PodTolerationRestriction merges default tolerations and refuses tolerations outside the whitelist', async () => {
  const bestEffort = await on.client.post(podsIn('plain'), pod('be'));
  assert.equal(bestEffort.status, 201, bestEffort.text);
  assert.deepEqual(bestEffort.json.spec.tolerations, [dedicated]);
  const burstable = await on.client.post(podsIn('plain'), pod('burst', {}, [{ name: 'c', image: 'busybox', resources: { requests: { memory: '10Mi' } } }]));
  assert.equal(burstable.status, 201, burstable.text);
  assert.deepEqual(burstable.json.spec.tolerations, [dedicated, memoryPressure]);
  const outside = await on.client.post(podsIn('plain'), pod('outside', { tolerations: [{ key: 'gpu', operator: 'Exists' }] }));
  assertPlainFailure(outside, 'pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist');
  const scoped = await on.client.post(podsIn('scoped'), pod('team', { nodeSelector: { tier: 'web' } }));
  assert.equal(scoped.status, 201, scoped.text);
  assert.deepEqual(scoped.json.spec.tolerations, [{ key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' }]);
  const scopedOutside = await on.client.post(podsIn('scoped'), pod('other', { tolerations: [dedicated] }));
  assertPlainFailure(scopedOutside, 'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist');
  // Off by default: nothing added, nothing refused.
  const offPod = await off.client.post(podsIn('plain'), pod('outside', { tolerations: [{ key: 'gpu', operator: 'Exists' }] }));
  assert.deepEqual(offPod.json.spec.tolerations, [{ key: 'gpu', operator: 'Exists' }]);
});

test('a bad configuration of either scheduling plugin stops the start, naming the file and the entry', async () => {
  const selector = admissionConfig({ clusterDefaultNodeSelector: 'zone=z1,oops' }, {});
  await assert.rejects(startTestServer({ ...common, enableAdmissionPlugins: ['PodNodeSelector'], admissionControlConfigFile: selector }), (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError, String(e));
    assert.equal(e.message, `configuration file "${join(selector, '..', 'nodeselector.yaml')}" of plugin PodNodeSelector: podNodeSelectorPluginConfig.clusterDefaultNodeSelector: invalid selector: [oops]`);
    return true;
  });
  const tolerations = admissionConfig({}, { whitelist: [{ key: 'k', operator: 'Exists', value: 'v' }] });
  await assert.rejects(startTestServer({ ...common, enableAdmissionPlugins: ['PodTolerationRestriction'], admissionControlConfigFile: tolerations }), (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError, String(e));
    assert.equal(e.message, `admission control configuration file "${tolerations}": plugins[1].configuration (PodTolerationRestriction): whitelist[0].operator: Invalid value: "v": value must be empty when \`operator\` is 'Exists'`);
    return true;
  });
});

test('EventRateLimit refuses core events past a namespace\'s burst with 429 and Retry-After; other namespaces and events.plat.io events pass', async () => {
  const event = (namespace: string, name: string) => ({
    metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace }, reason: 'Tested', message: 'm', type: 'Normal', source: { component: 'test' },
  });
  for (const s of [on, off]) for (const name of ['ev', 'ev2']) assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name } })).status, 201);
  // Burst 3 at 1 per second: of 20 at once, at most a few more than 3 pass however slow the machine.
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => on.client.post('/api/v1/namespaces/ev/events', event('ev', `e${i}`))));
  const created = answers.filter((r) => r.status === 201).length;
  assert.ok(created >= 3, `the burst passes (${created} created)`);
  const refused = answers.find((r) => r.status === 429);
  assert.ok(refused, 'some are refused');
  assertStatus(refused, 429, 'TooManyRequests', 'Too many requests: limit reached on type Namespace for key ev');
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After: ${refused.headers['retry-after']}`);
  assert.equal((await on.client.post('/api/v1/namespaces/ev2/events', event('ev2', 'other'))).status, 201, 'another namespace has its own bucket');
  const newer = await on.client.post(`/apis/${vocabulary.eventsGroup}/v1/namespaces/ev/events`, {
    metadata: { name: 'newer' }, eventTime: new Date().toISOString().replace('Z', '000Z'), reportingController: 'test/c', reportingInstance: 'i', action: 'A', reason: 'R', type: 'Normal', regarding: { kind: 'Pod', name: 'p', namespace: 'ev' },
  });
  assert.equal(newer.status, 201, `only core Events are limited, as upstream: ${newer.text}`);
  // Off by default: 20 at once all pass.
  const plain = await Promise.all(Array.from({ length: 20 }, (_, i) => off.client.post('/api/v1/namespaces/ev/events', event('ev', `e${i}`))));
  assert.deepEqual(plain.filter((r) => r.status !== 201).map((r) => r.text), []);
});

test('EventRateLimit without a configuration, or with a bad one, stops the start', async () => {
  await assert.rejects(startTestServer({ ...common, enableAdmissionPlugins: ['EventRateLimit'] }), (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError, String(e));
    assert.match(e.message, /^admission plugin EventRateLimit needs a configuration .*: limits: Invalid value: null: must not be empty$/);
    return true;
  });
  const bad = admissionConfig({}, {}, [{ type: 'Pod', qps: 0, burst: 5 }]);
  await assert.rejects(startTestServer({ ...common, enableAdmissionPlugins: ['EventRateLimit'], admissionControlConfigFile: bad }), (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError, String(e));
    assert.equal(e.message, `admission control configuration file "${bad}": plugins[2].configuration (EventRateLimit): limits[0].type: Unsupported value: "Pod": supported values: "Namespace", "Server", "SourceAndObject", "User", limits[0].qps: Invalid value: 0: must be positive`);
    return true;
  });
});

test('OwnerReferencesPermissionEnforcement: changing owner references needs delete, a new blocking reference needs the owner\'s finalizers', async () => {
  const asBob = { 'Impersonate-User': 'bob' };
  const rbac = `/apis/${vocabulary.rbacGroup}/v1/namespaces/owned`;
  for (const s of [on, off]) {
    assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'owned' } })).status, 201);
    assert.equal((await s.client.post(`${rbac}/roles`, { metadata: { name: 'writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update'] }] })).status, 201);
    assert.equal((await s.client.post(`${rbac}/rolebindings`, {
      metadata: { name: 'writer' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: 'writer' }, subjects: [{ kind: 'User', name: 'bob', apiGroup: vocabulary.rbacGroup }],
    })).status, 201);
  }
  const cms = '/api/v1/namespaces/owned/configmaps';
  const owner = (await on.client.post(cms, { metadata: { name: 'owner' } })).json;
  const ref = (extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, ...extra });
  // Creating with owner references is allowed to whoever may create.
  const created = await on.client.post(cms, { metadata: { name: 'dep', ownerReferences: [ref()] } }, asBob);
  assert.equal(created.status, 201, created.text);
  const changed = { ...created.json, metadata: { ...created.json.metadata, ownerReferences: [ref({ controller: true })] } };
  const refused = await on.client.put(`${cms}/dep`, changed, asBob);
  // RBAC gives no reason, and Go prints the absent error as <nil>: upstream's text exactly.
  assertStatus(refused, 403, 'Forbidden', 'configmaps "dep" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>');
  // Other changes of an object with owner references need nothing more.
  const labelled = await on.client.put(`${cms}/dep`, { ...created.json, metadata: { ...created.json.metadata, labels: { a: 'b' } } }, asBob);
  assert.equal(labelled.status, 200, labelled.text);
  const blocking = await on.client.post(cms, { metadata: { name: 'blocker', ownerReferences: [ref({ blockOwnerDeletion: true })] } }, asBob);
  assertStatus(blocking, 403, 'Forbidden', 'configmaps "blocker" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>');
  const unknownKind = await on.client.post(cms, { metadata: { name: 'widgeted', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u1', blockOwnerDeletion: true }] } }, asBob);
  assertStatus(unknownKind, 403, 'Forbidden', 'configmaps "widgeted" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"');
  // Update rights on the owner's finalizers let the blocking reference through.
  assert.equal((await on.client.post(`${rbac}/roles`, { metadata: { name: 'finalizer' }, rules: [{ apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'], resourceNames: ['owner'] }] })).status, 201);
  assert.equal((await on.client.post(`${rbac}/rolebindings`, {
    metadata: { name: 'finalizer' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: 'finalizer' }, subjects: [{ kind: 'User', name: 'bob', apiGroup: vocabulary.rbacGroup }],
  })).status, 201);
  await eventually('the finalizers role reaches the authorizer', async () => (await on.client.post(cms, { metadata: { name: 'blocker', ownerReferences: [ref({ blockOwnerDeletion: true })] } }, asBob)).status === 201);
  // Off by default: bob changes owner references he could not delete.
  const offOwner = (await off.client.post(cms, { metadata: { name: 'owner' } })).json;
  const offRef = { ...ref(), uid: offOwner.metadata.uid };
  const offCreated = (await off.client.post(cms, { metadata: { name: 'dep', ownerReferences: [offRef] } }, asBob)).json;
  const offChanged = await off.client.put(`${cms}/dep`, { ...offCreated, metadata: { ...offCreated.metadata, ownerReferences: [{ ...offRef, controller: true }] } }, asBob);
  assert.equal(offChanged.status, 200, offChanged.text);
});

test('a namespace annotation that does not parse fails its pods with upstream\'s plain error; the server goes on', async () => {
  assertPlainFailure(await on.client.post(podsIn('garbled'), pod('p')), 'invalid selector: [a b c]');
  const tolerations = await on.client.post(podsIn('garbled-tolerations'), pod('p'));
  assert.equal(tolerations.status, 500, tolerations.text);
  assert.match(tolerations.json.message, /^namespace garbled-tolerations annotation scheduler\.alpha\.[a-z.]+\/defaultTolerations: /);
  assert.equal((await on.client.post(pods, pod('after-garbled'))).status, 201);
});
