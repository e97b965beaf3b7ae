// Objects survive a clean stop and a kill -9 of the server process; a
// server's first start in an empty folder generates its key material (the
// suite's one start that does: the others copy a fixture), a restart reuses
// it and the kubeconfig keeps working.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { startChildServer, tempDir } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';

test('objects survive stop, restart and kill -9 with the sqlite store', async () => {
  const dataDir = tempDir('plat-restart-');
  try {
    const first = await startChildServer([], dataDir, [], { keyMaterial: 'generate' });
    const caBefore = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const pki = join(dataDir, 'pki');
    assert.deepEqual(readdirSync(pki).sort(), ['admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'front-proxy-client.crt', 'front-proxy-client.key', 'sa.key', 'sa.pub']);
    for (const name of readdirSync(pki)) {
      assert.equal(statSync(join(pki, name)).mode & 0o777, name.endsWith('.key') ? 0o600 : 0o644, `${name}'s mode`);
    }
    let client = TestClient.fromKubeconfig(first.kubeconfigPath);
    assert.equal((await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'keep' } })).status, 201);
    const created = await client.post('/api/v1/namespaces/keep/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
    assert.equal(created.status, 201);
    client.close();
    first.process.kill('SIGTERM');
    await once(first.process, 'exit');

    const second = await startChildServer([], dataDir);
    assert.equal(readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'), caBefore, 'the CA is reused');
    client = TestClient.fromKubeconfig(second.kubeconfigPath);
    const got = await client.get('/api/v1/namespaces/keep/configmaps/c');
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, created.json);

    // Write concurrently, remember what was acknowledged, then kill -9 mid-stream.
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        try {
          const r = await client.post('/api/v1/namespaces/keep/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } });
          if (r.status === 201) acknowledged.push(name);
        } catch {
          return; // the connection died with the server
        }
      }
    });
    while (acknowledged.length < 200) await new Promise((r) => setTimeout(r, 5));
    second.process.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await once(second.process, 'exit').catch(() => undefined);
    client.close();

    const third = await startChildServer([], dataDir);
    client = TestClient.fromKubeconfig(third.kubeconfigPath);
    const list = await client.get('/api/v1/namespaces/keep/configmaps');
    const names = new Set(list.json.items.map((i: any) => i.metadata.name));
    const lost = acknowledged.filter((n) => !names.has(n));
    assert.deepEqual(lost, [], 'every acknowledged write survives kill -9');
    assert.ok(names.has('c'));
    client.close();
    third.process.kill('SIGTERM');
    await once(third.process, 'exit');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a namespace terminating when the server is killed finishes its deletion after the restart', async () => {
  const dataDir = tempDir('plat-restart-ns-');
  try {
    const first = await startChildServer([], dataDir);
    let client = TestClient.fromKubeconfig(first.kubeconfigPath);
    await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'going' } });
    await client.post('/api/v1/namespaces/going/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    await client.post('/api/v1/namespaces/going/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain' } });
    const deleted = await client.delete('/api/v1/namespaces/going');
    assert.equal(deleted.json.status.phase, 'Terminating');
    client.close();
    first.process.kill('SIGKILL');
    await once(first.process, 'exit');

    const second = await startChildServer([], dataDir);
    client = TestClient.fromKubeconfig(second.kubeconfigPath);
    const ns = await client.get('/api/v1/namespaces/going');
    assert.equal(ns.json.status.phase, 'Terminating', 'still terminating after the restart');
    const held = await client.get('/api/v1/namespaces/going/configmaps/held');
    await client.put('/api/v1/namespaces/going/configmaps/held', { ...held.json, metadata: { ...held.json.metadata, finalizers: [] } });
    // A generous bound: the namespace controller rechecks each second, but a loaded machine can be slow to.
    await eventually('the namespace is gone', async () => (await client.get('/api/v1/namespaces/going')).status === 404, 60_000);
    assert.equal((await client.get('/api/v1/namespaces/going/secrets')).json.items.length, 0);
    client.close();
    second.process.kill('SIGTERM');
    await once(second.process, 'exit');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('garbage collection left pending by kill -9 finishes after the restart', async () => {
  const dataDir = tempDir('plat-restart-gc-');
  try {
    const first = await startChildServer([], dataDir);
    let client = TestClient.fromKubeconfig(first.kubeconfigPath);
    await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc' } });
    const owner = await client.post('/api/v1/namespaces/gc/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'owner' } });
    const ref = { apiVersion: 'v1', kind: 'ServiceAccount', name: 'owner', uid: owner.json.metadata.uid };
    for (let i = 0; i < 30; i++) {
      await client.post('/api/v1/namespaces/gc/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `dep-${i}`, ownerReferences: [ref] } });
    }
    // An orphaning delete holds the owner until every dependent lost its reference: kill the server in the middle of it.
    await client.send('DELETE', '/api/v1/namespaces/gc/serviceaccounts/owner', { body: { propagationPolicy: 'Orphan' } });
    first.process.kill('SIGKILL');
    await once(first.process, 'exit');
    client.close();

    const second = await startChildServer([], dataDir);
    client = TestClient.fromKubeconfig(second.kubeconfigPath);
    await eventually('the owner is gone and all 30 dependents were orphaned, not deleted', async () => {
      const ownerGone = (await client.get('/api/v1/namespaces/gc/serviceaccounts/owner')).status === 404;
      const deps = (await client.get('/api/v1/namespaces/gc/configmaps')).json.items.filter((c: any) => c.metadata.name.startsWith('dep-'));
      return ownerGone && deps.length === 30 && deps.every((d: any) => !d.metadata.ownerReferences);
    }, 20_000);
    client.close();
    second.process.kill('SIGTERM');
    await once(second.process, 'exit');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
