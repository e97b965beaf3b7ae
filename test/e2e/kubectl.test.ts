// The real kubectl, unmodified and with no extra flags, against a real server
// on a SQLite file: the commands a user runs first.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

test('get namespaces shows the reserved ones', async () => {
  const out = await ok(['get', 'namespaces']);
  for (const n of ['default', vocabulary.systemNamespace, vocabulary.publicNamespace]) assert.match(out, new RegExp(`^${n}\\s`, 'm'));
});

test('create namespace, serviceaccount, secret generic, configmap', async () => {
  assert.match(await ok(['create', 'namespace', 'e2e']), /namespace\/e2e created/);
  assert.match(await ok(['-n', 'e2e', 'create', 'serviceaccount', 'robot']), /serviceaccount\/robot created/);
  assert.match(await ok(['-n', 'e2e', 'create', 'secret', 'generic', 'creds', '--from-literal=user=admin', '--from-literal=pass=s3cret']), /secret\/creds created/);
  assert.match(await ok(['-n', 'e2e', 'create', 'configmap', 'settings', '--from-literal=mode=fast']), /configmap\/settings created/);
  const secret = JSON.parse(await ok(['-n', 'e2e', 'get', 'secret', 'creds', '-o', 'json']));
  assert.equal(Buffer.from(secret.data.pass, 'base64').toString(), 's3cret');
  assert.equal(secret.type, 'Opaque');
  const cm = JSON.parse(await ok(['-n', 'e2e', 'get', 'configmap', 'settings', '-o', 'json']));
  assert.deepEqual(cm.data, { mode: 'fast' });
});

test('get in every output form', async () => {
  assert.match(await ok(['-n', 'e2e', 'get', 'sa']), /^robot\s/m);
  assert.match(await ok(['-n', 'e2e', 'get', 'sa', 'robot', '-o', 'yaml']), /^kind: ServiceAccount$/m);
  const json = JSON.parse(await ok(['-n', 'e2e', 'get', 'serviceaccounts', '-o', 'json']));
  assert.ok(json.items.some((i: any) => i.metadata.name === 'robot'));
  assert.match(await ok(['-n', 'e2e', 'get', 'sa', '-o', 'wide']), /robot/);
  assert.deepEqual((await ok(['-n', 'e2e', 'get', 'sa', '-o', 'name'])).trim().split('\n').sort(), ['serviceaccount/default', 'serviceaccount/robot']);
  assert.match(await ok(['get', 'sa', '-A']), /e2e\s+robot/);
});

test('create -f, apply -f, replace -f and delete -f', async () => {
  const file = join(s.dataDir, 'sa.yaml');
  writeFileSync(file, 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-file\n  namespace: e2e\nsecrets:\n- name: creds\n');
  assert.match(await ok(['create', '-f', file]), /serviceaccount\/from-file created/);
  const dup = await s.kubectl(['create', '-f', file]);
  assert.notEqual(dup.code, 0);
  assert.match(dup.stderr, /AlreadyExists|already exists/);
  const applied = join(s.dataDir, 'applied.yaml');
  writeFileSync(applied, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: e2e\ndata:\n  a: "1"\n');
  assert.match(await ok(['apply', '-f', applied]), /configmap\/applied created/);
  const cm = JSON.parse(await ok(['-n', 'e2e', 'get', 'cm', 'applied', '-o', 'json']));
  assert.ok(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
  writeFileSync(file, 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-file\n  namespace: e2e\nautomountServiceAccountToken: false\n');
  assert.match(await ok(['replace', '-f', file]), /serviceaccount\/from-file replaced/);
  const sa = JSON.parse(await ok(['-n', 'e2e', 'get', 'sa', 'from-file', '-o', 'json']));
  assert.equal(sa.automountServiceAccountToken, false);
  assert.equal(sa.secrets, undefined);
  assert.match(await ok(['delete', '-f', file]), /serviceaccount "from-file" deleted/);
  const gone = await s.kubectl(['-n', 'e2e', 'get', 'sa', 'from-file']);
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /NotFound|not found/);
});

test('delete by name', async () => {
  assert.match(await ok(['-n', 'e2e', 'delete', 'configmap', 'settings']), /configmap "settings" deleted/);
  assert.match(await ok(['-n', 'e2e', 'delete', 'sa', 'robot']), /serviceaccount "robot" deleted/);
});

test('an unknown field is refused by kubectl create (server-side strict validation)', async () => {
  const file = join(s.dataDir, 'bad.yaml');
  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: e2e\nnotAField: 1\n');
  const r = await s.kubectl(['create', '-f', file]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown field "notAField"/);
});

test('api-resources, api-versions, version and explain', async () => {
  const resources = await ok(['api-resources']);
  assert.match(resources, /^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$/m);
  assert.match(resources, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
  assert.match(await ok(['api-versions']), /^v1$/m);
  const version = await ok(['version']);
  assert.match(version, /Server Version: v1\.32\./);
  const explain = await ok(['explain', 'serviceaccount.secrets']);
  assert.match(explain, /KIND:\s+ServiceAccount/);
  assert.match(explain, /FIELD:\s+secrets/);
  assert.match(explain, /Secrets that pods running as this account may use/);
});

test('a kubectl without a cache learns every resource from one discovery request per group list', async () => {
  const cacheDir = join(s.dataDir, 'kubectl-cache');
  rmSync(cacheDir, { recursive: true, force: true });
  const r = await s.kubectl(['--cache-dir', cacheDir, 'get', 'configmaps,roles.rbac.authorization.k8s.io,csr', '-A', '-v=6']);
  assert.equal(r.code, 0, r.stderr);
  const discovery = r.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/(api|apis)(\/[^/?\s]+){0,2}\?timeout=/.test(l));
  assert.deepEqual(discovery.map((l) => /\/(apis?)[/?]/.exec(l)![1]).sort(), ['api', 'apis'], discovery.join('\n'));
});

test('an events.k8s.io/v1 Event applied by kubectl is the core Event kubectl get events and kubectl events show', async () => {
  await ok(['create', 'namespace', 'eventful']);
  const manifest = [
    'apiVersion: events.k8s.io/v1', 'kind: Event', 'metadata: {name: hello, namespace: eventful}',
    'eventTime: "2026-11-25T10:00:00.000000Z"', `reportingController: ${vocabulary.eventsGroup}/tester`, 'reportingInstance: tester-1',
    'action: Tested', 'reason: Greeted', 'regarding: {kind: Namespace, name: eventful, apiVersion: v1}', 'note: hello there', 'type: Normal', '',
  ].join('\n');
  assert.match(await ok(['apply', '-f', '-'], manifest), /event\.events\.k8s\.io\/hello created/);
  assert.match(await ok(['get', 'events', '-n', 'eventful']), /Normal\s+Greeted\s+namespace\/eventful\s+hello there/);
  assert.match(await ok(['events', '-n', 'eventful']), /Greeted/);
  const viaGroup = JSON.parse(await ok(['get', 'events.v1.events.k8s.io', 'hello', '-n', 'eventful', '-o', 'json']));
  assert.equal(viaGroup.note, 'hello there');
  assert.equal(JSON.parse(await ok(['get', 'events.v1.', 'hello', '-n', 'eventful', '-o', 'json'])).message, 'hello there');
});

test('a serving certificate from --tls-cert-file works with the admin kubeconfig', async () => {
  const { generateEcKeyPair, issueCertificate } = await import('../../src/pki/index.js');
  const { startTestServer: start, tempDir } = await import('../support/server.js');
  const dir = tempDir('plat-tls-');
  const key = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'own-serving', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: key.publicKeyPem, issuerKeyPem: key.privateKeyPem, isCA: true,
  });
  writeFileSync(join(dir, 'tls.crt'), cert);
  writeFileSync(join(dir, 'tls.key'), key.privateKeyPem);
  const own = await start({ dataDir: join(dir, 'data'), tlsCertFile: join(dir, 'tls.crt'), tlsPrivateKeyFile: join(dir, 'tls.key') });
  try {
    const r = await own.kubectl(['get', 'namespaces', '-o', 'name']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /namespace\/default/);
  } finally {
    await own.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('errors name the kind by the group kubectl used (rbac.authorization.k8s.io), as upstream says them', async () => {
  const missing = await s.kubectl(['-n', 'default', 'get', 'rolebinding', 'nobody-here']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /Error from server \(NotFound\): rolebindings\.rbac\.authorization\.k8s\.io "nobody-here" not found/);
  const refused = await s.kubectl(['--as', 'jane', '-n', 'default', 'create', 'rolebinding', 'jane-admin', '--clusterrole=admin', '--user=jane']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /rolebindings\.rbac\.authorization\.k8s\.io is forbidden: User "jane" cannot create resource "rolebindings" in API group "rbac\.authorization\.k8s\.io" in the namespace "default"/);
  assert.doesNotMatch(missing.stderr + refused.stderr, new RegExp(vocabulary.rbacGroup.replace(/\./g, '\\.')));
});
