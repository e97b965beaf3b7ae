// How the client reaches a real server: TLS settings of the kubeconfig
// (tls-server-name, insecure-skip-tls-verify), proxies the test runs (http
// CONNECT and socks5), a watch that lives through a server restart without
// missing or repeating an event, and two server instances in one process.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { RemoteClient, type ApiObject, type WatchEvent } from '../../src/client/index.js';
import { serverCa } from '../support/certs.js';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';

let s: TestServer;
let dataDir: string;
let admin: any;
const tunnels: string[] = [];
let httpProxy: Server;
let httpsProxy: Server;
let socksProxy: Server;

/** An HTTP proxy (over TLS when `tls` is given) that answers CONNECT and nothing else, noting each tunnel. */
function startHttpProxy(tls?: { cert: string; key: string }): Server {
  const refuse = (_q: unknown, res: ServerResponse) => { res.writeHead(405); res.end(); };
  const proxy = tls ? createHttpsServer(tls, refuse) : createHttpServer(refuse);
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(`${tls ? 'https' : 'http'} ${req.url}`);
    const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.slice(req.url!.lastIndexOf(':') + 1))];
    const upstream = connect(port, host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return proxy.listen(0, '127.0.0.1') as unknown as Server;
}

/** A SOCKS5 proxy (no authentication, CONNECT to an IPv4 address or a name), noting each tunnel. */
function startSocksProxy(): Server {
  return createServer((client) => {
    let buf = Buffer.alloc(0);
    let stage = 0;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 0 && buf.length >= 2 && buf.length >= 2 + buf[1]!) {
        buf = buf.subarray(2 + buf[1]!);
        client.write(Buffer.from([5, 0]));
        stage = 1;
      }
      if (stage === 1 && buf.length >= 5) {
        const atyp = buf[3]!;
        const len = atyp === 1 ? 4 : atyp === 3 ? 1 + buf[4]! : 16;
        if (buf.length < 4 + len + 2) return;
        const host = atyp === 1 ? [...buf.subarray(4, 8)].join('.') : buf.subarray(5, 5 + buf[4]!).toString();
        const port = buf.readUInt16BE(4 + len);
        const rest = buf.subarray(4 + len + 2);
        stage = 2;
        client.off('data', onData);
        tunnels.push(`socks5 ${host}:${port}`);
        const upstream = connect(port, host, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          upstream.write(rest);
          upstream.pipe(client).pipe(upstream);
        });
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }
    };
    client.on('data', onData);
  }).listen(0, '127.0.0.1');
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

before(async () => {
  dataDir = tempDir('plat-client-conn-');
  s = await startTestServer({ storageBackend: 'sqlite', dataDir });
  admin = YAML.parse(readFileSync(s.kubeconfigPath, 'utf8'));
  // The https proxy's certificate comes from the cluster's CA: as upstream, the connection to the proxy trusts what the kubeconfig trusts.
  const ca = await serverCa(dataDir);
  const keys = await generateEcKeyPair();
  const proxyCert = await issueCertificate({ commonName: 'proxy', ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'server auth'], publicKey: keys.publicKeyPem, issuerKeyPem: ca.key, issuerCertPem: ca.cert });
  httpProxy = startHttpProxy();
  httpsProxy = startHttpProxy({ cert: proxyCert, key: keys.privateKeyPem });
  socksProxy = startSocksProxy();
  await Promise.all([once(httpProxy, 'listening'), once(httpsProxy, 'listening'), once(socksProxy, 'listening')]);
});
after(async () => {
  httpProxy.close();
  httpsProxy.close();
  socksProxy.close();
  await s.close();
});

/** The admin kubeconfig with `cluster` fields changed (undefined removes one). */
function kubeconfigWith(cluster: Record<string, unknown>): string {
  const doc = structuredClone(admin);
  const c = doc.clusters[0].cluster;
  for (const [k, v] of Object.entries(cluster)) {
    if (v === undefined) delete c[k];
    else c[k] = v;
  }
  const path = join(tempDir(), 'config');
  writeFileSync(path, YAML.stringify(doc));
  return path;
}

async function namespacesThrough(cluster: Record<string, unknown>): Promise<number> {
  const client = await RemoteClient.fromKubeconfig({ paths: [kubeconfigWith(cluster)] });
  try {
    const namespaces = await client.resource({ group: '', resource: 'namespaces' });
    return (await namespaces.list()).items.length;
  } finally {
    client.close();
  }
}

test('tls-server-name is the name the server certificate is checked against', async () => {
  assert.ok(await namespacesThrough({ 'tls-server-name': 'localhost' }) > 0);
  await assert.rejects(namespacesThrough({ 'tls-server-name': 'wrong.example' }), /wrong\.example/);
});

test('insecure-skip-tls-verify trusts any certificate; without it or a CA the server is refused', async () => {
  assert.ok(await namespacesThrough({ 'certificate-authority-data': undefined, 'insecure-skip-tls-verify': true }) > 0);
  await assert.rejects(namespacesThrough({ 'certificate-authority-data': undefined }), /self[- ]signed|unable to verify|certificate/i);
});

test('proxy-url: through an http and an https CONNECT proxy, and a socks5 proxy', async () => {
  tunnels.length = 0;
  const target = new URL(s.url).host;
  assert.ok(await namespacesThrough({ 'proxy-url': `http://127.0.0.1:${portOf(httpProxy)}` }) > 0);
  assert.ok(await namespacesThrough({ 'proxy-url': `https://127.0.0.1:${portOf(httpsProxy)}` }) > 0);
  assert.ok(await namespacesThrough({ 'proxy-url': `socks5://127.0.0.1:${portOf(socksProxy)}` }) > 0);
  assert.deepEqual(tunnels, [`http ${target}`, `https ${target}`, `socks5 ${target}`]);
  await assert.rejects(namespacesThrough({ 'proxy-url': 'http://127.0.0.1:1' }), /ECONNREFUSED/);
});

test('a watch lives through a server restart without missing or repeating an event, and a second server in the process is its own', async () => {
  const client = await RemoteClient.fromKubeconfig({ paths: [s.kubeconfigPath] });
  const configMaps = (await client.resource({ group: '', resource: 'configmaps' })).inNamespace('default');
  const cm = (name: string): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { restart: 'yes' } }, data: {} });
  const events: string[] = [];
  const watch = configMaps.watch({ labelSelector: 'restart=yes' });
  const take = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const e = (await watch.next()).value as WatchEvent;
      events.push(`${e.type} ${e.object.metadata?.name}`);
    }
  };
  await configMaps.create(cm('before-1'));
  await take(1); // the list: the first event comes from it
  await configMaps.create(cm('before-2'));
  await take(1);

  const port = s.port;
  await s.close();
  s = await startTestServer({ storageBackend: 'sqlite', dataDir, securePort: port });
  await configMaps.create(cm('after'));
  await configMaps.patch('before-1', 'merge', { data: { changed: 'yes' } });
  await take(2);
  await watch.return(undefined);
  assert.deepEqual(events, ['ADDED before-1', 'ADDED before-2', 'ADDED after', 'MODIFIED before-1']);

  const second = await startTestServer();
  try {
    const other = await RemoteClient.fromKubeconfig({ paths: [second.kubeconfigPath] });
    const otherConfigMaps = (await other.resource({ group: '', resource: 'configmaps' })).inNamespace('default');
    await otherConfigMaps.create(cm('only-second'));
    const names = async (r: typeof configMaps) => (await r.list({ labelSelector: 'restart=yes' })).items.map((o) => o.metadata?.name).sort();
    assert.deepEqual(await names(otherConfigMaps), ['only-second']);
    assert.deepEqual(await names(configMaps), ['after', 'before-1', 'before-2']);
    other.close();
  } finally {
    await second.close();
    client.close();
  }
});
