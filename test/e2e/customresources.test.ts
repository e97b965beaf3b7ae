// Custom resources with the real kubectl, as a user of an operator meets
// them: apply a definition written for the upstream server (YAML,
// `apiextensions.k8s.io/v1`, `x-kubernetes-*` markers), wait for
// Established, then get (printer columns, short name), explain, server-side
// apply with a conflict, merge patch, scale, get -w, get all and a custom
// category, and delete crd taking its objects with it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startTestServer, TestServer } from '../support/server.js';
import { widgetCrd } from '../support/crds.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
});
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

function file(name: string, value: unknown): string {
  const path = join(s.dataDir, name);
  writeFileSync(path, stringify(value));
  return path;
}

const widgetYaml = (spec: Record<string, unknown>) => ({ apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec });

test('kubectl: a definition applied, established and its objects used like any others', async () => {
  assert.match(await ok(['apply', '-f', file('crd.yaml', widgetCrd())]), /customresourcedefinition.apiextensions.k8s.io\/widgets.stable.example.com created/);
  await ok(['wait', '--for', 'condition=Established', '--timeout', '30s', 'crd/widgets.stable.example.com']);

  assert.match(await ok(['apply', '-f', file('w1.yaml', widgetYaml({ color: 'green', replicas: 2 }))]), /widget.stable.example.com\/w1 created/);
  const table = await ok(['get', 'widgets']);
  assert.match(table, /^NAME\s+COLOR\s+REPLICAS\s+AGE\n/);
  assert.match(table, /\nw1\s+green\s+2\s+\d+s\n/);
  assert.match(await ok(['get', 'wix', 'w1', '-o', 'name']), /^widget.stable.example.com\/w1$/m);

  const explained = await ok(['explain', 'widgets.spec']);
  assert.match(explained, /KIND:\s+Widget/);
  assert.match(explained, /The colour of the widget\./);

  // Server-side apply: a second manager setting a field another owns is a conflict, forced it wins.
  const taken = await s.kubectl(['apply', '--server-side', '--field-manager', 'alice', '-f', file('a.yaml', widgetYaml({ color: 'blue' }))]);
  assert.match(taken.stderr, /conflict with "kubectl-client-side-apply" using stable.example.com\/v1: \.spec\.color/, 'client-side apply owns the colour');
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager', 'alice', '-f', file('a.yaml', widgetYaml({ color: 'blue' }))]);
  const conflict = await s.kubectl(['apply', '--server-side', '--field-manager', 'bob', '-f', file('b.yaml', widgetYaml({ color: 'red' }))]);
  assert.notEqual(conflict.code, 0);
  assert.match(conflict.stderr, /conflict with "alice"/);
  assert.match(conflict.stderr, /\.spec\.color/);
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager', 'bob', '-f', file('b.yaml', widgetYaml({ color: 'red' }))]);

  await ok(['patch', 'widget', 'w1', '--type', 'merge', '-p', '{"spec":{"maxReplicas":20}}']);
  const invalid = await s.kubectl(['patch', 'widget', 'w1', '--type', 'merge', '-p', '{"spec":{"color":"pink"}}']);
  assert.notEqual(invalid.code, 0);
  assert.match(invalid.stderr, /spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"/);
  assert.match(await ok(['scale', 'widget', 'w1', '--replicas', '5']), /widget.stable.example.com\/w1 scaled/);
  const w1 = JSON.parse(await ok(['get', 'widget', 'w1', '-o', 'json']));
  assert.deepEqual([w1.spec.color, w1.spec.replicas, w1.spec.maxReplicas], ['red', 5, 20]);

  // kubectl prefixes names with their resource only when several kinds answer.
  assert.match(await ok(['get', 'all']), /(widget\.stable\.example\.com\/)?w1\s+red\s+5\s+/);
  assert.match(await ok(['get', 'gizmos']), /\nw1\s+red\s+5\s+/);
});

test('kubectl get -w sees a custom object change', async () => {
  const watcher = spawn('kubectl', ['--kubeconfig', s.kubeconfigPath, 'get', 'widgets', '-w', '--output-watch-events'], { env: { ...process.env, KUBECONFIG: '' } });
  let out = '';
  const seen = new Promise<void>((resolve) => watcher.stdout.on('data', (d) => { out += d; if (/MODIFIED\s+w1\s+blue/.test(out)) resolve(); }));
  try {
    await new Promise<void>((resolve) => watcher.stdout.once('data', () => resolve()));
    await ok(['patch', 'widget', 'w1', '--type', 'merge', '-p', '{"spec":{"color":"blue"}}']);
    await seen;
  } finally {
    watcher.kill();
  }
  assert.match(out, /ADDED\s+w1/);
});

test('kubectl delete crd removes its objects, then the kind', async () => {
  assert.match(await ok(['delete', 'crd', 'widgets.stable.example.com']), /deleted/);
  const gone = await s.kubectl(['get', 'widgets']);
  assert.notEqual(gone.code, 0);
  // kubectl's discovery cache may still name the resource: then the list itself answers 404.
  assert.match(gone.stderr, /the server doesn't have a resource type "widgets"|NotFound/);
  assert.equal((await s.client.get('/apis/stable.example.com/v1/namespaces/default/widgets/w1')).status, 404);
});
