// Object lifecycle with the real kubectl: namespaces emptied and removed,
// the default service account, finalizers held and released, reserved
// namespaces, and no new content in a terminating namespace.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

test('a new namespace gets a default service account, recreated when deleted', async () => {
  await ok(['create', 'namespace', 'fresh']);
  await ok(['-n', 'fresh', 'wait', '--for=create', 'serviceaccount/default', '--timeout=15s']);
  await ok(['-n', 'fresh', 'delete', 'serviceaccount', 'default']);
  await eventually('default service account recreated', async () => (await s.kubectl(['-n', 'fresh', 'get', 'sa', 'default'])).code === 0);
});

test('deleting a namespace removes everything inside, then the namespace', async () => {
  await ok(['create', 'namespace', 'doomed']);
  await ok(['-n', 'doomed', 'create', 'configmap', 'c1', '--from-literal=a=b']);
  await ok(['-n', 'doomed', 'create', 'secret', 'generic', 's1', '--from-literal=a=b']);
  await ok(['-n', 'doomed', 'create', 'serviceaccount', 'robot']);
  const events = join(s.dataDir, 'event.yaml');
  writeFileSync(events, 'apiVersion: v1\nkind: Event\nmetadata:\n  name: e1\n  namespace: doomed\ninvolvedObject:\n  kind: ConfigMap\n  name: c1\n  namespace: doomed\nreason: Test\n');
  await ok(['create', '-f', events]);
  await ok(['delete', 'namespace', 'doomed', '--wait=false']);
  await ok(['wait', '--for=delete', 'namespace/doomed', '--timeout=30s']);
  for (const kind of ['configmaps', 'secrets', 'serviceaccounts', 'events']) {
    const r = await s.client.get(`/api/v1/namespaces/doomed/${kind}`);
    assert.equal(r.json.items.length, 0, `${kind} left behind`);
  }
});

test('a finalizer holds an object and its namespace until released with patch', async () => {
  await ok(['create', 'namespace', 'held']);
  const cm = join(s.dataDir, 'held.yaml');
  writeFileSync(cm, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keeper\n  namespace: held\n  finalizers:\n  - example.com/hold\n');
  await ok(['create', '-f', cm]);
  await ok(['delete', 'namespace', 'held', '--wait=false']);
  await eventually('namespace reports the finalizer that holds it', async () => {
    const ns = JSON.parse(await ok(['get', 'namespace', 'held', '-o', 'json']));
    const c = (ns.status.conditions ?? []).find((x: any) => x.type === 'NamespaceFinalizersRemaining');
    return ns.status.phase === 'Terminating' && c?.status === 'True' && /example\.com\/hold in 1 resource instances/.test(c.message);
  });
  const keeper = JSON.parse(await ok(['-n', 'held', 'get', 'cm', 'keeper', '-o', 'json']));
  assert.ok(keeper.metadata.deletionTimestamp, 'the object is marked for deletion but kept');
  const refused = await s.kubectl(['-n', 'held', 'create', 'configmap', 'late']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /unable to create new content in namespace held because it is being terminated/);
  await ok(['-n', 'held', 'patch', 'configmap', 'keeper', '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
  await ok(['wait', '--for=delete', 'namespace/held', '--timeout=30s']);
});

test('the reserved namespaces cannot be deleted', async () => {
  for (const name of ['default', vocabulary.systemNamespace, vocabulary.publicNamespace]) {
    const r = await s.kubectl(['delete', 'namespace', name]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Forbidden|forbidden: this namespace may not be deleted/);
  }
});

/** A ConfigMap owned by the ServiceAccount `owner`, blocking its foreground deletion. */
async function ownedPair(ns: string, suffix: string): Promise<void> {
  await ok(['-n', ns, 'create', 'serviceaccount', `owner-${suffix}`]);
  const owner = JSON.parse(await ok(['-n', ns, 'get', 'sa', `owner-${suffix}`, '-o', 'json']));
  const f = join(s.dataDir, `dep-${suffix}.yaml`);
  writeFileSync(f, [
    'apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: dep-${suffix}`, `  namespace: ${ns}`, '  ownerReferences:',
    '  - apiVersion: v1', '    kind: ServiceAccount', `    name: owner-${suffix}`, `    uid: ${owner.metadata.uid}`, '    blockOwnerDeletion: true', '',
  ].join('\n'));
  await ok(['create', '-f', f]);
}

test('kubectl delete --cascade=background, foreground and orphan', async () => {
  await ok(['create', 'namespace', 'cascade']);
  const exists = async (kind: string, name: string) => (await s.kubectl(['-n', 'cascade', 'get', kind, name])).code === 0;

  await ownedPair('cascade', 'bg');
  await ok(['-n', 'cascade', 'delete', 'sa', 'owner-bg', '--cascade=background']);
  await eventually('background: the dependent is collected', async () => !(await exists('cm', 'dep-bg')));

  await ownedPair('cascade', 'fg');
  await ok(['-n', 'cascade', 'delete', 'sa', 'owner-fg', '--cascade=foreground']);
  assert.equal(await exists('sa', 'owner-fg'), false, 'kubectl waited until the owner was gone');
  assert.equal(await exists('cm', 'dep-fg'), false, 'foreground: the dependent went first');

  await ownedPair('cascade', 'or');
  await ok(['-n', 'cascade', 'delete', 'sa', 'owner-or', '--cascade=orphan']);
  await eventually('orphan: the owner is gone', async () => !(await exists('sa', 'owner-or')));
  const orphan = JSON.parse(await ok(['-n', 'cascade', 'get', 'cm', 'dep-or', '-o', 'json']));
  assert.equal(orphan.metadata.ownerReferences, undefined, 'the dependent lost its owner reference');
});
