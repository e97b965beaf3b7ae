// CEL and RE2 load on first need (api/validation/engines.ts): a server
// starts without them and a write that needs them loads them first, however
// it arrives. The hazard is a custom kind served from the store at start
// (nothing in that process has loaded CEL yet) whose first write is a
// server-side apply at a version other than the stored one, with rules and
// a pattern of its own: that version's checks run while the apply is
// decoded, before the write's other steps.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { startChildServer, startTestServer, tempDir } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath, widgetGroup } from '../support/crds.js';
import { celLoaded, re2Loaded } from '../../src/api/validation/index.js';

test('a server starts, and serves a write of a built-in kind, without loading CEL or RE2', async () => {
  const s = await startTestServer();
  try {
    const made = await s.client.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { a: 'b' } });
    assert.equal(made.status, 201, made.text);
    assert.equal(celLoaded(), false, 'CEL loaded');
    assert.equal(re2Loaded(), false, 'RE2 loaded');
  } finally {
    await s.close();
  }
});

const versionSchema = (checked: boolean) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        ...(checked ? { 'x-kubernetes-validations': [{ rule: 'self.size < 10', message: 'size must be under 10' }] } : {}),
        properties: { size: { type: 'integer' }, name: { type: 'string', ...(checked ? { pattern: '^[a-z]+$' } : {}) } },
      },
    },
  },
});

const lazyCrd = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  metadata: { name: `lazies.${widgetGroup}` },
  spec: {
    group: widgetGroup, scope: 'Namespaced',
    names: { plural: 'lazies', singular: 'lazy', kind: 'Lazy' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: versionSchema(false) },
      { name: 'v2', served: true, storage: false, schema: versionSchema(true) },
    ],
  },
};

test('after a restart, the first write of a custom kind, an apply at its version with rules and a pattern, is checked by them', async () => {
  const dataDir = tempDir('plat-lazy-');
  const v2 = `/apis/${widgetGroup}/v2/namespaces/default/lazies`;
  const first = await startChildServer([], dataDir);
  const before = TestClient.fromKubeconfig(first.kubeconfigPath);
  try {
    assert.equal((await before.post(crdPath, lazyCrd)).status, 201);
    await eventually('v2 is served', async () => (await before.get(v2)).status === 200);
  } finally {
    before.close();
    first.process.kill('SIGTERM');
    await once(first.process, 'exit');
  }

  const second = await startChildServer([], dataDir);
  const client = TestClient.fromKubeconfig(second.kubeconfigPath);
  const apply = (name: string, spec: Record<string, unknown>) => client.send('PATCH', `${v2}/${name}?fieldManager=lazy-test`, {
    body: { apiVersion: `${widgetGroup}/v2`, kind: 'Lazy', metadata: { name }, spec },
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  try {
    await eventually('v2 is served again', async () => (await client.get(v2)).status === 200);
    const tooBig = await apply('big', { size: 20, name: 'ok' });
    assertStatus(tooBig, 422, 'Invalid');
    assert.match(tooBig.json.message, /size must be under 10/);
    const badName = await apply('badname', { size: 1, name: 'Not-Lower' });
    assertStatus(badName, 422, 'Invalid');
    assert.match(badName.json.message, /should match '\^\[a-z\]\+\$'/);
    const fine = await apply('fine', { size: 1, name: 'ok' });
    assert.equal(fine.status, 201, fine.text);
  } finally {
    client.close();
    second.process.kill('SIGTERM');
    await once(second.process, 'exit');
  }
});
