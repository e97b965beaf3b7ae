// Kubeconfig loading as upstream's clientcmd does it: KUBECONFIG merging (the
// first file that sets a value wins; named entries are taken whole from the
// first file that names them), paths relative to each file's own folder,
// contexts and their namespaces, credentials, TLS and proxy settings, and the
// in-cluster configuration.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, delimiter } from 'node:path';
import YAML from 'yaml';
import { inClusterConfig, loadKubeconfig, resolveContext, KubeconfigError } from '../../../src/client/kubeconfig.js';
import { tempDir } from '../../support/server.js';

function write(dir: string, name: string, doc: unknown): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, typeof doc === 'string' ? doc : YAML.stringify(doc));
  return path;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('KUBECONFIG: the first file setting current-context wins, each named entry comes whole from the first file naming it, the rest is merged', async () => {
  const dir = tempDir();
  const first = write(join(dir, 'one'), 'config', {
    'current-context': 'ctx-a',
    clusters: [{ name: 'shared', cluster: { server: 'https://first.example:6443' } }],
    contexts: [{ name: 'ctx-a', context: { cluster: 'shared', user: 'from-second', namespace: 'team-a' } }],
  });
  const second = write(join(dir, 'two'), 'config', {
    'current-context': 'ctx-b',
    clusters: [
      // Named in the first file: ignored whole, its CA and flag included (no field-by-field merge).
      { name: 'shared', cluster: { server: 'https://second.example:6443', 'insecure-skip-tls-verify': true } },
      { name: 'only-second', cluster: { server: 'https://only.example', 'certificate-authority': 'ca.pem' } },
    ],
    contexts: [{ name: 'ctx-b', context: { cluster: 'only-second', user: 'from-second' } }],
    users: [{ name: 'from-second', user: { tokenFile: 'token' } }],
  });
  write(join(dir, 'two'), 'ca.pem', 'CA OF TWO\n');
  write(join(dir, 'two'), 'token', 'secret-token\n');
  const env = { KUBECONFIG: ['', first, join(dir, 'missing'), first, second].join(delimiter) };
  const merged = await loadKubeconfig({ env });
  assert.deepEqual(merged.files, [first, second], 'empty, missing and repeated entries are passed over');
  assert.equal(merged.currentContext, 'ctx-a');

  const a = await resolveContext(merged);
  assert.equal(a.server, 'https://first.example:6443');
  assert.equal(a.insecureSkipTlsVerify, undefined);
  assert.equal(a.namespace, 'team-a');
  assert.equal(a.tokenFile, join(dir, 'two', 'token'), 'a relative path resolves against the folder of the file that holds it');

  const b = await resolveContext(merged, { context: 'ctx-b', namespace: 'override' });
  assert.equal(b.server, 'https://only.example');
  assert.equal(b.caPem, 'CA OF TWO\n');
  assert.equal(b.caData, b64('CA OF TWO\n'));
  assert.equal(b.namespace, 'override');

  // In the other order, the second file's values win.
  const reversed = await loadKubeconfig({ env: { KUBECONFIG: [second, first].join(delimiter) } });
  assert.equal(reversed.currentContext, 'ctx-b');
  assert.equal((await resolveContext(reversed, { context: 'ctx-a' })).insecureSkipTlsVerify, true);
});

test('an empty current-context does not hide a later file\'s; without KUBECONFIG the home file is read; explicit files must exist', async () => {
  const dir = tempDir();
  const empty = write(dir, 'empty', { 'current-context': '' });
  const blank = write(dir, 'blank', '');
  const later = write(dir, 'later', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'http://h' } }], contexts: [{ name: 'x', context: { cluster: 'c' } }] });
  const merged = await loadKubeconfig({ env: { KUBECONFIG: [empty, blank, later].join(delimiter) } });
  assert.equal(merged.currentContext, 'x');
  assert.equal((await resolveContext(merged)).namespace, 'default');

  write(join(dir, 'home', '.kube'), 'config', { 'current-context': 'home' });
  assert.equal((await loadKubeconfig({ env: {}, home: join(dir, 'home') })).currentContext, 'home');
  assert.equal((await loadKubeconfig({ env: {}, home: join(dir, 'nobody') })).currentContext, undefined);
  await assert.rejects(loadKubeconfig({ paths: [join(dir, 'absent')] }), (e: Error) => e instanceof KubeconfigError && e.message.startsWith(`cannot read kubeconfig ${join(dir, 'absent')}`));
});

test('credentials: data and files, token before tokenFile, basic auth, and the combinations upstream refuses', async () => {
  const dir = tempDir();
  write(dir, 'client.crt', 'CERT');
  const doc = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) => ({
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://h:1', ...cluster } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    users: [{ name: 'u', user }],
  });
  const resolveDoc = async (user: Record<string, unknown>, cluster?: Record<string, unknown>) =>
    resolveContext(await loadKubeconfig({ paths: [write(dir, 'k', doc(user, cluster))] }));

  const certs = await resolveDoc({ 'client-certificate': 'client.crt', 'client-key-data': b64('KEY') });
  assert.equal(certs.certPem, 'CERT');
  assert.equal(certs.keyPem, 'KEY');
  assert.equal((await resolveDoc({ token: 't', tokenFile: 'f' })).token, 't');
  assert.equal((await resolveDoc({ token: 't', tokenFile: 'f' })).tokenFile, undefined);
  const basic = await resolveDoc({ username: 'u', password: 'p' });
  assert.deepEqual([basic.username, basic.password], ['u', 'p']);
  const tls = await resolveDoc({}, { 'tls-server-name': 'api.internal', 'proxy-url': 'socks5://proxy:1080' });
  assert.deepEqual([tls.tlsServerName, tls.proxyUrl], ['api.internal', 'socks5://proxy:1080']);

  const refused: [Record<string, unknown>, Record<string, unknown>, string][] = [
    [{ username: 'u', password: 'p', token: 't' }, {}, 'username/password or bearer token may be set, but not both'],
    [{ 'client-certificate-data': b64('C') }, {}, 'a client certificate needs its key, and a key its certificate'],
    [{}, { 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64('CA') }, 'specifying a root certificates file with the insecure flag is not allowed'],
    [{}, { 'proxy-url': 'ftp://proxy' }, 'proxy URL scheme "ftp" is not supported: use http, https or socks5'],
    [{}, { server: 'unix:///sock' }, 'server "unix:///sock" is not an http or https URL'],
    [{ exec: { apiVersion: 'client.authentication.plat.io/v1' } }, {}, 'exec: command must be specified'],
  ];
  for (const [user, cluster, message] of refused) await assert.rejects(resolveDoc(user, cluster), (e: Error) => e instanceof KubeconfigError && e.message === message, message);
  await assert.rejects(resolveContext(await loadKubeconfig({ paths: [write(dir, 'k2', { 'current-context': 'gone' })] })), { message: 'context was not found for specified context: gone' });
});

test('exec settings: a relative command keeps the kubeconfig\'s folder; the cluster extension is read under our name or upstream\'s', async () => {
  const dir = tempDir();
  const path = write(dir, 'k', {
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://h', extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { a: 1 } }] } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    users: [{ name: 'u', user: { exec: { command: './bin/p', apiVersion: 'client.authentication.plat.io/v1beta1', args: ['x'], env: [{ name: 'A', value: 'b' }] } } }],
  });
  const c = await resolveContext(await loadKubeconfig({ paths: [path] }));
  assert.deepEqual(c.exec, { command: './bin/p', apiVersion: 'client.authentication.plat.io/v1beta1', args: ['x'], env: [{ name: 'A', value: 'b' }], provideClusterInfo: false, dir });
  assert.deepEqual(c.execClusterConfig, { a: 1 });
});

test('in-cluster: the service variables, the token file, CA and namespace', async () => {
  const dir = tempDir();
  write(dir, 'token', 'sa-token\n');
  write(dir, 'ca.crt', 'CA');
  write(dir, 'namespace', 'team\n');
  const c = await inClusterConfig({ env: { PLAT_SERVICE_HOST: 'fd00::1', PLAT_SERVICE_PORT: '443' }, dir });
  assert.deepEqual(c, { server: 'https://[fd00::1]:443', tokenFile: join(dir, 'token'), namespace: 'team', caPem: 'CA', caData: b64('CA') });
  assert.equal((await inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '6443' }, dir })).server, 'https://10.0.0.1:6443');
  await assert.rejects(inClusterConfig({ env: {}, dir }), /PLAT_SERVICE_HOST and PLAT_SERVICE_PORT must be defined/);
  await assert.rejects(inClusterConfig({ env: { PLAT_SERVICE_HOST: 'h', PLAT_SERVICE_PORT: '1' }, dir: join(dir, 'none') }), /unable to load in-cluster configuration/);
});
