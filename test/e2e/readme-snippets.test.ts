// The README's copy-paste snippets, run as a newcomer runs them: bash in a
// fresh folder, the real kubectl and openssl, KUBECONFIG set to the admin
// kubeconfig as the README says. Each block is read from the README itself,
// so the page and what works cannot drift apart.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { parseFlags } from '../../src/cli/flags.js';
import { parseMigrateFlags } from '../../src/cli/migrate.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The fenced block after `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const at = readme.indexOf(`<!-- snippet: ${name} -->`);
  assert.ok(at >= 0, `README has no snippet ${name}`);
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `snippet ${name} has no code block`);
  return block[1]!;
}

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  dir = tempDir();
});
after(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a script in bash (asynchronously: the server answers from this process). */
function bash(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, timeout: 120_000, env: { ...process.env, KUBECONFIG: s.kubeconfigPath } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script}\n${stdout}\n${stderr}\n${err.message}`));
      else resolve(stdout);
    });
  });
}

test('the token kubeconfig acts as the service account, not as the admin', async () => {
  const out = await bash(snippet('token-kubeconfig'));
  assert.match(out, /system:serviceaccount:demo:robot/);
  const kubeconfig = readFileSync(join(dir, 'robot.kubeconfig'), 'utf8');
  assert.doesNotMatch(kubeconfig, /client-certificate|client-key/);
});

test('the kubeconfig with a certificate issued through a CertificateSigningRequest acts as jane', async () => {
  const out = await bash(snippet('csr-kubeconfig'));
  assert.match(out, /Username\s+jane/);
  assert.match(out, /Groups\s+\[dev system:authenticated\]/);
});

test('the roles.yaml of the reconcile example gives alice what the README says', async () => {
  writeFileSync(join(dir, 'roles.yaml'), snippet('roles.yaml'));
  const out = await bash(snippet('reconcile'));
  assert.match(out, /^yes$/m);
  assert.match(out, /secrets\s+\[\]\s+\[\]\s+\[get list\]/);
});

test('the TypeScript example uses only what the package exports, and runs', async () => {
  const code = snippet('typescript');
  const imported = /^import \{ ([^}]+) \} from 'plat-apiserver';$/m.exec(code);
  assert.ok(imported, code);
  // The package by its own name, as a user's code imports it (package.json exports).
  const pkg: Record<string, unknown> = await import(['plat', 'apiserver'].join('-'));
  const names = imported[1]!.split(',').map((n) => n.trim());
  for (const name of names) assert.equal(typeof pkg[name], 'function', `plat-apiserver exports no ${name}`);
  const dataDir = join(dir, 'from-typescript');
  const body = code.replace(imported[0], '').replace("'/tmp/p'", JSON.stringify(dataDir)).replace(/console\.log\(/g, 'said.push(');
  const said: unknown[] = [];
  const run = new Function(...names, 'said', `return (async () => {${body}})();`) as (...args: unknown[]) => Promise<void>;
  await run(...names.map((n) => pkg[n]), said);
  assert.match(String(said[0]), /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(said[1], join(dataDir, 'admin.kubeconfig'));
});

test('the README stays short, names the installed command as npx runs it, and its links lead somewhere', async () => {
  assert.ok(readme.split('\n').length < 250, 'README under 250 lines');
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  for (const [command] of readme.matchAll(/npx ([a-z-]+)/g)) assert.ok(pkg.bin[command.slice(4)], command);
  for (const [, link] of readme.matchAll(/\]\(([^)#:]+)\)/g)) assert.ok(existsSync(new URL(`../../../${link}`, import.meta.url)), link);
});

test('every server command the README shows runs from a clone: npm start with flags the command takes, never npx in a block', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  const entry = /node (\S+)/.exec(pkg.scripts.start)?.[1];
  assert.ok(entry && existsSync(new URL(`../../../${entry}`, import.meta.url)), `npm start runs ${pkg.scripts.start}`);
  const blockLines = [...readme.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
  for (const line of blockLines) assert.doesNotMatch(line, /^\s*npx /, `a clone has no such command: ${line}`);
  const inline = [...readme.matchAll(/`(npm start[^`]*)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
  const commands = [...blockLines.filter((l) => l.startsWith('npm start')), ...inline];
  assert.ok(commands.some((c) => / migrate /.test(c)) && commands.some((c) => /etcd3/.test(c)), 'the etcd and migrate examples are among them');
  for (const command of commands) {
    // The README's placeholders, filled as a user would.
    const args = command.replace(/^npm start( --)?/, '').replace('<data dir>', 'data').replace('<url>', 'http://127.0.0.1:2379').split(' ').filter(Boolean);
    assert.doesNotThrow(() => (args[0] === 'migrate' ? parseMigrateFlags(args.slice(1)) : parseFlags(args)), command);
  }
});
