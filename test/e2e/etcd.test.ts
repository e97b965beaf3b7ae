// Servers on a real etcd: kubectl against two servers sharing one cluster,
// and the migrate command copying a data folder into etcd.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEtcd, EtcdCluster, EtcdTls } from '../support/etcd.js';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { EtcdBackend } from '../../src/storage/etcd/store.js';
import type { StorageError } from '../../src/storage/backend.js';
import { startTestServer, tempDir, TestServer, cliPath } from '../support/server.js';


function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, stdout, stderr });
    });
  });
}

/** Two servers on one fresh etcd for the describe block that calls this, each under its own --etcd-prefix when given. */
function twoServersOnOneEtcd(prefixes: [string, string] | [] = []): { one: TestServer; two: TestServer } {
  let etcd: EtcdCluster | undefined;
  const servers = {} as { one: TestServer; two: TestServer };
  before(async () => {
    etcd = await startEtcd(1);
    const options = { storageBackend: 'etcd3' as const, etcdServers: etcd.endpoints.split(',') };
    servers.one = await startTestServer(prefixes[0] ? { ...options, etcdPrefix: prefixes[0] } : options);
    servers.two = await startTestServer(prefixes[1] ? { ...options, etcdPrefix: prefixes[1] } : options);
  });
  after(async () => {
    await servers.one?.close();
    await servers.two?.close();
    await etcd?.stop();
  });
  return servers;
}

describe('two API servers on one etcd', () => {
  const servers = twoServersOnOneEtcd();

  test('a write on one is read at once on the other, and kubectl works against each', async () => {
    const created = await servers.one.kubectl(['create', 'configmap', 'shared', '--from-literal=k=v']);
    assert.equal(created.code, 0, created.stderr);
    const got = await servers.two.kubectl(['get', 'configmap', 'shared', '-o', 'jsonpath={.data.k} {.metadata.resourceVersion}']);
    assert.equal(got.code, 0, got.stderr);
    const [value, rv] = got.stdout.split(' ');
    assert.equal(value, 'v');
    const onOne = await servers.one.client.get('/api/v1/namespaces/default/configmaps/shared');
    assert.equal(onOne.json.metadata.resourceVersion, rv, 'both read the same revision');
    // Guarded writes across servers: an update through two with one's stale version conflicts.
    const bumped = await servers.two.kubectl(['label', 'configmap', 'shared', 'via=two']);
    assert.equal(bumped.code, 0, bumped.stderr);
    const stale = await servers.one.client.put('/api/v1/namespaces/default/configmaps/shared', { ...onOne.json, data: { k: 'stale' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
    const listed = await servers.one.kubectl(['get', 'configmaps', '-l', 'via=two', '-o', 'name']);
    assert.equal(listed.stdout.trim(), 'configmap/shared', 'a consistent list on one sees two\'s write');
  });

  test('a watch on one sees writes made through the other', async () => {
    const list = await servers.two.client.get('/api/v1/namespaces/default/configmaps');
    const watch = await servers.two.client.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      const made = await servers.one.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'watched' }, data: { a: '1' } });
      assert.equal(made.status, 201);
      const [event] = await watch.waitFor(1, 10_000);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.metadata.name, 'watched');
      assert.equal(event.object.metadata.resourceVersion, made.json.metadata.resourceVersion);
    } finally {
      watch.close();
    }
  });
});

describe('migrate', () => {
  test('copies a data folder into etcd; objects keep their names, uids and creation times', async () => {
    const dataDir = tempDir();
    const etcd = await startEtcd(1);
    let target: TestServer | undefined;
    try {
      const source = await startTestServer({ storageBackend: 'sqlite', dataDir });
      const made = await source.kubectl(['create', 'namespace', 'moved']);
      assert.equal(made.code, 0, made.stderr);
      const cm = await source.client.post('/api/v1/namespaces/moved/configmaps', { metadata: { name: 'c1', labels: { a: 'b' } }, data: { x: 'y' } });
      assert.equal(cm.status, 201);
      const before = (await source.client.get('/api/v1/namespaces/moved/configmaps/c1')).json;
      await source.close();

      const bad = await runCli(['migrate', '--from', `mysql:${dataDir}`, '--to', `etcd3:${etcd.endpoints}`]);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /unknown store "mysql"/);
      const copied = await runCli(['migrate', '--from', `sqlite:${dataDir}`, '--to', `etcd3:${etcd.endpoints}`]);
      assert.equal(copied.code, 0, copied.stderr);
      assert.match(copied.stdout, /^copied \d+ keys from sqlite:/);
      const again = await runCli(['migrate', '--from', `sqlite:${dataDir}`, '--to', `etcd3:${etcd.endpoints}`]);
      assert.equal(again.code, 1, 'a second copy into the filled store is refused');
      assert.match(again.stderr, /target store is not empty/);

      target = await startTestServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints.split(','), dataDir: tempDir() });
      const moved = (await target.client.get('/api/v1/namespaces/moved/configmaps/c1')).json;
      assert.equal(moved.metadata.uid, before.metadata.uid);
      assert.equal(moved.metadata.creationTimestamp, before.metadata.creationTimestamp);
      assert.deepEqual([moved.metadata.labels, moved.data], [before.metadata.labels, before.data]);
      const ns = await target.kubectl(['get', 'namespace', 'moved', '-o', 'jsonpath={.status.phase}']);
      assert.equal(ns.stdout, 'Active');
    } finally {
      await target?.close();
      await etcd.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('compaction on etcd', () => {
  test('the server compacts etcd after --etcd-compaction-interval; older versions answer 410', async () => {
    const etcd = await startEtcd(1);
    const server = await startTestServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints.split(','), etcdCompactionIntervalMs: 500 });
    try {
      const first = await server.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c1' } });
      assert.equal(first.status, 201);
      const old = first.json.metadata.resourceVersion;
      const exact = `/api/v1/namespaces/default/configmaps?resourceVersion=${old}&resourceVersionMatch=Exact`;
      assert.equal((await server.client.get(exact)).status, 200, 'readable while within the interval');
      // Each compactor tick samples the head; later writes move it past the old version.
      let gone;
      const deadline = Date.now() + 15_000;
      for (let i = 0; Date.now() < deadline; i++) {
        await server.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `later-${i}` } });
        gone = await server.client.get(exact);
        if (gone.status === 410) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(gone?.status, 410, gone?.text);
      assert.equal(gone?.json.reason, 'Expired');
      const watch = await server.client.get(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${old}`);
      assert.match(watch.text, /"code":410/, 'a watch from the compacted version ends with 410');
    } finally {
      await server.close();
      await etcd.stop();
    }
  });
});

interface TestCertificates extends EtcdTls {
  clientCertFile: string;
  clientKeyFile: string;
}

/** A CA, a serving certificate for 127.0.0.1 and a client certificate, as PEM files in `dir`. */
async function etcdCertificates(dir: string): Promise<TestCertificates> {
  const ca = await generateEcKeyPair();
  const caCert = await issueCertificate({ commonName: 'etcd-ca', isCA: true, usages: ['cert sign', 'digital signature'], publicKey: ca.publicKeyPem, issuerKeyPem: ca.privateKeyPem });
  const leaf = async (commonName: string, usages: ('server auth' | 'client auth')[]) => {
    const key = await generateEcKeyPair();
    const cert = await issueCertificate({
      commonName, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'key encipherment', ...usages],
      publicKey: key.publicKeyPem, issuerKeyPem: ca.privateKeyPem, issuerCertPem: caCert,
    });
    return { key: key.privateKeyPem, cert };
  };
  const server = await leaf('etcd', ['server auth', 'client auth']);
  const client = await leaf('plat-apiserver', ['client auth']);
  const files: TestCertificates = {
    caFile: join(dir, 'ca.pem'), certFile: join(dir, 'etcd.pem'), keyFile: join(dir, 'etcd-key.pem'),
    clientCertFile: join(dir, 'client.pem'), clientKeyFile: join(dir, 'client-key.pem'),
  };
  writeFileSync(files.caFile, caCert);
  writeFileSync(files.certFile, server.cert);
  writeFileSync(files.keyFile, server.key);
  writeFileSync(files.clientCertFile, client.cert);
  writeFileSync(files.clientKeyFile, client.key);
  return files;
}

describe('etcd over TLS', () => {
  test('the server reaches etcd with --etcd-cafile, --etcd-certfile and --etcd-keyfile; without a client certificate it cannot', async () => {
    const dir = tempDir();
    const certs = await etcdCertificates(dir);
    const etcd = await startEtcd(1, undefined, certs);
    // The server by name; an address is checked below (sent as no TLS server name, which Node 26 refuses for one).
    const endpoints = etcd.endpoints.replace(/\/\/127\.0\.0\.1:/g, '//localhost:').split(',');
    let server: TestServer | undefined;
    try {
      assert.match(etcd.endpoints, /^https:/);
      server = await startTestServer({
        storageBackend: 'etcd3', etcdServers: endpoints,
        etcdCaFile: certs.caFile, etcdCertFile: certs.clientCertFile, etcdKeyFile: certs.clientKeyFile,
      });
      const made = await server.kubectl(['create', 'configmap', 'over-tls', '--from-literal=a=b']);
      assert.equal(made.code, 0, made.stderr);
      const got = await server.kubectl(['get', 'configmap', 'over-tls', '-o', 'jsonpath={.data.a}']);
      assert.equal(got.stdout, 'b');
      const ready = await server.client.get('/readyz/etcd');
      assert.equal(ready.status, 200, ready.text);
      const byAddress = new EtcdBackend({
        endpoints: etcd.endpoints.split(','), requestTimeoutMs: 3000,
        tls: { ca: readFileSync(certs.caFile), cert: readFileSync(certs.clientCertFile), key: readFileSync(certs.clientKeyFile) },
      });
      try {
        await byAddress.check();
      } finally {
        await byAddress.close();
      }
      const anonymous = new EtcdBackend({ endpoints, requestTimeoutMs: 3000, tls: { ca: readFileSync(certs.caFile) } });
      try {
        await assert.rejects(anonymous.check(), (err: StorageError) => err.code === 'Unavailable' || err.code === 'Timeout');
      } finally {
        await anonymous.close();
      }
    } finally {
      await server?.close();
      await etcd.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two API servers on one etcd under different --etcd-prefix', () => {
  const servers = twoServersOnOneEtcd(['/one', '/two']);

  test('each keeps its own objects, and consistent reads on each answer while both write', async () => {
    // Every write of one moves etcd's revision past what the other's watch shows:
    // the other's consistent reads learn of it by progress, not by events.
    const writes = async (server: TestServer, prefix: string) => {
      for (let i = 0; i < 60; i++) {
        const made = await server.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `${prefix}-${i}` } });
        assert.equal(made.status, 201, JSON.stringify(made.json));
        if (i % 3 === 0) {
          const list = await server.client.get('/api/v1/namespaces/default/configmaps');
          assert.equal(list.status, 200, JSON.stringify(list.json));
          assert.ok(list.json.items.some((cm: { metadata: { name: string } }) => cm.metadata.name === `${prefix}-${i}`), 'a consistent list sees its own write');
        }
      }
    };
    await Promise.all([writes(servers.one, 'a'), writes(servers.two, 'b')]);
    const names = async (server: TestServer) => (await server.client.get('/api/v1/namespaces/default/configmaps')).json.items
      .map((cm: { metadata: { name: string } }) => cm.metadata.name).filter((n: string) => /^[ab]-/.test(n));
    assert.ok((await names(servers.one)).every((n: string) => n.startsWith('a-')), 'one sees only its own');
    assert.ok((await names(servers.two)).every((n: string) => n.startsWith('b-')), 'two sees only its own');
    assert.equal((await names(servers.one)).length, 60);
  });
});
