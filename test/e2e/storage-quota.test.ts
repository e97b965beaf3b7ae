// Persistent volumes and claims, resource quotas, limit ranges and component
// statuses with the real kubectl against a real server on a SQLite file.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

test('persistent volumes and claims: defaults, columns, validation', async () => {
  const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' }, spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' }, storageClassName: 'manual' } };
  await ok(['create', '-f', '-'], JSON.stringify(pv));
  const stored = JSON.parse(await ok(['get', 'pv', 'pv-1', '-o', 'json']));
  assert.deepEqual([stored.spec.persistentVolumeReclaimPolicy, stored.spec.volumeMode, stored.status.phase], ['Retain', 'Filesystem', 'Pending']);
  assert.match(await ok(['get', 'pv']), /^pv-1\s+10Gi\s+RWO\s+Retain\s+Pending\s+manual\s+<unset>\s+\S+$/m);
  const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, storageClassName: 'manual' } };
  await ok(['create', '-f', '-'], JSON.stringify(pvc));
  assert.match(await ok(['get', 'pvc']), /^data\s+Pending\s+manual\s+<unset>\s+\S+$/m);
  assert.match(await ok(['describe', 'pv', 'pv-1']), /Reclaim Policy:\s+Retain/);
  assert.match(await ok(['describe', 'pvc', 'data']), /Status:\s+Pending/);
  const bad = await s.kubectl(['create', '-f', '-'], JSON.stringify({ ...pvc, metadata: { name: 'bad' }, spec: { resources: {} } }));
  assert.match(bad.stderr, /spec\.accessModes: Required value: at least 1 access mode is required/);
  assert.match(bad.stderr, /spec\.resources\[storage\]: Required value/);
});

test('kubectl create quota, get and describe it; limit ranges', async () => {
  assert.match(await ok(['create', 'quota', 'q', '--hard=pods=10,requests.cpu=4,limits.memory=8Gi']), /resourcequota\/q created/);
  const out = await ok(['get', 'quota']);
  assert.match(out, /^NAME\s+AGE\s+REQUEST\s+LIMIT$/m);
  assert.match(out, /^q\s+\S+\s+pods: 0\/10, requests\.cpu: 0\/4\s+limits\.memory: 0\/8Gi$/m);
  // Status is the quota controller's: a test writes it, as the plugins issue's controller will.
  const q = JSON.parse(await ok(['get', 'quota', 'q', '-o', 'json']));
  q.status = { hard: q.spec.hard, used: { pods: '2', 'requests.cpu': '500m', 'limits.memory': '1Gi' } };
  await ok(['replace', '--subresource=status', '-f', '-'], JSON.stringify(q));
  assert.match(await ok(['describe', 'quota', 'q']), /pods\s+2\s+10/);
  const lr = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, min: { cpu: '2' }, max: { cpu: '1' } }] } };
  const bad = await s.kubectl(['create', '-f', '-'], JSON.stringify(lr));
  assert.match(bad.stderr, /spec\.limits\[0\]\.min\[cpu\]: Invalid value: "2": min value 2 is greater than max value 1/);
  lr.spec.limits[0]!.min = { cpu: '100m' };
  await ok(['create', '-f', '-'], JSON.stringify(lr));
  assert.match(await ok(['get', 'limits']), /^limits\s+\d{4}-/m);
  assert.match(await ok(['describe', 'limits', 'limits']), /Container\s+cpu\s+100m/);
});

test('component statuses: read-only, deprecated, nothing dialed', async () => {
  const r = await s.kubectl(['get', 'cs']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Warning: v1 ComponentStatus is deprecated in v1\.19\+/);
  assert.match(r.stdout, /^etcd-0\s+Healthy\s+ok/m);
  assert.match(r.stdout, /^controller-manager\s+Healthy\s+ok/m);
  assert.match(r.stdout, /^scheduler\s+Unhealthy\s+no scheduler runs with this server/m);
  assert.match(await s.kubectlOk(['describe', 'cs', 'etcd-0']), /Conditions:\n\s+Message:\s+ok\n\s+Status:\s+True\n\s+Type:\s+Healthy/);
  const del = await s.kubectl(['delete', 'cs', 'etcd-0']);
  assert.notEqual(del.code, 0);
  assert.match(del.stderr, /MethodNotAllowed|method not allowed|does not allow/i);
});
