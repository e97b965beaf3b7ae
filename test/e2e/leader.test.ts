// Several servers on one etcd: the controllers run on exactly one of them,
// chosen through the leader Lease that kubectl shows; each server publishes
// its identity lease; when the leader is killed another takes over.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startEtcd, EtcdCluster } from '../support/etcd.js';
import { runKubectl, startChildServer, startTestServer, tempDir, TestServer, ChildServer } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';

const leases = '/apis/coordination.plat.io/v1/namespaces/plat-system/leases';
const timing = { leaderElectLeaseDurationMs: 3000, leaderElectRenewDeadlineMs: 2000, leaderElectRetryPeriodMs: 500 };

async function holder(client: TestClient): Promise<string | undefined> {
  const lease = await client.get(`${leases}/plat-controller-manager`);
  return lease.status === 200 ? lease.json.spec.holderIdentity || undefined : undefined;
}

/** An owner and a dependent; deleting the owner must take the dependent (the garbage collector's work). */
async function collectsGarbage(client: TestClient, name: string): Promise<void> {
  const owner = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `${name}-owner` } });
  assert.equal(owner.status, 201, owner.text);
  const dependent = await client.post('/api/v1/namespaces/default/configmaps', {
    metadata: { name: `${name}-dependent`, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.json.metadata.name, uid: owner.json.metadata.uid }] },
  });
  assert.equal(dependent.status, 201, dependent.text);
  assert.equal((await client.delete(`/api/v1/namespaces/default/configmaps/${name}-owner`)).status, 200);
  await eventually(`${name}-dependent collected`, async () => ((await client.get(`/api/v1/namespaces/default/configmaps/${name}-dependent`)).status === 404 ? true : undefined), 15_000);
}

describe('leader election on one etcd', () => {
  let etcd: EtcdCluster;
  const servers: TestServer[] = [];
  before(async () => {
    etcd = await startEtcd(1);
    for (let i = 0; i < 2; i++) servers.push(await startTestServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints.split(','), ...timing }));
  });
  after(async () => {
    for (const server of servers) await server.close();
    await etcd?.stop();
  });

  test('exactly one server runs the controllers; kubectl shows it as the holder; each server has its identity lease', async () => {
    const leader = await eventually('a leader', () => holder(servers[0]!.client), 10_000);
    const leading = servers.filter((s) => s.controllerManager.isLeading());
    assert.equal(leading.length, 1);
    assert.equal(leading[0]!.controllerManager.identity, leader);
    const shown = await servers[1]!.kubectl(['get', 'leases', '-n', 'plat-system']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^NAME\s+HOLDER\s+AGE$/m);
    assert.match(shown.stdout, new RegExp(`^plat-controller-manager\\s+${leader}\\s`, 'm'));
    const identities = await eventually('two identity leases', async () => {
      const list = await servers[0]!.client.get(`${leases}?labelSelector=apiserver.plat.io/identity%3Dplat-apiserver`);
      return list.json.items.length === 2 ? list.json.items : undefined;
    }, 10_000);
    for (const lease of identities) {
      assert.match(lease.metadata.name, /^apiserver-[0-9a-f]{26}$/);
      assert.equal(lease.spec.leaseDurationSeconds, 3600);
      assert.ok(lease.spec.holderIdentity.startsWith(`${lease.metadata.name}_`));
    }
    await collectsGarbage(servers[1]!.client, 'one');
  });

  test('a leader that stops hands the lease over at once', async () => {
    const leaderIndex = servers.findIndex((s) => s.controllerManager.isLeading());
    const [leader] = servers.splice(leaderIndex, 1);
    await leader!.close();
    const next = await eventually('the other server to lead', async () => servers[0]!.controllerManager.isLeading() || undefined, 3000);
    assert.equal(next, true);
    assert.equal(await holder(servers[0]!.client), servers[0]!.controllerManager.identity);
  });
});

describe('leader hand-over when the leader is killed', () => {
  test('the garbage collector moves to the surviving server within the lease duration', async () => {
    const etcd = await startEtcd(1);
    const dirs = [tempDir(), tempDir()];
    const children: ChildServer[] = [];
    const args = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoints,
      '--leader-elect-lease-duration', '2s', '--leader-elect-renew-deadline', '1500ms', '--leader-elect-retry-period', '250ms'];
    try {
      children.push(await startChildServer(args, dirs[0]!));
      const first = TestClient.fromKubeconfig(children[0]!.kubeconfigPath);
      const firstHolder = await eventually('the first server to lead', () => holder(first), 10_000);
      first.close();
      children.push(await startChildServer(args, dirs[1]!));
      const survivor = TestClient.fromKubeconfig(children[1]!.kubeconfigPath);
      try {
        await collectsGarbage(survivor, 'before');
        children[0]!.process.kill('SIGKILL');
        const killedAt = Date.now();
        const nextHolder = await eventually('a new holder', async () => {
          const h = await holder(survivor);
          return h && h !== firstHolder ? h : undefined;
        }, 15_000);
        assert.ok(Date.now() - killedAt < 15_000);
        assert.notEqual(nextHolder, firstHolder);
        await collectsGarbage(survivor, 'after');
        const shown = await runKubectl(children[1]!.kubeconfigPath, ['get', 'lease', 'plat-controller-manager', '-n', 'plat-system', '-o', 'jsonpath={.spec.leaseTransitions}']);
        assert.equal(shown.stdout, '1');
      } finally {
        survivor.close();
      }
    } finally {
      for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
      await etcd.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
