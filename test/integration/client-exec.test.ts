// Exec credential plugins against a real server, with real helper
// executables: each plugin here is a shell script that answers the next of
// its prepared answers, counts its runs and keeps what it was given.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import YAML from 'yaml';
import { startTestServer, tempDir, tokenFile, type TestServer } from '../support/server.js';
import { clientCert, serverCa, type CertPair } from '../support/certs.js';
import { RemoteClient, StatusError } from '../../src/client/index.js';
import type { ExecProviderOptions } from '../../src/client/exec.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let cluster: Record<string, unknown>;
let carol: CertPair;
let dave: CertPair;

before(async () => {
  s = await startTestServer({ tokenAuthFile: tokenFile('good-token,alice,1\nother-token,bob,2\n') });
  cluster = YAML.parse(readFileSync(s.kubeconfigPath, 'utf8')).clusters[0].cluster;
  const ca = await serverCa(s.dataDir);
  [carol, dave] = await Promise.all([clientCert(ca, 'carol'), clientCert(ca, 'dave')]);
});
after(() => s.close());

const v1 = 'client.authentication.plat.io/v1';
const v1beta1 = 'client.authentication.plat.io/v1beta1';

interface Plugin {
  dir: string;
  kubeconfig: string;
  /** How many times the plugin ran. */
  runs(): number;
  /** PLAT_EXEC_INFO of its last run, parsed. */
  info(): any;
  /** Its argument, MY_SETTING and __proto__ of its last run. */
  argsAndEnv(): string;
}

/**
 * A plugin (bin/plugin beside the kubeconfig, named relatively) whose n-th
 * run prints `answers[n-1]` (the last one once they run out); `exec` is the
 * kubeconfig's exec entry beyond command and apiVersion.
 */
function writePlugin(answers: unknown[], exec: Record<string, unknown> = {}, extension?: unknown): Plugin {
  const dir = tempDir('plat-exec-');
  mkdirSync(join(dir, 'bin'));
  answers.forEach((a, i) => writeFileSync(join(dir, `answer.${i + 1}`), typeof a === 'string' ? a : JSON.stringify(a)));
  const last = answers.length;
  writeFileSync(join(dir, 'bin', 'plugin'), `#!/bin/sh
cd "$(dirname "$0")/.."
n=$(( $(cat count 2>/dev/null || echo 0) + 1 ))
echo $n > count
printf '%s' "$${vocabulary.execInfoEnv}" > info.json
printf '%s %s %s' "$1" "$MY_SETTING" "$__proto__" > args
echo "plugin run $n" >&2
if [ -f answer.$n ]; then cat answer.$n; else cat answer.${last}; fi
`);
  chmodSync(join(dir, 'bin', 'plugin'), 0o755);
  const kubeconfig = join(dir, 'config');
  const clusterEntry = extension === undefined ? cluster : { ...cluster, extensions: [{ name: 'client.authentication.plat.io/exec', extension }] };
  writeFileSync(kubeconfig, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: clusterEntry }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    users: [{ name: 'u', user: { exec: { command: './bin/plugin', apiVersion: v1, interactiveMode: 'IfAvailable', ...exec } } }],
  }));
  return {
    dir, kubeconfig,
    runs: () => (existsSync(join(dir, 'count')) ? Number(readFileSync(join(dir, 'count'), 'utf8')) : 0),
    info: () => JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')),
    argsAndEnv: () => readFileSync(join(dir, 'args'), 'utf8'),
  };
}

const tokenAnswer = (token: string, extra: Record<string, unknown> = {}, apiVersion = v1) => ({ apiVersion, kind: 'ExecCredential', status: { token, ...extra } });
const certAnswer = (pair: CertPair, extra: Record<string, unknown> = {}) => ({ apiVersion: v1, kind: 'ExecCredential', status: { clientCertificateData: pair.cert, clientKeyData: pair.key, ...extra } });

function collect(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  return { stream: new Writable({ write(c, _e, cb) { chunks.push(Buffer.from(c)); cb(); } }), text: () => Buffer.concat(chunks).toString() };
}

async function client(p: Plugin, exec: ExecProviderOptions = {}): Promise<RemoteClient> {
  return RemoteClient.fromKubeconfig({ paths: [p.kubeconfig], exec: { stdinIsTerminal: () => false, stderr: collect().stream, ...exec } });
}

async function whoami(c: RemoteClient): Promise<string> {
  const review = await c.requestJson('POST', `/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`, { body: { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' } });
  return review.status.userInfo.username;
}

test('a token answer authenticates; the plugin gets its args, env and PLAT_EXEC_INFO; its stderr passes through; the answer is cached', async () => {
  const p = writePlugin([tokenAnswer('good-token')], { args: ['--flag'], env: [{ name: 'MY_SETTING', value: 'on' }, { name: '__proto__', value: 'a variable' }] });
  const stderr = collect();
  const c = await client(p, { stderr: stderr.stream });
  assert.equal(await whoami(c), 'alice');
  assert.equal(await whoami(c), 'alice');
  assert.equal(p.runs(), 1, 'the second request used the cached token');
  assert.deepEqual(p.info(), { kind: 'ExecCredential', apiVersion: v1, spec: { interactive: false } });
  assert.equal(p.argsAndEnv(), '--flag on a variable', 'an env entry named __proto__ is a variable like any other');
  assert.equal(stderr.text(), 'plugin run 1\n');
  c.close();
});

test('a 401 makes one refresh per request: a stale token is replaced, a plugin that keeps answering stale ones gives the 401', async () => {
  const p = writePlugin([tokenAnswer('stale'), tokenAnswer('good-token')]);
  const c = await client(p);
  assert.equal(await whoami(c), 'alice');
  assert.equal(p.runs(), 2);
  c.close();

  const stuck = writePlugin([tokenAnswer('stale')]);
  const d = await client(stuck);
  await assert.rejects(whoami(d), (e: unknown) => e instanceof StatusError && e.code === 401 && e.reason === 'Unauthorized');
  assert.equal(stuck.runs(), 2, 'one run, then one refresh after the 401, no more');
  d.close();
});

test('credentials are used until expirationTimestamp, then the plugin runs again', async () => {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const p = writePlugin([tokenAnswer('good-token', { expirationTimestamp: '2030-01-01T00:10:00Z' }), tokenAnswer('other-token')]);
  const c = await client(p, { now: () => now });
  assert.equal(await whoami(c), 'alice');
  now += 9 * 60_000;
  assert.equal(await whoami(c), 'alice');
  assert.equal(p.runs(), 1);
  now += 2 * 60_000;
  assert.equal(await whoami(c), 'bob');
  assert.equal(p.runs(), 2);
  c.close();
});

test('a certificate answer authenticates, and a new certificate is presented on a new TLS connection', async () => {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const p = writePlugin([certAnswer(carol, { expirationTimestamp: '2030-01-01T00:10:00Z' }), certAnswer(dave)]);
  const c = await client(p, { now: () => now });
  assert.equal(await whoami(c), 'carol');
  now += 11 * 60_000;
  // A kept-alive connection still carries carol's handshake: only a new one shows dave.
  assert.equal(await whoami(c), 'dave');
  c.close();
});

test('the plugin must answer in the version it is configured for, with a status holding a token or a certificate and key', async () => {
  const cases: [unknown, RegExp][] = [
    [tokenAnswer('good-token', {}, v1beta1), /^exec plugin is configured to use API version client\.authentication\.plat\.io\/v1, plugin returned version client\.authentication\.plat\.io\/v1beta1$/],
    [{ apiVersion: v1, kind: 'ExecCredential' }, /^exec plugin didn't return a status field$/],
    [{ apiVersion: v1, kind: 'ExecCredential', status: {} }, /^exec plugin didn't return a token or cert\/key pair$/],
    [{ apiVersion: v1, kind: 'ExecCredential', status: { clientCertificateData: carol.cert } }, /^exec plugin returned only certificate or key, not both$/],
    ['not json', /^decoding stdout: /],
  ];
  for (const [answer, message] of cases) {
    const p = writePlugin([answer]);
    const c = await client(p);
    await assert.rejects(whoami(c), (e: Error) => message.test(e.message));
    c.close();
  }
  // The upstream group name is the same API.
  const p = writePlugin([tokenAnswer('good-token', {}, 'client.authentication.k8s.io/v1')]);
  const c = await client(p);
  assert.equal(await whoami(c), 'alice');
  c.close();
});

test('a missing command names itself and shows the install hint', async () => {
  const p = writePlugin([tokenAnswer('good-token')], { command: './bin/absent', installHint: 'Install the plugin with: apt-get install plugin' });
  const c = await client(p);
  await assert.rejects(whoami(c), (e: Error) => e.message === 'exec: executable ./bin/absent not found\n\nInstall the plugin with: apt-get install plugin');
  c.close();
});

test('interactiveMode: required in v1; Never, IfAvailable and Always as the terminal allows', async () => {
  const noMode = writePlugin([tokenAnswer('good-token')], { interactiveMode: undefined });
  await assert.rejects(client(noMode), /interactiveMode must be specified/);
  // v1beta1 defaults to IfAvailable.
  const beta = writePlugin([tokenAnswer('good-token', {}, v1beta1)], { apiVersion: v1beta1, interactiveMode: undefined });
  const b = await client(beta, { stdinIsTerminal: () => true });
  assert.equal(await whoami(b), 'alice');
  assert.equal(beta.info().spec.interactive, true);
  b.close();

  const always = writePlugin([tokenAnswer('good-token')], { interactiveMode: 'Always' });
  await assert.rejects(client(always), (e: Error) => e.message === 'exec plugin cannot support interactive mode: standard input is not a terminal');
  const a = await client(always, { stdinIsTerminal: () => true });
  assert.equal(await whoami(a), 'alice');
  assert.equal(always.info().spec.interactive, true);
  a.close();

  const never = writePlugin([tokenAnswer('good-token')], { interactiveMode: 'Never' });
  const n = await client(never, { stdinIsTerminal: () => true });
  assert.equal(await whoami(n), 'alice');
  assert.equal(never.info().spec.interactive, false);
  n.close();
});

test('provideClusterInfo gives the plugin the server, its CA and the cluster\'s exec extension', async () => {
  const p = writePlugin([tokenAnswer('good-token')], { provideClusterInfo: true }, { audience: 'plat', nested: { a: [1, 2] } });
  const c = await client(p);
  assert.equal(await whoami(c), 'alice');
  assert.deepEqual(p.info().spec.cluster, { server: cluster.server, 'certificate-authority-data': cluster['certificate-authority-data'], config: { audience: 'plat', nested: { a: [1, 2] } } });
  c.close();
  // Without it, nothing of the cluster is passed.
  const q = writePlugin([tokenAnswer('good-token')], {}, { audience: 'plat' });
  const d = await client(q);
  await whoami(d);
  assert.equal(q.info().spec.cluster, undefined);
  d.close();
});
