// Aggregated API servers end to end: an aggregated server written in the
// test (HTTPS on 127.0.0.1, trusting this server's proxy through the
// extension-apiserver-authentication ConfigMap) is registered through an
// ExternalName Service naming localhost and an APIService, then reached
// with kubectl (get, api-resources, top), a raw watch and RBAC-limited
// users, seeing the right user headers; a wrong caBundle, a missing
// Service, a non-loopback address and a dead backend each answer 503 for
// their group only while the rest of the API answers. The official Python
// client creates an APIService from YAML.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:https';
import { startTestServer, tempDir, tokenFile, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { startAggregatedServer, wardle, type TestAggregatedServer } from '../support/aggregated.js';
import { newCa } from '../support/certs.js';
import { widgetCrd, widgetGroup } from '../support/crds.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

const apiServices = '/apis/apiregistration.k8s.io/v1/apiservices';
let s: TestServer;
let backend: TestAggregatedServer;
let trust = { requestHeaderCaPem: '', allowedNames: [] as string[] };

function apiService(group: string, version: string, serviceName: string, port: number, caBundle: string): Record<string, unknown> {
  return {
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: `${version}.${group}` },
    spec: { group, version, service: { namespace: 'wardle', name: serviceName, port }, caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
  };
}

async function created(path: string, body: Record<string, unknown>): Promise<any> {
  const r = await s.client.post(path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function condition(name: string): Promise<any> {
  const r = await s.client.get(`${apiServices}/${name}`);
  return (r.json?.status?.conditions ?? []).find((c: any) => c.type === 'Available');
}

function asUser(token: string, path: string): Promise<{ status: number; json: any }> {
  return s.client.anonymous().send('GET', path, { headers: { Authorization: `Bearer ${token}` } }).then((r) => ({ status: r.status, json: r.json }));
}

before(async () => {
  const tokens = tokenFile('alice-token,alice,alice,"readers"\nbob-token,bob,bob,""\n');
  s = await startTestServer({ authorizationMode: ['RBAC'], tokenAuthFile: tokens });
  const cm = await eventually('the extension-apiserver-authentication ConfigMap is written', async () => {
    const r = await s.client.get(`/api/v1/namespaces/${vocabulary.systemNamespace}/configmaps/${vocabulary.extensionApiserverAuthentication}`);
    return r.status === 200 ? r.json : undefined;
  });
  trust = { requestHeaderCaPem: cm.data['requestheader-client-ca-file'], allowedNames: JSON.parse(cm.data['requestheader-allowed-names']) };
  backend = await startAggregatedServer('api', 'wardle', () => trust);
  await created('/api/v1/namespaces', { metadata: { name: 'wardle' } });
  await created('/api/v1/namespaces/wardle/services', { metadata: { name: 'api' }, spec: { type: 'ExternalName', externalName: 'localhost' } });
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify(apiService(wardle.group, wardle.version, 'api', backend.port, backend.caBundle)));
  await eventually('the APIService is available', async () => (await condition(`${wardle.version}.${wardle.group}`))?.status === 'True');
});

after(async () => {
  await backend?.close();
  await s?.close();
});

test('the published ConfigMap names the client CA, the request-header CA, the allowed names and the headers, as upstream', async () => {
  const cm = (await s.client.get(`/api/v1/namespaces/${vocabulary.systemNamespace}/configmaps/${vocabulary.extensionApiserverAuthentication}`)).json;
  assert.deepEqual(Object.keys(cm.data).sort(), ['client-ca-file', 'requestheader-allowed-names', 'requestheader-client-ca-file', 'requestheader-extra-headers-prefix', 'requestheader-group-headers', 'requestheader-username-headers']);
  assert.deepEqual(JSON.parse(cm.data['requestheader-username-headers']), ['X-Remote-User']);
  assert.deepEqual(JSON.parse(cm.data['requestheader-group-headers']), ['X-Remote-Group']);
  assert.deepEqual(JSON.parse(cm.data['requestheader-extra-headers-prefix']), ['X-Remote-Extra-']);
  assert.deepEqual(trust.allowedNames, ['front-proxy-client']);
});

test('every group version served here has a local APIService, always available', async () => {
  const list = (await s.client.get(apiServices)).json.items;
  const local = list.find((a: any) => a.metadata.name === 'v1.apps');
  assert.ok(local, 'v1.apps');
  assert.equal(local.spec.service, undefined);
  assert.equal(local.status.conditions[0].reason, 'Local');
  assert.ok(list.some((a: any) => a.metadata.name === 'v1.'), 'the core group');
  const remote = list.find((a: any) => a.metadata.name === `${wardle.version}.${wardle.group}`);
  assert.equal(remote.status.conditions[0].reason, 'Passed');
  const table = await s.kubectlOk(['get', 'apiservices', `${wardle.version}.${wardle.group}`]);
  assert.match(table, /v1alpha1\.wardle\.example\.com\s+wardle\/api\s+True/);
});

test('a custom resource\'s group version gets a local APIService while it is served, and loses it after', async () => {
  const crd = widgetCrd();
  await created('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  const name = `v1.${widgetGroup}`;
  const local = await eventually('the local APIService of the definition', async () => { const r = await s.client.get(`${apiServices}/${name}`); return r.status === 200 ? r.json : undefined; });
  assert.equal(local.spec.groupPriorityMinimum, 1000);
  assert.equal(local.metadata.labels[vocabulary.apiServiceAutomanagedLabel], 'onstart');
  assert.equal((await s.client.delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)).status, 200);
  await eventually('the local APIService goes with the definition', async () => (await s.client.get(`${apiServices}/${name}`)).status === 404);
});

test('kubectl reaches the aggregated group: discovery, api-resources, list and get, with the user in the proxy headers', async () => {
  const before = backend.calls.length;
  const listed = await s.kubectlOk(['get', 'flunders', '-n', 'wardle', '-o', 'name']);
  assert.deepEqual(listed.trim().split('\n'), ['flunder.wardle.example.com/first', 'flunder.wardle.example.com/second']);
  const got = JSON.parse(await s.kubectlOk(['get', 'flunder', 'first', '-n', 'wardle', '-o', 'json']));
  assert.equal(got.kind, 'Flunder');
  const resources = await s.kubectlOk(['api-resources', `--api-group=${wardle.group}`]);
  assert.match(resources, /flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/);
  const calls = backend.calls.slice(before).filter((c) => c.path.includes('/flunders'));
  assert.ok(calls.length >= 2);
  for (const call of calls) {
    assert.equal(call.user, 'admin');
    assert.ok(call.groups.includes('system:masters') && call.groups.includes('system:authenticated'), call.groups.join(','));
    assert.equal(call.authorization, false, 'the client\'s credentials are not passed on');
  }
  const groups = (await s.client.get('/apis')).json.groups.map((g: any) => g.name);
  assert.ok(groups.includes(wardle.group));
  const aggregated = await s.client.send('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
  const item = aggregated.json.items.find((i: any) => i.metadata.name === wardle.group);
  assert.deepEqual(item.versions[0].resources.map((r: any) => r.resource), ['flunders']);
  assert.equal(item.versions[0].freshness, 'Current');
  const index = (await s.client.get('/openapi/v3')).json.paths;
  assert.ok(index[`apis/${wardle.group}/${wardle.version}`], 'the aggregated OpenAPI document is listed');
  const v2 = (await s.client.get('/openapi/v2')).json;
  assert.ok(v2.paths[`/apis/${wardle.group}/${wardle.version}/namespaces/{namespace}/flunders`], 'the aggregated v2 paths are merged');
  assert.ok(v2.definitions['com.example.wardle.v1alpha1.Flunder'], 'and its definitions');
  assert.ok(v2.definitions['io.k8s.api.core.v1.Pod'] ?? Object.keys(v2.definitions).some((d) => d.endsWith('.core.v1.Pod')), 'ours stay');
  const proto = await s.client.send('GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
  assert.equal(proto.status, 200, 'the protobuf form still encodes');
});

test('a watch is streamed through the proxy, events as they come', async () => {
  const url = new URL(`/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders?watch=true`, s.url);
  const creds = s.client.creds;
  const lines: string[] = [];
  const req = request(url, { ca: creds.ca, cert: creds.cert, key: creds.key });
  const done = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      assert.equal(res.statusCode, 200);
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        while (buffered.includes('\n')) {
          const at = buffered.indexOf('\n');
          lines.push(buffered.slice(0, at));
          buffered = buffered.slice(at + 1);
          if (lines.length === 1) backend.emit('MODIFIED', { kind: 'Flunder', metadata: { name: 'first', namespace: 'wardle' } });
          if (lines.length === 2) { req.destroy(); resolve(); }
        }
      });
    });
    req.on('error', (e) => (lines.length >= 2 ? resolve() : reject(e)));
  });
  req.end();
  await done;
  assert.deepEqual(lines.map((l) => JSON.parse(l).type), ['ADDED', 'MODIFIED']);
});

test('an upgrade (an exec-style stream) is proxied: the backend\'s 101, then bytes both ways, the user in the headers', async () => {
  const creds = s.client.creds;
  const url = new URL(`/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders/first/echo`, s.url);
  const req = request(url, { ca: creds.ca, cert: creds.cert, key: creds.key, headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
  const { status, socket } = await new Promise<{ status: number; socket: import('node:stream').Duplex }>((resolve, reject) => {
    req.on('upgrade', (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on('response', (res) => reject(new Error(`no upgrade: HTTP ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 101);
  const echoed = await new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')));
    socket.write('ping');
  });
  socket.destroy();
  assert.equal(echoed, 'ping');
  const call = backend.calls.at(-1)!;
  assert.match(call.path, /\/flunders\/first\/echo$/);
  assert.equal(call.user, 'admin');
  assert.equal(call.authorization, false);
});

test('RBAC decides here: a user allowed flunders reaches the backend as itself, one who is not never does', async () => {
  await created(`/apis/${vocabulary.rbacGroup}/v1/clusterroles`, { metadata: { name: 'flunder-reader' }, rules: [{ apiGroups: [wardle.group], resources: ['flunders'], verbs: ['list'] }] });
  await created(`/apis/${vocabulary.rbacGroup}/v1/clusterrolebindings`, {
    metadata: { name: 'flunder-reader' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'flunder-reader' },
    subjects: [{ apiGroup: vocabulary.rbacGroup, kind: 'User', name: 'alice' }],
  });
  const path = `/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders`;
  const alice = await eventually('the binding is in force', async () => { const r = await asUser('alice-token', path); return r.status === 200 ? r : undefined; });
  assert.equal(alice.json.items.length, 2);
  const last = backend.calls.at(-1)!;
  assert.equal(last.user, 'alice');
  assert.ok(last.groups.includes('readers'));
  const calls = backend.calls.length;
  const bob = await asUser('bob-token', path);
  assert.equal(bob.status, 403);
  assert.equal(bob.json.message, `flunders.wardle.example.com is forbidden: User "bob" cannot list resource "flunders" in API group "${wardle.group}" in the namespace "wardle"`);
  assert.equal(backend.calls.length, calls, 'a refused request never reaches the backend');
});

test('kubectl top reads pod metrics from an aggregated metrics.k8s.io, as from metrics-server', async () => {
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify(apiService('metrics.k8s.io', 'v1beta1', 'api', backend.port, backend.caBundle)));
  await eventually('the metrics APIService is available', async () => (await condition('v1beta1.metrics.k8s.io'))?.status === 'True');
  const top = await s.kubectlOk(['top', 'pod', '-n', 'default']);
  assert.match(top, /NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*\nweb\s+250m\s+64Mi/);
});

test('a wrong caBundle, a missing Service, a non-loopback address: 503 for that group, its condition says why, the rest answers', async () => {
  const other = await newCa('not the backend\'s CA');
  const cases: [string, Record<string, unknown>, string][] = [
    ['wrong-ca', apiService('wrongca.example.com', 'v1', 'api', backend.port, Buffer.from(other.cert).toString('base64')), 'FailedDiscoveryCheck'],
    ['missing', apiService('missing.example.com', 'v1', 'nowhere', backend.port, backend.caBundle), 'ServiceNotFound'],
    ['far', apiService('far.example.com', 'v1', 'far', backend.port, backend.caBundle), 'ServiceAccessError'],
  ];
  await created('/api/v1/namespaces/wardle/services', { metadata: { name: 'far' }, spec: { type: 'ExternalName', externalName: '192.0.2.10' } });
  for (const [, body] of cases) await created(apiServices, body);
  for (const [what, body, reason] of cases) {
    const spec = (body as any).spec;
    const found = await eventually(`${what}: the condition says ${reason}`, async () => {
      const c = await condition(`${spec.version}.${spec.group}`);
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(found.reason, reason, `${what}: ${found.message}`);
    const r = await s.client.get(`/apis/${spec.group}/${spec.version}/things`);
    assert.equal(r.status, 503, `${what}: ${r.text}`);
    assert.equal(r.json.reason, 'ServiceUnavailable');
  }
  assert.equal((await s.client.get('/api/v1/namespaces')).status, 200);
  assert.equal((await s.client.get(`/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders`)).status, 200);
});

test('the official Python client creates an APIService from YAML, and a second create conflicts', async () => {
  const dir = tempDir();
  const yamlPath = join(dir, 'api-service.yaml');
  writeFileSync(yamlPath, [
    'apiVersion: apiregistration.k8s.io/v1', 'kind: APIService', 'metadata:', '  name: v1alpha1.python.example.com',
    'spec:', '  group: python.example.com', '  version: v1alpha1', '  insecureSkipTLSVerify: true',
    '  groupPriorityMinimum: 1000', '  versionPriority: 15', '  service:', '    name: api', '    namespace: wardle', '',
  ].join('\n'));
  const script = [
    'import sys', 'from kubernetes import client, config, utils',
    'config.load_kube_config(sys.argv[1])', 'k = client.ApiClient()',
    'utils.create_from_yaml(k, sys.argv[2])', 'print("created")',
    'try:', '    utils.create_from_yaml(k, sys.argv[2])', 'except utils.FailToCreateError as e:', '    print("conflict", e.api_exceptions[0].status)',
  ].join('\n');
  const out = await new Promise<string>((resolve) => {
    execFile('/usr/bin/python3', ['-c', script, s.kubeconfigPath, yamlPath], { timeout: 60_000 }, (err, stdout, stderr) => resolve(stdout + stderr + (err ? String(err) : '')));
  });
  assert.match(out, /created\nconflict 409/, out);
});

test('a dead backend answers 503 for its group only; discovery and the rest of the API stay quick', async () => {
  await backend.close();
  const r = await s.client.get(`/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders`);
  assert.equal(r.status, 503, r.text);
  const c = await eventually('the APIService is marked unavailable', async () => {
    const found = await condition(`${wardle.version}.${wardle.group}`);
    return found?.status === 'False' ? found : undefined;
  });
  assert.equal(c.reason, 'FailedDiscoveryCheck');
  assert.match(c.message, /^failing or missing response from https:\/\/127\.0\.0\.1:\d+\/apis\/wardle\.example\.com\/v1alpha1: /);
  assert.equal((await s.client.get('/apis')).status, 200);
  assert.match(await s.kubectlOk(['get', 'ns', 'default', '-o', 'name']), /namespace\/default/);
});
