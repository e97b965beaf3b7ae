// NamespaceLifecycle decisions, one request at a time, against upstream's
// plugin: creates need a namespace that exists and is not terminating;
// updates and deletes go on in a terminating namespace; the reserved
// namespaces cannot be deleted; cluster-scoped objects are never checked.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NamespaceLifecycle } from '../../../src/admission/plugins/namespacelifecycle.js';
import type { AdmissionRequest, Operation } from '../../../src/admission/types.js';
import { defineKind, type KindDefinition, type KubeObject } from '../../../src/api/kind.js';
import { t } from '../../../src/api/schema.js';
import { configMaps, namespaces, serviceAccounts } from '../../../src/api/core/v1/index.js';
import type { Lister } from '../../../src/admission/listers.js';
import { rejection } from '../../support/admission.js';
import { reservedNamespaces, vocabulary } from '../../../src/machinery/vocabulary.js';

const clusterWidgets = defineKind({
  group: 'example.test', version: 'v1', kind: 'Widget', plural: 'widgets', scope: 'Cluster',
  definitionName: 'test.example.v1.Widget', schema: t.object({ apiVersion: t.string(), kind: t.string() }),
});

const optionsKind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: 'CreateOptions' } as const;

function request(operation: Operation, kind: KindDefinition, name: string, namespace?: string, subresource?: string): AdmissionRequest {
  const object: KubeObject = { metadata: { name, namespace } };
  return {
    uid: 'uid-1', operation, kind, name, namespace, subresource,
    object: operation === 'DELETE' ? undefined : object,
    oldObject: operation === 'CREATE' ? undefined : object,
    dryRun: false,
    options: { kind: optionsKind[operation], apiVersion: `${vocabulary.metaGroup}/v1` },
  };
}

const active = (name: string): KubeObject => ({ metadata: { name }, status: { phase: 'Active' } });
const terminating = (name: string): KubeObject => ({
  metadata: { name, deletionTimestamp: '2026-01-01T00:00:00Z' }, spec: { finalizers: [vocabulary.namespaceFinalizer] }, status: { phase: 'Terminating' },
});

/** The plugin over a fixed set of namespaces; `asked` records every namespace it looked up. */
function plugin(...known: KubeObject[]) {
  const asked: string[] = [];
  const byName = new Map(known.map((ns) => [ns.metadata!.name!, ns]));
  const lifecycle = new NamespaceLifecycle(async (name) => { asked.push(name); return byName.get(name); });
  return { lifecycle, asked };
}

/** A lister holding `held` only, as the informer does before it has seen a new namespace. */
function listerOf(...held: KubeObject[]): Lister {
  const byName = new Map(held.map((ns) => [ns.metadata!.name!, ns]));
  return {
    list: () => held, inNamespace: () => [], get: (_ns, name) => byName.get(name), byIndex: () => [],
    onChange: () => undefined, hasSynced: () => true,
  };
}

describe('NamespaceLifecycle', () => {
  test('a namespace the lister holds answers without a promise and without a lookup; one it misses is looked up', async () => {
    const asked: string[] = [];
    const lifecycle = new NamespaceLifecycle(async (name) => { asked.push(name); return name === 'fresh' ? active('fresh') : undefined; }, listerOf(active('default'), terminating('doomed')));
    assert.equal(lifecycle.mutate(request('CREATE', configMaps, 'cm', 'default')), undefined);
    const e = await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'cm', 'doomed')));
    assert.equal(e.code, 403);
    assert.deepEqual(asked, []);
    await lifecycle.mutate(request('CREATE', configMaps, 'cm', 'fresh'));
    assert.equal((await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'cm', 'nope')))).code, 404);
    assert.deepEqual(asked, ['fresh', 'nope']);
  });

  test('a create in a missing namespace is 404 for the namespace', async () => {
    const { lifecycle } = plugin(active('default'));
    const e = await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'cm', 'nope')));
    assert.deepEqual(e.toStatus(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'namespaces "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'namespaces' }, code: 404,
    });
  });

  test('a create in a terminating namespace is 403 naming the object', async () => {
    const { lifecycle } = plugin(terminating('doomed'));
    const e = await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'cm', 'doomed')));
    const status = e.toStatus();
    assert.equal(status.code, 403);
    assert.equal(status.reason, 'Forbidden');
    assert.equal(status.message, 'configmaps "cm" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    assert.equal(status.details?.name, 'cm');
    assert.equal(status.details?.kind, 'configmaps');
    assert.equal(status.details?.group, undefined);
    assert.deepEqual(status.details?.causes?.map((c) => [c.reason, c.field]), [['NamespaceTerminating', 'metadata.namespace']]);
  });

  test('the terminating cause says which namespace, in upstream\'s words', async () => {
    const { lifecycle } = plugin(terminating('doomed'));
    const e = await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'cm', 'doomed')));
    assert.deepEqual(e.details?.causes, [{ reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' }]);
  });

  test('a create of a sub-resource in a terminating namespace is refused for the parent resource', async () => {
    const { lifecycle } = plugin(terminating('doomed'));
    const e = await rejection(() => lifecycle.mutate(request('CREATE', serviceAccounts, 'robot', 'doomed', 'token')));
    assert.equal(e.code, 403);
    assert.equal(e.message, 'serviceaccounts "robot" is forbidden: unable to create new content in namespace doomed because it is being terminated');
  });

  test('a create in an active namespace is admitted', async () => {
    const { lifecycle, asked } = plugin(active('team'));
    await lifecycle.mutate(request('CREATE', configMaps, 'cm', 'team'));
    assert.deepEqual(asked, ['team']);
  });

  test('updates and deletes go on in a terminating namespace (the namespace controller empties it so)', async () => {
    const { lifecycle } = plugin(terminating('doomed'));
    await lifecycle.mutate(request('UPDATE', configMaps, 'cm', 'doomed'));
    await lifecycle.mutate(request('UPDATE', configMaps, 'cm', 'doomed', 'status'));
    await lifecycle.mutate(request('DELETE', configMaps, 'cm', 'doomed'));
  });

  test('a delete in a missing namespace is admitted', async () => {
    const { lifecycle } = plugin();
    await lifecycle.mutate(request('DELETE', configMaps, 'cm', 'nope'));
  });

  test('an update in a missing namespace is 404 for the namespace', async () => {
    const { lifecycle } = plugin();
    const e = await rejection(() => lifecycle.mutate(request('UPDATE', configMaps, 'cm', 'nope')));
    assert.equal(e.code, 404);
    assert.equal(e.message, 'namespaces "nope" not found');
  });

  test('every reserved namespace refuses deletion', async () => {
    assert.deepEqual([...reservedNamespaces], ['default', vocabulary.systemNamespace, vocabulary.publicNamespace]);
    const { lifecycle } = plugin(...reservedNamespaces.map(active));
    for (const name of reservedNamespaces) {
      const e = await rejection(() => lifecycle.mutate(request('DELETE', namespaces, name)));
      assert.deepEqual(e.toStatus(), {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`, reason: 'Forbidden',
        details: { name, kind: 'namespaces' }, code: 403,
      });
    }
  });

  test('reserved namespaces may be created and updated; other namespaces deleted; terminating ones updated', async () => {
    const { lifecycle, asked } = plugin(terminating('doomed'));
    for (const name of reservedNamespaces) {
      await lifecycle.mutate(request('CREATE', namespaces, name));
      await lifecycle.mutate(request('UPDATE', namespaces, name));
    }
    await lifecycle.mutate(request('DELETE', namespaces, 'team'));
    await lifecycle.mutate(request('DELETE', namespaces, 'doomed'));
    await lifecycle.mutate(request('UPDATE', namespaces, 'doomed', undefined, 'finalize'));
    await lifecycle.mutate(request('UPDATE', namespaces, 'doomed', undefined, 'status'));
    assert.deepEqual(asked, [], 'writes to namespaces never look a namespace up');
  });

  test('deleting another kind of object named like a reserved namespace is admitted', async () => {
    const { lifecycle } = plugin(active('team'));
    await lifecycle.mutate(request('DELETE', configMaps, 'default', 'team'));
    await lifecycle.mutate(request('DELETE', clusterWidgets, 'default'));
  });

  test('cluster-scoped objects are admitted without looking at namespaces', async () => {
    const { lifecycle, asked } = plugin();
    for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) await lifecycle.mutate(request(op, clusterWidgets, 'w'));
    assert.deepEqual(asked, []);
  });

  test('reads the namespace from the cache, and live for a while after admitting its deletion (the cache may still show it active)', async () => {
    const asked: [string, boolean][] = [];
    // The cache still holds the active namespace; the store already has it terminating.
    const lifecycle = new NamespaceLifecycle(async (name, live) => { asked.push([name, live]); return live ? terminating(name) : active(name); });
    await lifecycle.mutate(request('CREATE', configMaps, 'before', 'going'));
    await lifecycle.mutate(request('DELETE', namespaces, 'going'));
    const e = await rejection(() => lifecycle.mutate(request('CREATE', configMaps, 'after', 'going')));
    assert.equal(e.toStatus().code, 403);
    await lifecycle.mutate(request('CREATE', configMaps, 'elsewhere', 'other'));
    assert.deepEqual(asked, [['going', false], ['going', false], ['going', true], ['other', false]]);
  });
});
