// Writing with the real kubectl: patches of every type, client-side apply
// repeated, server-side apply with two managers, diff and server dry-run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  await s.kubectl(['create', 'namespace', 'w']);
});
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

function file(name: string, text: string): string {
  const path = join(s.dataDir, name);
  writeFileSync(path, text);
  return path;
}

const getJson = async (args: string[]) => JSON.parse(await ok([...args, '-o', 'json']));

test('kubectl patch --type json, merge and strategic', async () => {
  await ok(['-n', 'w', 'create', 'serviceaccount', 'p']);
  await ok(['-n', 'w', 'patch', 'sa', 'p', '--type', 'merge', '-p', '{"automountServiceAccountToken":false}']);
  await ok(['-n', 'w', 'patch', 'sa', 'p', '--type', 'strategic', '-p', '{"secrets":[{"name":"a"}]}']);
  await ok(['-n', 'w', 'patch', 'sa', 'p', '--type', 'strategic', '-p', '{"secrets":[{"name":"b"}]}']);
  await ok(['-n', 'w', 'patch', 'sa', 'p', '--type', 'json', '-p', '[{"op":"add","path":"/metadata/labels","value":{"tier":"x"}}]']);
  const sa = await getJson(['-n', 'w', 'get', 'sa', 'p']);
  assert.equal(sa.automountServiceAccountToken, false);
  assert.deepEqual(sa.secrets.map((x: any) => x.name).sort(), ['a', 'b']);
  assert.deepEqual(sa.metadata.labels, { tier: 'x' });
  const failed = await s.kubectl(['-n', 'w', 'patch', 'sa', 'p', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/labels/tier","value":"y"}]']);
  assert.notEqual(failed.code, 0);
  await ok(['-n', 'w', 'label', 'sa', 'p', 'env=prod']);
  await ok(['-n', 'w', 'annotate', 'sa', 'p', 'note=hello']);
  const labelled = await getJson(['-n', 'w', 'get', 'sa', 'p']);
  assert.equal(labelled.metadata.labels.env, 'prod');
  assert.equal(labelled.metadata.annotations.note, 'hello');
});

test('kubectl apply -f repeated: the last-applied annotation drives a strategic merge', async () => {
  const f = file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: w\ndata:\n  a: "1"\n  b: "2"\n');
  assert.match(await ok(['apply', '-f', f]), /configmap\/app created/);
  assert.match(await ok(['apply', '-f', f]), /configmap\/app unchanged/);
  file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: w\ndata:\n  a: "1"\n  c: "3"\n');
  assert.match(await ok(['apply', '-f', f]), /configmap\/app configured/);
  const cm = await getJson(['-n', 'w', 'get', 'cm', 'app']);
  assert.deepEqual(cm.data, { a: '1', c: '3' }, 'b was removed because the last applied configuration had it');
});

test('kubectl apply --server-side: conflicts between managers, --force-conflicts, co-ownership and release', async () => {
  const alice = file('alice.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: w\ndata:\n  color: red\n  size: big\n');
  const bob = file('bob.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: w\ndata:\n  color: blue\n  size: big\n');
  assert.match(await ok(['apply', '--server-side', '--field-manager=alice', '-f', alice]), /serverside-applied/);
  const conflict = await s.kubectl(['apply', '--server-side', '--field-manager=bob', '-f', bob]);
  assert.notEqual(conflict.code, 0);
  assert.match(conflict.stderr, /conflict with "alice"/);
  assert.match(conflict.stderr, /\.data\.color/);
  assert.match(await ok(['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', bob]), /serverside-applied/);
  let cm = await getJson(['-n', 'w', 'get', 'cm', 'shared', '--show-managed-fields']);
  assert.equal(cm.data.color, 'blue');
  const ownersOf = (field: string) => cm.metadata.managedFields.filter((m: any) => m.fieldsV1?.['f:data']?.[`f:${field}`]).map((m: any) => m.manager).sort();
  assert.deepEqual(ownersOf('color'), ['bob']);
  assert.deepEqual(ownersOf('size'), ['alice', 'bob'], 'the same value is co-owned');
  // alice drops size: bob still owns it, so it stays.
  file('alice.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: w\ndata: {}\n');
  await ok(['apply', '--server-side', '--field-manager=alice', '-f', alice]);
  cm = await getJson(['-n', 'w', 'get', 'cm', 'shared', '--show-managed-fields']);
  assert.equal(cm.data.size, 'big');
  assert.deepEqual(ownersOf('size'), ['bob']);
});

test('kubectl diff and create --dry-run=server', async () => {
  const f = file('diff.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: w\ndata:\n  a: "1"\n  c: "changed"\n');
  const diff = await s.kubectl(['diff', '-f', f]);
  assert.equal(diff.code, 1, diff.stderr);
  assert.match(diff.stdout, /^-\s+c: "3"$/m);
  assert.match(diff.stdout, /^\+\s+c: changed$/m);
  const cm = await getJson(['-n', 'w', 'get', 'cm', 'app']);
  assert.equal(cm.data.c, '3', 'diff changed nothing');
  const dry = file('dry.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\n  namespace: w\n');
  assert.match(await ok(['create', '--dry-run=server', '-f', dry]), /configmap\/dry created \(server dry run\)/);
  const missing = await s.kubectl(['-n', 'w', 'get', 'cm', 'dry']);
  assert.notEqual(missing.code, 0);
});

test('kubectl apply, apply --server-side, diff and delete of manifests that name the upstream groups', async () => {
  // Most manifests in the wild name rbac.authorization.k8s.io, admissionregistration.k8s.io and
  // coordination.k8s.io: kubectl maps their kinds through discovery, which lists those names too.
  const manifest = file('upstream-groups.yaml', `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: w}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-configmaps, namespace: w}
subjects: [{kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: Role, name: reader, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: upstream-named}
webhooks:
- name: upstream-named.example.com
  clientConfig: {url: "https://127.0.0.1:9/validate"}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets], scope: "*"}]
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Ignore
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: upstream-named, namespace: w}
spec: {holderIdentity: me, leaseDurationSeconds: 15}
`);
  assert.match(await ok(['apply', '-f', manifest]), /role\.rbac\.authorization\.k8s\.io\/reader created/);
  const again = await ok(['apply', '-f', manifest]);
  for (const line of again.trim().split('\n')) assert.match(line, / unchanged$/, again);
  assert.match(await ok(['apply', '--server-side', '-f', manifest]), /lease\.coordination\.k8s\.io\/upstream-named serverside-applied/);
  assert.equal((await s.kubectl(['diff', '-f', manifest])).code, 0, 'nothing differs');
  // The objects are the same ones our own group names serve.
  const role = await getJson(['get', `roles.${vocabulary.rbacGroup}`, 'reader', '-n', 'w']);
  assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]);
  assert.match(await ok(['auth', 'can-i', 'list', 'configmaps', '-n', 'w', '--as', 'jane']), /^yes/);
  assert.match(await ok(['delete', '-f', manifest]), /rolebinding\.rbac\.authorization\.k8s\.io "read-configmaps" deleted/);
});
