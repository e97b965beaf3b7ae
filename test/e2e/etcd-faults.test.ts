// An API server on a three-member etcd cluster through failures: losing one
// member (writes go on), losing quorum (503/504 Statuses, /readyz reports
// [-]etcd failed, nothing hangs), and recovering by itself when the members
// return, with its watches resuming without a gap.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, EtcdCluster } from '../support/etcd.js';
import { startTestServer, TestServer } from '../support/server.js';
import type { WatchStream } from '../support/client.js';
import { eventually } from '../support/eventually.js';

/** A probe that counts a failed request as "not yet": the members are coming back. */
const whileDown = <T>(probe: () => Promise<T | undefined>) => () => probe().catch(() => undefined);

describe('a server on a three-member etcd cluster', () => {
  let etcd: EtcdCluster;
  let server: TestServer;
  let watch: WatchStream;
  let created = 0;
  const create = (name: string) => server.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name }, data: { n: String(created++) } });

  before(async () => {
    etcd = await startEtcd(3);
    // A write or consistent read without quorum waits this long for its 504; with one member down each write takes well under a second.
    server = await startTestServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints.split(','), requestTimeoutMs: 2500 });
    const list = await server.client.get('/api/v1/namespaces/default/configmaps');
    watch = await server.client.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
  });
  after(async () => {
    watch?.close();
    await server?.close();
    await etcd?.stop();
  });

  let killed: number[] = [];
  /** The status the write without quorum answered: a Timeout leaves its outcome open (raft may commit it once members return). */
  let noQuorumStatus = 0;
  test('writes keep succeeding when one member, the leader, is killed', async () => {
    assert.equal((await create('before')).status, 201);
    const leader = await etcd.leaderIndex();
    killed = [leader];
    await etcd.kill(leader);
    for (let i = 0; i < 20; i++) {
      const res = await create(`one-down-${i}`);
      assert.equal(res.status, 201, `write ${i} with one member down: ${res.text}`);
    }
    const ready = await server.client.get('/readyz');
    assert.equal(ready.status, 200, ready.text);
  });

  test('without quorum: 503 or 504 with a Status, /readyz reports etcd failed, reads from the cache still answer', async () => {
    const second = [0, 1, 2].find((i) => !killed.includes(i))!;
    killed.push(second);
    await etcd.kill(second);
    // Each waits out the request timeout: side by side, not one after the other.
    const [write, consistent] = await Promise.all([create('no-quorum'), server.client.get('/api/v1/namespaces/default/configmaps/before')]);
    noQuorumStatus = write.status;
    assert.ok([503, 504].includes(write.status), `status ${write.status}: ${write.text}`);
    assert.equal(write.json.kind, 'Status');
    assert.equal(write.json.reason, write.status === 503 ? 'ServiceUnavailable' : 'Timeout');
    assert.ok([503, 504].includes(consistent.status), `a consistent read: ${consistent.status}`);
    const ready = await server.client.get('/readyz?verbose');
    assert.equal(ready.status, 500);
    assert.match(ready.text, /^\[-\]etcd failed/m);
    assert.match(ready.text, /^\[\+\]ping ok/m);
    const cached = await server.client.get('/api/v1/namespaces/default/configmaps?resourceVersion=0');
    assert.equal(cached.status, 200, 'resourceVersion=0 is served from the watch cache');
    assert.ok(cached.json.items.length >= 21);
  });

  test('recovers by itself when the members return; the watch goes on without a gap', async () => {
    for (const index of killed) await etcd.restart(index);
    await eventually('/readyz to recover', whileDown(async () => ((await server.client.get('/readyz')).status === 200 ? true : undefined)), 20_000);
    const after = await eventually('a write to succeed', whileDown(async () => {
      const res = await create('after');
      return res.status === 201 ? res : undefined;
    }), 10_000);
    assert.equal(after.status, 201);
    const names = ['before', ...Array.from({ length: 20 }, (_, i) => `one-down-${i}`), 'after'];
    let events = await watch.waitFor(names.length, 20_000);
    // A write answered with 504 may have been applied (as upstream: the outcome of a timed-out write is unknown); one answered 503 was not.
    if (noQuorumStatus === 504 && events.some((e) => e.object.metadata.name === 'no-quorum')) {
      names.splice(names.length - 1, 0, 'no-quorum');
      events = await watch.waitFor(names.length, 20_000);
    }
    const added = events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
    assert.deepEqual(added, names, 'every write, once, in order');
    const versions = events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
  });
});
