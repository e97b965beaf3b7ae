// Objects survive a clean stop and a kill -9 of the server process; a
// restart reuses the key material and the kubeconfig keeps working.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { startChildServer, tempDir } from '../support/server.js';
import { TestClient } from '../support/client.js';

test('objects survive stop, restart and kill -9 with the sqlite store', async () => {
  const dataDir = tempDir('plat-restart-');
  try {
    const first = await startChildServer([], dataDir);
    const caBefore = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
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
