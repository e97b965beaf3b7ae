// Reads on etcd: consistent reads wait for the watch cache to reach etcd's
// current revision, learned by reads of the head shared among the requests
// waiting together (counted by apiserver_storage_revision_reads_total);
// service-account tokens are checked against the watch cache, and against
// etcd when the cache does not hold the account (yet).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTwoServersOnEtcd, type ServersOnEtcd } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { parsePrometheusText, samples } from '../support/prometheus.js';
import type { TestServer } from '../support/server.js';
import type { TestClient } from '../support/client.js';

async function metric(server: TestServer, name: string): Promise<number> {
  const r = await server.client.get('/metrics');
  assert.equal(r.status, 200);
  const found = samples(parsePrometheusText(r.body.toString()), name);
  assert.equal(found.length, 1, `one sample of ${name}`);
  return found[0]!.value;
}

describe('reads on etcd', () => {
  let servers: ServersOnEtcd;
  let one: TestServer;
  let two: TestServer;
  before(async () => {
    // Two accepts the tokens one signs.
    servers = await startTwoServersOnEtcd({ authorizationMode: ['AlwaysAllow'] }, (first) => ({ serviceAccountKeyFiles: [join(first.dataDir, 'pki', 'sa.pub')] }));
    ({ one, two } = servers);
  });
  after(async () => { await servers?.close(); });

  test('concurrent consistent gets each see the writes made before them through another server, and their revision reads are counted', async () => {
    await two.client.get('/api/v1/namespaces/default/configmaps'); // the cache runs
    const before = await metric(two, 'apiserver_storage_revision_reads_total');
    const rounds = 5;
    const perRound = 20;
    for (let round = 0; round < rounds; round++) {
      const made = await one.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `fresh-${round}` }, data: { round: String(round) } });
      assert.equal(made.status, 201);
      const gets = await Promise.all(Array.from({ length: perRound }, () => two.client.get(`/api/v1/namespaces/default/configmaps/fresh-${round}`)));
      for (const got of gets) {
        assert.equal(got.status, 200, 'a consistent get sees a write finished before it');
        assert.equal(got.json.metadata.resourceVersion, made.json.metadata.resourceVersion);
      }
    }
    const reads = (await metric(two, 'apiserver_storage_revision_reads_total')) - before;
    assert.ok(reads >= 1, 'consistent reads ask etcd for its revision');
    // (Background work of the server, leader election among it, makes consistent reads too.)
    assert.ok(Number.isInteger(reads), `${reads} revision reads for ${rounds * perRound} gets`);
  });

  test('the window metrics stay within the flag', async () => {
    const bytes = await metric(one, 'apiserver_watch_cache_window_bytes');
    const limit = await metric(one, 'apiserver_watch_cache_window_limit_bytes');
    assert.ok(bytes > 0 && bytes <= limit, `${bytes} of ${limit}`);
  });

  test('a token of an account just created through the other server authenticates at once; deleted, it stops', async () => {
    const created = await one.client.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } });
    assert.equal(created.status, 201);
    const requested = await one.client.post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: { expirationSeconds: 3600 } });
    assert.equal(requested.status, 201, requested.body.toString());
    const token: string = requested.json.status.token;
    const bearer: TestClient = two.client.anonymous();
    try {
      const asRobot = () => bearer.get('/api/v1/namespaces/default/serviceaccounts/robot', { Authorization: `Bearer ${token}` });
      const first = await asRobot();
      assert.equal(first.status, 200, first.body.toString());
      assert.equal(first.json.metadata.uid, created.json.metadata.uid);
      assert.equal((await one.client.delete('/api/v1/namespaces/default/serviceaccounts/robot')).status, 200);
      await eventually('the token of the deleted account is refused', async () => (await asRobot()).status === 401);
    } finally {
      bearer.close();
    }
  });
});
