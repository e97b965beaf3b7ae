// The server under test as a child process of the benchmark: spawn the
// bundled CLI on 127.0.0.1, time spawn → first /readyz 200 (polled every 5 ms with the
// admin client certificate), read its RSS, and make sure it never outlives us.

import { spawn, ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import YAML from 'yaml';

// The bundle users run (scripts/bundle.mjs; `npm run bench` makes it).
const cliPath = new URL('../bin/plat-apiserver.js', import.meta.url).pathname;
const noWorkPath = new URL('./nowork-server.js', import.meta.url).pathname;

export interface Credentials {
  ca: string;
  cert: string;
  key: string;
}

export interface BenchServer {
  process: ChildProcess;
  pid: number;
  url: string;
  port: number;
  creds: Credentials;
  kubeconfigPath: string;
  /** Milliseconds from spawn to the first 200 of /readyz. */
  readyMs: number;
  /** When the process was spawned, epoch ms (to line up the times the server reports with ours). */
  spawnedAt: number;
  /** Number of /readyz polls sent before (and including) the 200. */
  polls: number;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export function readCredentials(kubeconfigPath: string): Credentials {
  const cfg = YAML.parse(readFileSync(kubeconfigPath, 'utf8'));
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    ca: b64(cfg.clusters[0].cluster['certificate-authority-data']),
    cert: b64(cfg.users[0].user['client-certificate-data']),
    key: b64(cfg.users[0].user['client-key-data']),
  };
}

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

// Every child we started, so an exit or a signal in the benchmark takes them along.
const live = new Set<ChildProcess>();
let hooksInstalled = false;
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => { for (const c of live) c.kill('SIGKILL'); });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const c of live) c.kill('SIGKILL');
      process.exit(130);
    });
  }
}

/** One GET /readyz; resolves with the status code, rejects on a connection error. */
function readyz(agent: Agent, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', method: 'GET', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.setTimeout(2000, () => req.destroy(new Error('readyz timed out')));
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StartOptions {
  dataDir: string;
  /** Admin credentials from an earlier start on the same data dir; without them we wait for admin.kubeconfig. */
  creds?: Credentials;
  extraArgs?: string[];
  /** Extra node flags for the child (for example --cpu-prof). */
  nodeArgs?: string[];
  /** Variables added to the child's environment. */
  env?: Record<string, string>;
  timeoutMs?: number;
  /**
   * A script taking the CLI's flags to run instead of this checkout's CLI:
   * another build of the project, or a server with bench kinds added.
   */
  entry?: string;
}

export async function startBenchServer(opts: StartOptions): Promise<BenchServer> {
  installExitHooks();
  const port = await freePort();
  const kubeconfigPath = join(opts.dataDir, 'admin.kubeconfig');
  const args = [
    ...(opts.nodeArgs ?? []), opts.entry ?? cliPath,
    '--secure-port', String(port), '--data-dir', opts.dataDir,
    '--storage-backend', 'sqlite', '--log-level', 'warn', ...(opts.extraArgs ?? []),
  ];
  const t0 = performance.now();
  const spawnedAt = performance.timeOrigin + t0;
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  live.add(child);
  let out = '';
  const keep = (d: Buffer) => { out = (out + d.toString()).slice(-20_000); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => { live.delete(child); resolve(); }));

  const stop = async (graceMs = 5000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let creds = opts.creds;
  let agent: Agent | undefined;
  let polls = 0;
  let lastError = '';
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${out}`);
      if (!creds && existsSync(kubeconfigPath)) {
        try { creds = readCredentials(kubeconfigPath); } catch { /* half-written; next round */ }
      }
      if (creds) {
        agent ??= new Agent({ keepAlive: true, maxSockets: 1, ca: creds.ca, cert: creds.cert, key: creds.key });
        polls++;
        try {
          const status = await readyz(agent, port);
          if (status === 200) {
            const readyMs = performance.now() - t0;
            return {
              process: child, pid: child.pid!, port, url: `https://127.0.0.1:${port}`, creds, kubeconfigPath,
              readyMs, spawnedAt, polls, output: () => out, stop,
            };
          }
          lastError = `status ${status}`;
        } catch (e) {
          lastError = (e as Error).message;
        }
      }
      await sleep(5);
    }
    throw new Error(`server did not become ready in time (last: ${lastError}): ${out}`);
  } catch (e) {
    await stop(0);
    throw e;
  } finally {
    agent?.destroy();
  }
}

export interface NoWorkServer {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/**
 * The no-work HTTPS server (bench/nowork-server.ts) as a child process, serving
 * with the key material of the real server's data dir, so the admin
 * credentials of that server work against it too.
 */
export async function startNoWorkServer(dataDir: string, timeoutMs = 10_000): Promise<NoWorkServer> {
  installExitHooks();
  const port = await freePort();
  const child = spawn(process.execPath, [noWorkPath, join(dataDir, 'pki'), String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => { live.delete(child); resolve(); }));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no-work server did not start within ${timeoutMs} ms: ${out}`)), timeoutMs);
      const keep = (d: Buffer) => {
        out = (out + d.toString()).slice(-20_000);
        if (out.includes(`listening ${port}`)) { clearTimeout(timer); resolve(); }
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      void exited.then(() => { clearTimeout(timer); reject(new Error(`no-work server exited: ${out}`)); });
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { pid: child.pid!, url: `https://127.0.0.1:${port}`, stop };
}

/** One GET with the admin certificate; resolves with status and body text. */
export function adminGet(server: BenchServer, path: string): Promise<{ status: number; text: string }> {
  const agent = new Agent({ ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET', agent, headers: { Accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

/** One sample of a metric without labels from the server's /metrics; NaN when absent. */
export async function serverMetric(server: BenchServer, name: string): Promise<number> {
  const r = await adminGet(server, '/metrics');
  if (r.status !== 200) throw new Error(`/metrics: HTTP ${r.status}`);
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(r.text);
  return m ? Number(m[1]) : NaN;
}

/** Resident set size of a process in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state; utime and stime are fields 14 and 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]);
  return (ticks * 1000) / clockTicksPerSecond;
}

/**
 * CPU time a process's live threads have used so far, in ms, from the
 * scheduler's own nanosecond count (/proc/<pid>/task/<tid>/schedstat), or
 * from cpuMs' 10 ms ticks where that is missing. For side-by-side rows whose
 * difference is a few per cent of a second's phase; unlike cpuMs it forgets
 * threads that have ended, which a server under load does not have.
 */
export function cpuMsPrecise(pid: number): number {
  if (!existsSync(`/proc/${pid}/schedstat`)) return cpuMs(pid);
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** USER_HZ; 100 on every Linux this runs on (getconf CLK_TCK). */
const clockTicksPerSecond = 100;

/**
 * Waits until a process has gone quiet (under 5 % of a core over 50 ms) and
 * answers how long it stayed busy after being asked, in ms (the quiet window
 * that ends the wait not counted), at most `limitMs`. A phase whose writes
 * leave work to the in-process controllers (a token per new ServiceAccount)
 * is charged that work, wall time and CPU, instead of the phase after it.
 */
export async function settle(pid: number, limitMs = 30_000): Promise<number> {
  const started = performance.now();
  let busyUntil = started;
  let last = cpuMsPrecise(pid);
  while (performance.now() - started < limitMs) {
    await new Promise((r) => setTimeout(r, 50));
    const now = cpuMsPrecise(pid);
    const used = now - last;
    last = now;
    if (used < 2.5) return busyUntil - started;
    busyUntil = performance.now();
  }
  return busyUntil - started;
}
