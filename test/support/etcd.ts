// Starts real etcd servers for tests: one member or a small cluster of local
// processes, on 127.0.0.1 ports picked here, data in a temporary folder, and
// stops them. Needs the `etcd` binary on the PATH (Debian's etcd-server).

import { spawn, ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { scratchRoot, startTestServer, type TestServer } from './server.js';
import type { ServerOptions } from '../../src/server/options.js';

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  process: ChildProcess | undefined;
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** Client URLs of every member, comma-separated (the --etcd-servers form). */
  endpoints: string;
  /** SIGKILL one member. */
  kill(index: number): Promise<void>;
  /** The index of the member that leads now (asked of the running members). */
  leaderIndex(): Promise<number>;
  /** Start a killed member again on its old ports and data. */
  restart(index: number): Promise<void>;
  stop(): Promise<void>;
}

/** `n` distinct ports that were free a moment ago (the OS picks them; all held until all are picked). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  })));
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}


/** PEM files for clients over TLS: members require a client certificate signed by `caFile`. */
export interface EtcdTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** `size` members; their data under `dataRoot` (default: tmpfs when there is one); clients over TLS when `tls` is given. */
export async function startEtcd(size = 1, dataRoot = scratchRoot, tls?: EtcdTls): Promise<EtcdCluster> {
  const root = mkdtempSync(join(dataRoot, 'etcd-test-'));
  const scheme = tls ? 'https' : 'http';
  const members: EtcdMember[] = [];
  const ports = await freePorts(2 * size);
  for (let i = 0; i < size; i++) {
    members.push({
      name: `m${i}`,
      clientUrl: `${scheme}://127.0.0.1:${ports[2 * i]}`,
      peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
      dataDir: join(root, `m${i}`),
      process: undefined,
    });
  }
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const launch = (m: EtcdMember): void => {
    const child = spawn('etcd', [
      '--name', m.name,
      '--data-dir', m.dataDir,
      '--listen-client-urls', m.clientUrl,
      '--advertise-client-urls', m.clientUrl,
      '--listen-peer-urls', m.peerUrl,
      '--initial-advertise-peer-urls', m.peerUrl,
      '--initial-cluster', initialCluster,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', root,
      '--heartbeat-interval', '50',
      '--election-timeout', '500',
      '--logger', 'zap',
      '--log-level', 'error',
      ...(tls ? ['--cert-file', tls.certFile, '--key-file', tls.keyFile, '--trusted-ca-file', tls.caFile, '--client-cert-auth'] : []),
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr!.on('data', (d) => { errors = (errors + String(d)).slice(-4000); });
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null && m.process === child) process.stderr.write(`etcd ${m.name} exited ${code}: ${errors}\n`);
    });
    m.process = child;
  };
  for (const m of members) launch(m);
  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.clientUrl).join(','),
    async kill(index) {
      const m = members[index]!;
      const child = m.process;
      m.process = undefined;
      if (child && child.exitCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
    },
    async leaderIndex() {
      for (const m of members) {
        if (!m.process) continue;
        try {
          const ids = await Promise.all(members.map(async (other) => (other.process ? (await memberStatus(other.clientUrl, tls)).header.member_id : undefined)));
          const index = ids.indexOf((await memberStatus(m.clientUrl, tls)).leader);
          if (index >= 0) return index;
        } catch { /* this member cannot say: ask the next */ }
      }
      throw new Error('no member knows a leader');
    },
    async restart(index) {
      const m = members[index]!;
      launch(m);
      await waitHealthy([m], tls);
    },
    async stop() {
      for (let i = 0; i < members.length; i++) await cluster.kill(i);
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await waitHealthy(members, tls);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** A member's answer at `path` (GET, or POST of `body`), with the client certificate when it wants one. */
function ask(url: string, path: string, tls: EtcdTls | undefined, body?: string): Promise<string> {
  const options = {
    method: body === undefined ? 'GET' : 'POST',
    ...(tls ? { ca: readFileSync(tls.caFile), cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)(`${url}${path}`, options, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const health = (url: string, tls: EtcdTls | undefined) => ask(url, '/health', tls);

/** Maintenance.Status through etcd's JSON gateway: the member's own ID and its leader's (64-bit IDs as decimal strings). */
async function memberStatus(url: string, tls: EtcdTls | undefined): Promise<{ header: { member_id: string }; leader: string }> {
  return JSON.parse(await ask(url, '/v3/maintenance/status', tls, '{}'));
}

/** Waits until each member answers /health with a leader elected. */
async function waitHealthy(members: EtcdMember[], tls?: EtcdTls, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (const m of members) {
    for (;;) {
      if (m.process?.exitCode !== null && m.process?.exitCode !== undefined) throw new Error(`etcd ${m.name} exited with ${m.process.exitCode}`);
      try {
        const body = JSON.parse(await health(m.clientUrl, tls)) as { health?: string };
        if (body.health === 'true') break;
      } catch { /* not up yet */ }
      if (Date.now() > deadline) throw new Error(`etcd ${m.name} did not become healthy`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Two API servers on one fresh etcd, as a suite's before() makes them; `second` adds options of the second server's own. */
export interface ServersOnEtcd {
  etcd: EtcdCluster;
  one: TestServer;
  two: TestServer;
  close(): Promise<void>;
}

export async function startTwoServersOnEtcd(options: Partial<ServerOptions> = {}, second: (one: TestServer) => Partial<ServerOptions> = () => ({})): Promise<ServersOnEtcd> {
  const etcd = await startEtcd(1);
  const shared: Partial<ServerOptions> = { storageBackend: 'etcd3', etcdServers: etcd.endpoints.split(','), ...options };
  const one = await startTestServer(shared);
  // The second generates its own keys, so that what it trusts of the first's is what `second` gives it.
  const two = await startTestServer({ ...shared, ...second(one), keyMaterial: 'generate' });
  return {
    etcd, one, two,
    async close() {
      await one.close();
      await two.close();
      await etcd.stop();
    },
  };
}
