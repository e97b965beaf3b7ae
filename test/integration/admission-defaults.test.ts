// The admission plugins that are on by default and change or refuse pods,
// claims, volumes, ingresses and nodes, as a user meets them over HTTPS on
// one server: what each adds, what each refuses (403, upstream's words), and
// the PVC and PV protection controllers letting a deletion finish once
// nothing uses the object. admission-defaults-off.test.ts shows each turned off.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, writeStatus, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
const container = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox', ...extra });
const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  ({ metadata: { name, ...metadata }, spec: { containers: [container('c')], ...spec } });
const scheduling = `/apis/${vocabulary.schedulingGroup}/v1/priorityclasses`;
const runtimeClasses = `/apis/${vocabulary.nodeGroup}/v1/runtimeclasses`;
const storageClasses = `/apis/${vocabulary.storageGroup}/v1/storageclasses`;
const ingressClasses = `/apis/${vocabulary.networkingGroup}/v1/ingressclasses`;

async function created(path: string, body: unknown): Promise<any> {
  const r = await s.client.post(path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function namespace(name: string): Promise<string> {
  await created('/api/v1/namespaces', { metadata: { name } });
  return name;
}

before(async () => {
  s = await startTestServer({ defaultNotReadyTolerationSeconds: 60 });
});

after(async () => {
  await s?.close();
});

test('ServiceAccount: default account, the projected token volume in every container, pull secrets from the account; a missing account is refused', async () => {
  const ns = await namespace('sa');
  const p = await created(`/api/v1/namespaces/${ns}/pods`, pod('p', { initContainers: [container('init')] }));
  assert.equal(p.spec.serviceAccountName, 'default');
  const volume = p.spec.volumes.find((v: any) => v.name.startsWith(vocabulary.apiAccessVolumePrefix));
  assert.match(volume.name, new RegExp(`^${vocabulary.apiAccessVolumePrefix}[bcdfghjklmnpqrstvwxz2456789]{5}$`));
  assert.deepEqual(volume.projected, {
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: vocabulary.rootCaConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    defaultMode: 420,
  });
  for (const c of [...p.spec.containers, ...p.spec.initContainers]) {
    assert.deepEqual(c.volumeMounts, [{ name: volume.name, readOnly: true, mountPath: vocabulary.serviceAccountMountPath }]);
  }

  await created(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'registry' }], automountServiceAccountToken: false });
  const pulled = await created(`/api/v1/namespaces/${ns}/pods`, pod('pulled', { serviceAccountName: 'puller' }));
  assert.deepEqual(pulled.spec.imagePullSecrets, [{ name: 'registry' }]);
  assert.equal(pulled.spec.volumes, undefined, 'the account turns the token off');
  const own = await created(`/api/v1/namespaces/${ns}/pods`, pod('own', { serviceAccountName: 'puller', automountServiceAccountToken: true, imagePullSecrets: [{ name: 'mine' }] }));
  assert.deepEqual(own.spec.imagePullSecrets, [{ name: 'mine' }], 'the pod keeps its own pull secrets');
  assert.equal(own.spec.volumes.length, 1, 'the pod turns the token back on');

  const missing = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('ghostly', { serviceAccountName: 'ghost' }));
  assertStatus(missing, 403, 'Forbidden', `pods "ghostly" is forbidden: error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`);

  // A mirror pod is left as its manifest says, and may not name an account.
  const mirror = { [vocabulary.mirrorPodAnnotation]: 'x' };
  const mirrored = await created(`/api/v1/namespaces/${ns}/pods`, pod('mirror', { nodeName: 'n1' }, { annotations: mirror }));
  assert.equal(mirrored.spec.serviceAccountName, undefined);
  assert.equal(mirrored.spec.volumes, undefined);
  const named = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('mirror2', { nodeName: 'n1', serviceAccountName: 'default' }, { annotations: mirror }));
  assertStatus(named, 403, 'Forbidden', 'pods "mirror2" is forbidden: a mirror pod may not reference service accounts');
});

test('LimitRanger: defaults from every LimitRange of the namespace, with the annotation; min, max and ratio breaches refused together', async () => {
  const ns = await namespace('limits');
  await created(`/api/v1/namespaces/${ns}/limitranges`, { metadata: { name: 'cpu' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '250m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } }] } });
  await created(`/api/v1/namespaces/${ns}/limitranges`, { metadata: { name: 'memory' }, spec: { limits: [{ type: 'Container', default: { memory: '128Mi' }, defaultRequest: { memory: '64Mi' } }, { type: 'Pod', max: { memory: '200Mi' } }, { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } }] } });
  // The admission cache may lag the LimitRange just made: a dry run shows when it has them.
  await eventually('both LimitRanges seen', async () => {
    const r = await s.client.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('probe'));
    return r.json?.spec?.containers?.[0]?.resources?.limits?.memory !== undefined && r.json.spec.containers[0].resources.limits.cpu !== undefined;
  });
  const p = await created(`/api/v1/namespaces/${ns}/pods`, pod('p', { containers: [container('c', { resources: { requests: { cpu: '300m' } } })] }));
  assert.deepEqual(p.spec.containers[0].resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '300m', memory: '64Mi' } });
  assert.equal(p.metadata.annotations[vocabulary.limitRangerAnnotation], 'LimitRanger plugin set: cpu limit for container c; memory request for container c; memory limit for container c');

  const big = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('big', { containers: [container('c', { resources: { limits: { cpu: '2', memory: '300Mi' }, requests: { cpu: '100m' } } })] }));
  assertStatus(big, 403, 'Forbidden', 'pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000, maximum memory usage per Pod is 200Mi, but limit is 300Mi]');

  const small = await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('small', '500Mi'));
  assertStatus(small, 403, 'Forbidden', 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
  await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('fits', '2Gi'));

  // A Container item's max is its default limit, and the default limit its default request, as upstream defaults them.
  const filled = await created(`/api/v1/namespaces/${ns}/limitranges`, { metadata: { name: 'disk' }, spec: { limits: [{ type: 'Container', max: { 'ephemeral-storage': '2Gi' } }] } });
  assert.deepEqual(filled.spec.limits[0], { type: 'Container', max: { 'ephemeral-storage': '2Gi' }, default: { 'ephemeral-storage': '2Gi' }, defaultRequest: { 'ephemeral-storage': '2Gi' } });
});

/** Sets the status phase through the status sub-resource (a volume controller's write). */
async function bound(path: string, change: (obj: Record<string, any>) => void): Promise<void> {
  const r = await writeStatus(s, path, change);
  assert.equal(r.status, 200, r.text);
}

function claim(name: string, storage: string, extra: Record<string, unknown> = {}) {
  return { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...extra } };
}

test('Priority: the class gives priority and preemption policy, the global default class applies to pods naming none; a missing class and a second default are refused', async () => {
  const ns = await namespace('prio');
  await created(scheduling, { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' });
  const p = await created(`/api/v1/namespaces/${ns}/pods`, pod('p', { priorityClassName: 'high' }));
  assert.equal(p.spec.priority, 1000);
  assert.equal(p.spec.preemptionPolicy, 'Never');
  const plain = await created(`/api/v1/namespaces/${ns}/pods`, pod('plain'));
  assert.equal(plain.spec.priority, 0);
  assert.equal(plain.spec.preemptionPolicy, 'PreemptLowerPriority');
  assert.equal(plain.spec.priorityClassName, undefined);

  const missing = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('lost', { priorityClassName: 'nonesuch' }));
  assertStatus(missing, 403, 'Forbidden', 'pods "lost" is forbidden: no PriorityClass with name nonesuch was found');
  const clash = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('clash', { priorityClassName: 'high', priority: 5 }));
  assertStatus(clash, 403, 'Forbidden', 'pods "clash" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name');

  await created(scheduling, { metadata: { name: 'everyone' }, value: 10, globalDefault: true });
  try {
    const defaulted = await eventually('the default class applies', async () => {
      const r = await s.client.post(`/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('d'));
      return r.json?.spec?.priority === 10 && r.json;
    });
    assert.equal(defaulted.spec.priorityClassName, 'everyone');
    const second = await s.client.post(scheduling, { metadata: { name: 'also' }, value: 20, globalDefault: true });
    assertStatus(second, 403, 'Forbidden', `priorityclasses.${vocabulary.schedulingGroup} "also" is forbidden: PriorityClass everyone is already marked as default. Only one default can exist`);
  } finally {
    await s.client.delete(`${scheduling}/everyone`);
  }
});

test('DefaultTolerationSeconds: tolerations of the not-ready and unreachable taints for the flags\' seconds, unless the pod tolerates them', async () => {
  const ns = await namespace('tolerations');
  const p = await created(`/api/v1/namespaces/${ns}/pods`, pod('p'));
  assert.deepEqual(p.spec.tolerations, [
    { key: vocabulary.notReadyTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    { key: vocabulary.unreachableTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  const everything = await created(`/api/v1/namespaces/${ns}/pods`, pod('all', { tolerations: [{ operator: 'Exists' }] }));
  assert.deepEqual(everything.spec.tolerations, [{ operator: 'Exists' }]);
});

test('RuntimeClass: overhead and scheduling merged into the pod; a missing class, a different overhead and a node selector conflict are refused', async () => {
  const ns = await namespace('runtime');
  await created(runtimeClasses, {
    metadata: { name: 'sandboxed' }, handler: 'runsc', overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
    scheduling: { nodeSelector: { sandbox: 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
  });
  const p = await created(`/api/v1/namespaces/${ns}/pods`, pod('p', { runtimeClassName: 'sandboxed', nodeSelector: { zone: 'a' } }));
  assert.deepEqual(p.spec.overhead, { cpu: '250m', memory: '64Mi' });
  assert.deepEqual(p.spec.nodeSelector, { zone: 'a', sandbox: 'yes' });
  assert.deepEqual(p.spec.tolerations.find((t: any) => t.key === 'sandbox'), { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' });

  const missing = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('lost', { runtimeClassName: 'nonesuch' }));
  assertStatus(missing, 403, 'Forbidden', 'pods "lost" is forbidden: pod rejected: RuntimeClass "nonesuch" not found');
  const overhead = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('heavy', { runtimeClassName: 'sandboxed', overhead: { cpu: '1' } }));
  assertStatus(overhead, 403, 'Forbidden', 'pods "heavy" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead');
  const conflict = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('elsewhere', { runtimeClassName: 'sandboxed', nodeSelector: { sandbox: 'no' } }));
  assertStatus(conflict, 403, 'Forbidden', 'pods "elsewhere" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no');
  const noClass = await s.client.post(`/api/v1/namespaces/${ns}/pods`, pod('bare', { overhead: { cpu: '1' } }));
  assertStatus(noClass, 403, 'Forbidden', 'pods "bare" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
});

test('DefaultStorageClass and PersistentVolumeClaimResize: claims get the default class, two defaults are refused; only a bound claim of an expandable class grows', async () => {
  const ns = await namespace('storage');
  const isDefault = { [vocabulary.defaultStorageClassAnnotation]: 'true' };
  await created(storageClasses, { metadata: { name: 'fast', annotations: isDefault }, provisioner: 'example.com/fast', allowVolumeExpansion: true });
  const c = await eventually('the default class applies', async () => {
    const r = await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims?dryRun=All`, claim('probe', '1Gi'));
    return r.json?.spec?.storageClassName === 'fast' && r.json;
  });
  assert.equal(c.spec.storageClassName, 'fast');
  const none = await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('none', '1Gi', { storageClassName: '' }));
  assert.equal(none.spec.storageClassName, '', 'an empty class stays empty');

  const grows = await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('grows', '1Gi'));
  const bigger = (obj: any) => ({ ...obj, spec: { ...obj.spec, resources: { requests: { storage: '2Gi' } } } });
  const unbound = await s.client.put(`/api/v1/namespaces/${ns}/persistentvolumeclaims/grows`, bigger(grows));
  assertStatus(unbound, 403, 'Forbidden', 'persistentvolumeclaims "grows" is forbidden: Only bound persistent volume claims can be expanded');
  await bound(`/api/v1/namespaces/${ns}/persistentvolumeclaims/grows`, (obj) => { obj.status = { phase: 'Bound' }; });
  const fresh = (await s.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/grows`)).json;
  const grown = await s.client.put(`/api/v1/namespaces/${ns}/persistentvolumeclaims/grows`, bigger(fresh));
  assert.equal(grown.status, 200, grown.text);

  await created(storageClasses, { metadata: { name: 'slow' }, provisioner: 'example.com/slow' });
  await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('fixed', '1Gi', { storageClassName: 'slow' }));
  await bound(`/api/v1/namespaces/${ns}/persistentvolumeclaims/fixed`, (obj) => { obj.status = { phase: 'Bound' }; });
  const fixed = (await s.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/fixed`)).json;
  const refused = await s.client.put(`/api/v1/namespaces/${ns}/persistentvolumeclaims/fixed`, bigger(fixed));
  assertStatus(refused, 403, 'Forbidden', 'persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');

  await created(storageClasses, { metadata: { name: 'faster', annotations: isDefault }, provisioner: 'example.com/fast' });
  try {
    const two = await eventually('two defaults seen', async () => {
      const r = await s.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('two', '1Gi'));
      return r.status === 403 && r;
    });
    assertStatus(two, 403, 'Forbidden', 'persistentvolumeclaims "two" is forbidden: Internal error occurred: 2 default StorageClasses were found');
  } finally {
    await s.client.delete(`${storageClasses}/faster`);
  }
});

test('DefaultIngressClass: ingresses get the default class; two defaults are refused', async () => {
  const ns = await namespace('ingress');
  const ingresses = `/apis/${vocabulary.networkingGroup}/v1/namespaces/${ns}/ingresses`;
  const ingress = (name: string) => ({ metadata: { name }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } });
  const isDefault = { [vocabulary.defaultIngressClassAnnotation]: 'true' };
  await created(ingressClasses, { metadata: { name: 'nginx', annotations: isDefault }, spec: { controller: 'example.com/nginx' } });
  await eventually('the default class applies', async () => {
    const r = await s.client.post(`${ingresses}?dryRun=All`, ingress('probe'));
    return r.json?.spec?.ingressClassName === 'nginx';
  });
  await created(ingressClasses, { metadata: { name: 'traefik', annotations: isDefault }, spec: { controller: 'example.com/traefik' } });
  const two = await eventually('two defaults seen', async () => {
    const r = await s.client.post(ingresses, ingress('two'));
    return r.status === 403 && r;
  });
  assertStatus(two, 403, 'Forbidden', `ingressclasses.${vocabulary.networkingGroup} is forbidden: 2 default IngressClasses were found, only 1 allowed`);
});

test('StorageObjectInUseProtection with the protection controllers: a claim in use by a scheduled pod and a bound volume wait for their users', async () => {
  const ns = await namespace('protect');
  const c = await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('data', '1Gi', { storageClassName: '' }));
  assert.deepEqual(c.metadata.finalizers, [vocabulary.pvcProtectionFinalizer]);
  await created(`/api/v1/namespaces/${ns}/pods`, pod('user', { nodeName: 'n1', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] }));
  assert.equal((await s.client.delete(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).status, 200);
  await eventually('the claim marked for deletion', async () => (await s.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).json?.metadata?.deletionTimestamp);
  assert.equal((await s.client.delete(`/api/v1/namespaces/${ns}/pods/user`, { gracePeriodSeconds: 0 })).status, 200);
  await eventually('the claim gone once no pod uses it', async () => (await s.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).status === 404);

  const pv = await created('/api/v1/persistentvolumes', { metadata: { name: 'vol' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/vol' } } });
  assert.deepEqual(pv.metadata.finalizers, [vocabulary.pvProtectionFinalizer]);
  await bound('/api/v1/persistentvolumes/vol', (obj) => { obj.status = { phase: 'Bound' }; });
  assert.equal((await s.client.delete('/api/v1/persistentvolumes/vol')).status, 200);
  await eventually('the volume marked for deletion', async () => (await s.client.get('/api/v1/persistentvolumes/vol')).json?.metadata?.deletionTimestamp);
  await bound('/api/v1/persistentvolumes/vol', (obj) => { obj.status = { phase: 'Released' }; });
  await eventually('the volume gone once released', async () => (await s.client.get('/api/v1/persistentvolumes/vol')).status === 404);
});

test('TaintNodesByCondition: a new node starts tainted not-ready NoSchedule', async () => {
  const node = await created('/api/v1/nodes', { metadata: { name: 'fresh' }, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } });
  assert.deepEqual(node.spec.taints, [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }, { key: vocabulary.notReadyTaint, effect: 'NoSchedule' }]);
});
