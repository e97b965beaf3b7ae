// The default-on plugins of admission-defaults.test.ts turned off with
// --disable-admission-plugins, on one server: pods, claims, volumes,
// ingresses and nodes are stored as sent, and what the plugins refuse is
// accepted.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const off = [
  'ServiceAccount', 'LimitRanger', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'DefaultStorageClass', 'DefaultIngressClass',
  'PersistentVolumeClaimResize', 'StorageObjectInUseProtection', 'TaintNodesByCondition',
];
let s: TestServer;

async function created(path: string, body: unknown): Promise<any> {
  const r = await s.client.post(path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

before(async () => {
  s = await startTestServer({ disableAdmissionPlugins: off });
});

after(async () => {
  await s?.close();
});

test('with the plugins off a pod is stored as sent: no account, token volume, tolerations, priority, resources, overhead; missing account and classes pass', async () => {
  const ns = 'off';
  await created('/api/v1/namespaces', { metadata: { name: ns } });
  await created(`/api/v1/namespaces/${ns}/limitranges`, { metadata: { name: 'cpu' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, max: { cpu: '1' } }] } });
  await created(`/apis/${vocabulary.schedulingGroup}/v1/priorityclasses`, { metadata: { name: 'everyone-off' }, value: 10, globalDefault: true });
  try {
    const storageClasses = `/apis/${vocabulary.storageGroup}/v1/storageclasses`;
    await created(storageClasses, { metadata: { name: 'default-off', annotations: { [vocabulary.defaultStorageClassAnnotation]: 'true' } }, provisioner: 'example.com/x' });
    const p = await created(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'p' },
      spec: { serviceAccountName: 'ghost', priorityClassName: 'nonesuch', runtimeClassName: 'nonesuch', containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: '2' } } }] },
    });
    assert.equal(p.spec.serviceAccountName, 'ghost');
    assert.equal(p.spec.volumes, undefined);
    assert.equal(p.spec.tolerations, undefined);
    assert.equal(p.spec.priority, undefined);
    assert.deepEqual(p.spec.containers[0].resources, { limits: { cpu: '2' }, requests: { cpu: '2' } }, 'only the API defaults: requests from limits');
    assert.equal(p.metadata.annotations, undefined);

    const c = await created(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    assert.equal(c.spec.storageClassName, undefined);
    assert.equal(c.metadata.finalizers, undefined, 'no finalizer from admission (the protection controller adds it later to claims made without it, as upstream)');
    await eventually('the protection controller adds the finalizer', async () =>
      (await s.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).json?.metadata?.finalizers?.includes(vocabulary.pvcProtectionFinalizer));

    const node = await created('/api/v1/nodes', { metadata: { name: 'bare' } });
    assert.equal(node.spec?.taints, undefined);
    await created(`/apis/${vocabulary.networkingGroup}/v1/ingressclasses`, { metadata: { name: 'one', annotations: { [vocabulary.defaultIngressClassAnnotation]: 'true' } }, spec: { controller: 'example.com/x' } });
    const ing = await created(`/apis/${vocabulary.networkingGroup}/v1/namespaces/${ns}/ingresses`, { metadata: { name: 'i' }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } });
    assert.equal(ing.spec.ingressClassName, undefined);
  } finally {
    await s.client.delete(`/apis/${vocabulary.schedulingGroup}/v1/priorityclasses/everyone-off`);
  }
});
