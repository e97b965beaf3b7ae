// Starts real servers for tests: in-process (startServer) or as a child
// process running the built CLI, in a fresh temporary data folder.

import { mkdtempSync, rmSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import YAML from 'yaml';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawn, ChildProcess, execFile } from 'node:child_process';
import { startServer, RunningServer } from '../../src/apiserver/start.js';
import type { ServerOptions } from '../../src/server/options.js';
import { TestClient } from './client.js';
import { after } from 'node:test';
import { seedKeyMaterial } from './keymaterial.js';

/**
 * Where temporary folders go: tmpfs when there is one. The stores fsync every
 * commit, and the tests are about what a store keeps across a process's
 * death (kill -9 included), which tmpfs keeps too, not about the disk.
 */
export const scratchRoot = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

export function tempDir(prefix = 'plat-test-'): string {
  const dir = mkdtempSync(join(scratchRoot, prefix));
  madeDirs.push(dir);
  return dir;
}

// Every folder made here goes when the test file's process ends, whether or
// not its test removed it (many did not: thousands were left in /tmp, and
// tmpfs keeps them in memory).
const madeDirs: string[] = [];
process.once('exit', () => {
  for (const dir of madeDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch { /* a child still writing into it: left behind */ }
  }
});

export interface TestServer extends RunningServer {
  client: TestClient;
  dataDir: string;
  /** Runs kubectl against this server; resolves with its output (rejects never: check `code`). */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  /** Runs kubectl and fails the test unless it exits 0; resolves with its standard output. */
  kubectlOk(args: string[], input?: string): Promise<string>;
  close(): Promise<void>;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}




/** `kubectl auth whoami` with a bearer token through `kubeconfig`: the user info, or undefined when refused. */
export async function kubectlWhoami(kubeconfig: string, token: string): Promise<any> {
  const r = await runKubectl(kubeconfig, ['--token', token, 'auth', 'whoami', '-o', 'json']);
  if (r.code !== 0) {
    assert.match(r.stderr, /Unauthorized|must be logged in/, r.stderr);
    return undefined;
  }
  return JSON.parse(r.stdout).status.userInfo;
}
/**
 * A kubeconfig for `s` that trusts its CA but carries no credential (kubectl
 * then sends what `--token` gives it, or nothing); returns its path.
 */
export function writeBareKubeconfig(s: { kubeconfigPath: string; dataDir: string }): string {
  const admin = YAML.parse(readFileSync(s.kubeconfigPath, 'utf8'));
  const path = join(s.dataDir, 'bare.kubeconfig');
  writeFileSync(path, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'bare',
    clusters: [{ name: 'bare', cluster: admin.clusters[0].cluster }],
    contexts: [{ name: 'bare', context: { cluster: 'bare', user: 'nobody' } }],
    users: [{ name: 'nobody', user: {} }],
  }));
  return path;
}

/** A static token file (`--token-auth-file`) with these CSV lines, in a fresh folder; returns its path. */
export function tokenFile(lines: string): string {
  const path = join(tempDir(), 'tokens.csv');
  writeFileSync(path, lines);
  return path;
}

/**
 * Runs kubectl against a kubeconfig. Its discovery cache lives beside the
 * kubeconfig, not in ~/.kube/cache: that one is keyed by host and port, and a
 * server of an earlier test (or file) that had the same random port left
 * kinds there this server does not have (`kubectl get all` then asks for
 * them). A test's own --cache-dir, given later, wins.
 */
export function runKubectl(kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dirname(kubeconfig), 'kubectl-cache'), ...args], { timeout: 60_000, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof (err as any).code === 'number' ? (err as any).code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Creates `body` at `collection` (asserting the 201); answers the new object's path. */
export async function createdAt(s: TestServer, collection: string, body: Record<string, any>): Promise<string> {
  const r = await s.client.post(collection, body);
  assert.equal(r.status, 201, r.text);
  return `${collection}/${body.metadata.name}`;
}

/** PUTs the stored object at `path` with `change` applied through its status sub-resource; answers the response. */
export async function writeStatus(s: TestServer, path: string, change: (obj: Record<string, any>) => void) {
  const obj = (await s.client.get(path)).json;
  change(obj);
  return s.client.put(`${path}/status`, obj);
}

/** Asserts a status write's answer: 200 when nothing is `expected`, else a 422 Invalid naming each expected message. */
export function assertStatusWrite(r: { status: number; text: string; json: any }, expected: readonly string[]): void {
  if (!expected.length) {
    assert.equal(r.status, 200, r.text);
    return;
  }
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.reason, 'Invalid');
  for (const message of expected) assert.ok(r.json.message.includes(message), `${message}\nin: ${r.json.message}`);
}

/**
 * Controllers of a test server unless a test names its own: all but the
 * identity ones, which write into every namespace and account (token secrets,
 * root CA ConfigMaps); tests that watch or count objects see only their own.
 * Nor the pod garbage collector: tests bind pods to nodes they never create,
 * and it would remove those pods 40 s later, in the middle of a long file.
 * Tests of those controllers ask for them with `controllers: ['*']`.
 */
export const testControllers = ['*', '-serviceaccount-token', '-root-ca-cert-publisher', '-pod-garbage-collector'];

/**
 * How a test server comes by its key material: 'fixture' (the default) copies
 * the run's pre-made files into a data folder that has none, as if the server
 * had started there before; 'generate' leaves a fresh folder empty, so the
 * server generates its own as on a real first start.
 */
export interface KeyMaterialChoice {
  keyMaterial?: 'fixture' | 'generate';
}

export async function startTestServer(options: Partial<ServerOptions> & KeyMaterialChoice = {}): Promise<TestServer> {
  const { keyMaterial = 'fixture', ...serverOptions } = options;
  const dataDir = options.dataDir ?? tempDir();
  if (keyMaterial === 'fixture') await seedKeyMaterial(dataDir);
  const server = await startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', controllers: testControllers, ...serverOptions, dataDir });
  const client = TestClient.fromKubeconfig(server.kubeconfigPath);
  return {
    ...server,
    client,
    dataDir,
    kubectl: (args, input) => runKubectl(server.kubeconfigPath, args, input),
    async kubectlOk(args, input) {
      const r = await runKubectl(server.kubeconfigPath, args, input);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    },
    async close() {
      client.close();
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The CLI as users run it: the bundle scripts/bundle.mjs writes (run-tests.mjs makes it before the tests run). */
export const cliPath = new URL('../../bin/plat-apiserver.js', import.meta.url).pathname;

export interface ChildServer {
  process: ChildProcess;
  kubeconfigPath: string;
  output: () => string;
}

/** Child servers still running: a test that fails before stopping its own would otherwise keep the file's process (and the suite) waiting. */
const runningChildren = new Set<ChildProcess>();
after(() => {
  for (const child of runningChildren) child.kill('SIGKILL');
});

/** Starts the built CLI as a child process and waits until its kubeconfig is written and /readyz answers 200. */
export async function startChildServer(args: string[], dataDir: string, nodeArgs: string[] = [], { keyMaterial = 'fixture' }: KeyMaterialChoice = {}): Promise<ChildServer> {
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  rmSync(kubeconfigPath, { force: true });
  if (keyMaterial === 'fixture') await seedKeyMaterial(dataDir);
  const child = spawn(process.execPath, [...nodeArgs, cliPath, '--secure-port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  runningChildren.add(child);
  child.once('exit', () => runningChildren.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${out}`);
    if (existsSync(kubeconfigPath)) {
      const c = TestClient.fromKubeconfig(kubeconfigPath);
      try {
        const r = await c.get('/readyz');
        if (r.status === 200) return { process: child, kubeconfigPath, output: () => out };
      } catch { /* not listening yet */ } finally { c.close(); }
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready: ${out}`);
}
