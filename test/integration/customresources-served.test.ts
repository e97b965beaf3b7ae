// Custom resource versions are served as their definition's `served` flag
// says, whatever --runtime-config says of built-in APIs (upstream applies
// it to built-ins only): Argo CD, PrometheusAgent, ScrapeConfig and three
// Gateway API kinds store v1alpha1 and were Established yet answered 404.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

let s: TestServer;
// Alpha built-in APIs explicitly off, as by default.
before(async () => { s = await startTestServer({ runtimeConfig: [['api/alpha', 'false']] }); });
after(async () => { await s.close(); });

test('an alpha and a beta version of a custom resource are served with built-in alpha APIs off; Established says so', async () => {
  const crd = widgetCrd({}, 'apps', 'App');
  const base = crd.spec.versions[0];
  crd.spec.versions = [
    { ...base, name: 'v1alpha1', served: true, storage: true },
    { ...base, name: 'v1beta1', served: true, storage: false },
    { ...base, name: 'v1alpha2', served: false, storage: false },
  ];
  const made = await s.client.post(crdPath, crd);
  assert.equal(made.status, 201, made.text);
  const done = await eventually('established', async () => {
    const r = await s.client.get(`${crdPath}/apps.${widgetGroup}`);
    return r.json.status?.conditions?.find((c: any) => c.type === 'Established' && c.status === 'True') ? r.json : undefined;
  });
  assert.ok(done);
  for (const v of ['v1alpha1', 'v1beta1']) {
    const created = await s.client.post(`/apis/${widgetGroup}/${v}/namespaces/default/apps`, { apiVersion: `${widgetGroup}/${v}`, kind: 'App', metadata: { name: `a-${v}` }, spec: { replicas: 1, maxReplicas: 2 } });
    assert.equal(created.status, 201, `${v}: ${created.text}`);
    assert.equal((await s.client.get(`/apis/${widgetGroup}/${v}/namespaces/default/apps/a-${v}`)).status, 200, v);
  }
  // Sent at a version other than the stored one, an object is defaulted by that version's schema before its rules run.
  const bare = await s.client.post(`/apis/${widgetGroup}/v1beta1/namespaces/default/apps`, { apiVersion: `${widgetGroup}/v1beta1`, kind: 'App', metadata: { name: 'bare' }, spec: {} });
  assert.equal(bare.status, 201, bare.text);
  assert.equal(bare.json.spec.maxReplicas, 10);
  // Not served: the definition says so.
  assert.equal((await s.client.get(`/apis/${widgetGroup}/v1alpha2/namespaces/default/apps`)).status, 404);
  const discovery = await s.client.get(`/apis/${widgetGroup}`);
  assert.deepEqual(discovery.json.versions.map((v: any) => v.version).sort(), ['v1alpha1', 'v1beta1']);
});
