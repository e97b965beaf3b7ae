// The command as a newcomer meets it: --version, the welcome line (the
// kubeconfig's absolute path) in the run's one log format, one clear
// line and exit 1 when the port or the store is taken, a clean stop on
// Ctrl-C even when the pipe it writes to is gone (`npm start | tee log`), no
// warning when stopped right after the start, SIGTERM to `npm start`, and the
// start-up warning of an issuer that issuer discovery cannot serve.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runKubectl, startChildServer, tempDir, cliPath } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { eventually } from '../support/eventually.js';
import { seedKeyMaterial } from '../support/keymaterial.js';


function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function portOf(kubeconfigText: string): string {
  return /server: https:\/\/127\.0\.0\.1:(\d+)/.exec(kubeconfigText)![1];
}

test('--version prints the version and exits 0', () => {
  const r = run(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^plat-apiserver v\d+\.\d+\.\d+\+plat\.\d+\.\d+\.\d+\n$/);
});

test('a taken port and a locked store are one line and exit 1, and the data dir is left as it was; the welcome names URL, kubeconfig and a command', async () => {
  const dir = tempDir();
  const other = tempDir();
  const first = await startChildServer([], dir);
  try {
    assert.match(first.output(), /^I\d{4} [\d:.]+ +\d+ serve\.ts:\d+\] "plat-apiserver is serving" url="https:\/\/127\.0\.0\.1:\d+" kubeconfig=".*admin\.kubeconfig" try="export KUBECONFIG=.*admin\.kubeconfig; kubectl get namespaces"$/m);
    // The command users run (the bundle) serves kubectl.
    const got = await runKubectl(first.kubeconfigPath, ['get', 'namespace', 'default', '-o', 'name']);
    assert.equal(got.stdout, 'namespace/default\n', got.stderr);
    const port = portOf(readFileSync(first.kubeconfigPath, 'utf8'));

    // A failed start leaves the data dir as it found it: a new one gone again, an empty one empty, a used one whole.
    const kept = join(other, 'used');
    mkdirSync(kept);
    writeFileSync(join(kept, 'notes.txt'), 'mine');
    for (const dataDir of [join(other, 'fresh', 'data'), join(other, 'empty'), kept]) {
      if (dataDir.endsWith('empty')) mkdirSync(dataDir);
      const busyPort = run(['--secure-port', port, '--data-dir', dataDir, '--log-level', 'warn']);
      assert.equal(busyPort.code, 1);
      assert.equal(busyPort.stderr, `plat-apiserver: port ${port} on 127.0.0.1 is already in use (is another server running?); choose another with --secure-port\n`);
    }
    assert.deepEqual(readdirSync(other).sort(), ['empty', 'used']);
    assert.deepEqual(readdirSync(join(other, 'empty')), []);
    assert.equal(readFileSync(join(kept, 'notes.txt'), 'utf8'), 'mine');

    const locked = run(['--secure-port', '0', '--data-dir', dir, '--log-level', 'warn']);
    assert.equal(locked.code, 1);
    assert.match(locked.stderr, /^plat-apiserver: .*store\.db is locked: another process has the store open \(--data-dir .*\)\n$/);
    assert.ok(existsSync(join(dir, 'store.db')) && existsSync(join(dir, 'pki')), 'a store another process holds is left alone');
  } finally {
    first.process.kill('SIGTERM');
    await new Promise((r) => first.process.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});

test('Ctrl-C with the output pipe gone still stops cleanly: exit 0, no WAL left', async () => {
  const dir = tempDir();
  try {
    const server = await startChildServer(['--log-level', 'info'], dir);
    // The reader of the pipe (tee) is gone, as after Ctrl-C in `npm start 2>&1 | tee log`.
    server.process.stdout!.destroy();
    server.process.stderr!.destroy();
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
    server.process.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.equal(existsSync(join(dir, 'store.db-wal')), false, 'the WAL is checkpointed and removed on a clean stop');
    assert.equal(existsSync(join(dir, 'store.db')), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a process-level guard keeps the server up after a stray exception', async () => {
  // An exception outside any request (here: thrown from a callback on SIGUSR2) is logged, and the server goes on.
  const dir = tempDir();
  const strayOnSignal = 'data:text/javascript,process.on("SIGUSR2", () => setImmediate(() => { throw new Error("stray") }))';
  const server = await startChildServer(['--log-level', 'error'], dir, ['--import', strayOnSignal]);
  try {
    server.process.kill('SIGUSR2');
    const client = TestClient.fromKubeconfig(server.kubeconfigPath);
    try {
      await eventually('the stray exception is logged', () => /uncaught exception/.test(server.output()), 5_000);
      assert.match(server.output(), /uncaught exception; the server goes on/);
      assert.equal(server.process.exitCode, null, `the server exited: ${server.output()}`);
      assert.equal((await client.get('/readyz')).status, 200);
    } finally {
      client.close();
    }
  } finally {
    server.process.kill('SIGTERM');
    await new Promise((r) => server.process.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an issuer that is not https: issuer discovery is not served, and the start says why; a jwks URI must be https', async () => {
  const dir = tempDir();
  const server = await startChildServer(['--service-account-issuer', 'http://issuer.example'], dir);
  const client = TestClient.fromKubeconfig(server.kubeconfigPath);
  try {
    assert.match(server.output(), /service account issuer discovery is not served: issuer URL must use https scheme, got: http:\/\/issuer\.example/);
    assert.equal((await client.get('/.well-known/openid-configuration')).status, 404);
    assert.equal((await client.get('/openid/v1/jwks')).status, 404);
  } finally {
    client.close();
    server.process.kill('SIGTERM');
    await new Promise((r) => server.process.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
  const r = run(['--service-account-jwks-uri', 'http://keys.example/jwks']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /invalid argument "http:\/\/keys\.example\/jwks" for "--service-account-jwks-uri" flag: must be an https URL/);
});

/**
 * Starts the CLI in `dir` (relative --data-dir, as a newcomer types it) and
 * resolves with its output once the welcome is out. Its standard output and
 * error share one file, as they share a terminal, so the output is in the
 * order the process wrote it (two pipes read side by side have no order).
 */
async function startAndWaitForWelcome(dir: string, args: string[] = []): Promise<{ child: ReturnType<typeof spawn>; output: () => string }> {
  await seedKeyMaterial(join(dir, 'data'));
  const outPath = join(dir, 'output.txt');
  const fd = openSync(outPath, 'w');
  const child = spawn(process.execPath, [cliPath, '--secure-port', '0', '--data-dir', 'data', ...args], { cwd: dir, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const output = () => readFileSync(outPath, 'utf8');
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (/try"?[=:]"?export KUBECONFIG=.*\n/.test(output())) {
        clearInterval(poll);
        resolve({ child, output });
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`exited ${code} before the welcome: ${output()}`));
    });
  });
}

test('one log format a run: klog text lines by default, the welcome among them; JSON lines with --logging-format json', async () => {
  for (const format of ['text', 'json']) {
    const dir = tempDir();
    try {
      const { child, output } = await startAndWaitForWelcome(dir, ['--log-level', 'info', ...(format === 'json' ? ['--logging-format', 'json'] : [])]);
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
      const lines = output().split('\n').filter((l) => l !== '');
      if (format === 'text') {
        for (const line of lines) assert.match(line, /^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.-]+:\d+\] "/, output());
        const welcome = lines.find((l) => l.includes('] "plat-apiserver is serving" '));
        assert.ok(welcome?.endsWith(` kubeconfig="${kubeconfig}" try="export KUBECONFIG=${kubeconfig}; kubectl get namespaces"`), output());
        assert.match(welcome!, /\] "plat-apiserver is serving" url="https:\/\/127\.0\.0\.1:\d+" /);
        assert.ok(lines.some((l) => l.endsWith('] "received signal, shutting down" signal="SIGTERM"')), output());
      } else {
        const records = lines.map((l) => JSON.parse(l));
        const welcome = records.find((r) => r.msg === 'plat-apiserver is serving');
        assert.equal(welcome?.kubeconfig, kubeconfig, output());
        assert.equal(welcome.try, `export KUBECONFIG=${kubeconfig}; kubectl get namespaces`);
        assert.ok(records.some((r) => r.msg === 'received signal, shutting down' && r.signal === 'SIGTERM'), output());
        // The 'serving' line says when each step of the start ended (the restart bench reads it), in the order they ran.
        const serving = records.find((r) => r.msg === 'serving');
        const steps = serving?.startup?.steps as Array<[string, number]> | undefined;
        assert.deepEqual(steps?.map(([name]) => name), ['node', 'modules', 'config', 'keys', 'storage', 'apis', 'listening', 'hooks', 'controllers'], output());
        assert.ok(steps!.every(([, at], i) => at >= 0 && (i === 0 || at >= steps![i - 1]![1])), JSON.stringify(steps));
        assert.equal(typeof serving.startup.origin, 'number');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('stopping right after the start logs no warning (all controllers running), three times over', async () => {
  for (let i = 0; i < 3; i++) {
    const dir = tempDir();
    try {
      const { child, output } = await startAndWaitForWelcome(dir, ['--log-level', 'warn']);
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGINT');
      assert.equal(await exited, 0);
      const warnings = output().split('\n').filter((l) => /^[WEF]\d{4} /.test(l));
      assert.deepEqual(warnings, [], output());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('SIGTERM sent to npm start reaches the server: it stops cleanly and npm exits 0', async () => {
  const dir = tempDir();
  const root = new URL('../../../', import.meta.url).pathname;
  const npm = spawn('npm', ['start', '--', '--secure-port', '0', '--data-dir', join(dir, 'data'), '--log-level', 'warn'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer) => { out += d; if (/try="export KUBECONFIG=/.test(out)) resolve(); };
      npm.stdout!.on('data', seen);
      npm.stderr!.on('data', seen);
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
    });
    const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
    npm.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    assert.match(out, /"received signal, shutting down" signal="SIGTERM"/);
    // Nothing serves there any more: the server went with npm, not on as an orphan.
    const client = TestClient.fromKubeconfig(join(dir, 'data', 'admin.kubeconfig'));
    try {
      await assert.rejects(client.get('/readyz'), /ECONNREFUSED/);
    } finally {
      client.close();
    }
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
