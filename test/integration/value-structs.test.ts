// Go writes every struct field that is not a pointer, sent or not, so an
// object created on upstream reads back with those keys: a container's
// `resources: {}`, a template's `metadata`, a Deployment's `status: {}`, a
// Lease's `spec: {}`. The same objects created here, and written again
// without them: nothing changes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(() => s.close());

const container = { name: 'c', image: 'nginx' };

async function created(path: string, body: Record<string, unknown>): Promise<any> {
  const r = await s.client.send('POST', path, { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

test('objects read back with the value structs upstream writes', async () => {
  const pod = await created('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [container] } });
  assert.deepEqual(pod.spec.containers[0].resources, {});

  const deployment = await created('/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [container], initContainers: [{ ...container, name: 'init' }] } } },
  });
  assert.deepEqual(deployment.spec.template.spec.containers[0].resources, {});
  assert.deepEqual(deployment.spec.template.spec.initContainers[0].resources, {});
  assert.deepEqual(deployment.status, {});
  assert.equal(deployment.spec.template.spec.containers[0].securityContext, undefined, 'a pointer struct is not made up');

  const job = await created('/apis/batch/v1/namespaces/default/jobs', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } },
  });
  assert.deepEqual(job.spec.template.spec.containers[0].resources, {});
  assert.ok(job.spec.template.metadata.labels, 'the template metadata holds the generated labels');

  const service = await created('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } });
  assert.deepEqual(service.status, { loadBalancer: {} });

  const lease = await created('/apis/coordination.k8s.io/v1/namespaces/default/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } });
  assert.deepEqual(lease.spec, {});
});

test('a write that again leaves them out changes nothing: same resourceVersion, same generation', async () => {
  const path = '/apis/batch/v1/namespaces/default/cronjobs';
  const body = {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' },
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } } } },
  };
  const first = await created(path, body);
  assert.deepEqual(first.spec.jobTemplate.metadata, {});
  assert.deepEqual(first.spec.jobTemplate.spec.template.metadata, {});
  const r = await s.client.send('PUT', `${path}/cj`, { body: { ...body, metadata: { name: 'cj', resourceVersion: first.metadata.resourceVersion } } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.metadata.resourceVersion, first.metadata.resourceVersion);
  assert.equal(r.json.metadata.generation, 1);
});
