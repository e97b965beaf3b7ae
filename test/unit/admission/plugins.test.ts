// The simple built-in plugins, one request at a time: AlwaysAdmit and
// AlwaysDeny (both warn that they are deprecated), NamespaceExists and
// NamespaceAutoProvision, DefaultTolerationSeconds's reading of the
// tolerations a pod has, with upstream's answers.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AlwaysAdmit } from '../../../src/admission/plugins/alwaysadmit.js';
import { AlwaysDeny } from '../../../src/admission/plugins/alwaysdeny.js';
import { NamespaceExists } from '../../../src/admission/plugins/namespaceexists.js';
import { NamespaceAutoProvision } from '../../../src/admission/plugins/namespaceautoprovision.js';
import { DefaultTolerationSeconds } from '../../../src/admission/plugins/defaulttolerationseconds.js';
import { configMaps, namespaces, pods } from '../../../src/api/core/v1/index.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { errors } from '../../../src/machinery/errors.js';
import { admissionRequest, rejection } from '../../support/admission.js';

const known = (...names: string[]) => async (name: string): Promise<KubeObject | undefined> => (names.includes(name) ? { metadata: { name } } : undefined);

describe('AlwaysAdmit and AlwaysDeny', () => {
  test('both warn that they are deprecated when made', () => {
    const warnings: string[] = [];
    new AlwaysAdmit((m) => warnings.push(m));
    new AlwaysDeny((m) => warnings.push(m));
    assert.deepEqual(warnings, [
      'AlwaysAdmit admission controller is deprecated. Please remove this controller from your configuration files and scripts.',
      'AlwaysDeny admission controller is deprecated. Please remove this controller from your configuration files and scripts.',
    ]);
  });

  test('AlwaysAdmit admits every operation in both phases', async () => {
    const plugin = new AlwaysAdmit(() => {});
    for (const op of ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const) {
      const r = admissionRequest(op, configMaps, 'cm', { namespace: 'default' });
      await plugin.mutate();
      await plugin.validate();
      assert.equal(r.operation, op);
    }
  });

  test('AlwaysDeny rejects in both phases with 403 naming the object', async () => {
    const plugin = new AlwaysDeny(() => {});
    const r = admissionRequest('CREATE', configMaps, 'cm', { namespace: 'default' });
    for (const phase of [() => plugin.mutate(r), () => plugin.validate(r)]) {
      const status = (await rejection(phase)).toStatus();
      assert.equal(status.code, 403);
      assert.equal(status.reason, 'Forbidden');
      assert.equal(status.message, 'configmaps "cm" is forbidden: admission control is denying all modifications');
      assert.deepEqual(status.details, { name: 'cm', kind: 'configmaps' });
    }
  });
});

describe('NamespaceExists', () => {
  test('every operation in a missing namespace is 404 for the namespace', async () => {
    const plugin = new NamespaceExists(known('default'));
    for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) {
      const status = (await rejection(plugin.validate(admissionRequest(op, configMaps, 'cm', { namespace: 'nope' })))).toStatus();
      assert.equal(status.code, 404);
      assert.equal(status.message, 'namespaces "nope" not found');
      assert.deepEqual(status.details, { name: 'nope', kind: 'namespaces' });
    }
  });

  test('existing namespaces, namespaces themselves and cluster-scoped objects pass', async () => {
    const plugin = new NamespaceExists(known('default'));
    await plugin.validate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'default' }));
    await plugin.validate(admissionRequest('CREATE', namespaces, 'fresh'));
  });
});

describe('NamespaceAutoProvision', () => {
  function provisioner(existing: string[], create: (name: string) => Promise<KubeObject> = async (name) => ({ metadata: { name } })) {
    const created: string[] = [];
    const plugin = new NamespaceAutoProvision(known(...existing), async (name) => { created.push(name); return create(name); });
    return { plugin, created };
  }

  test('a create in a missing namespace creates the namespace first', async () => {
    const { plugin, created } = provisioner(['default']);
    await plugin.mutate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'fresh' }));
    assert.deepEqual(created, ['fresh']);
  });

  test('existing namespaces, other operations, dry runs, cluster-scoped objects and namespaces create nothing', async () => {
    const { plugin, created } = provisioner(['default']);
    await plugin.mutate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'default' }));
    await plugin.mutate(admissionRequest('UPDATE', configMaps, 'cm', { namespace: 'fresh' }));
    await plugin.mutate(admissionRequest('DELETE', configMaps, 'cm', { namespace: 'fresh' }));
    await plugin.mutate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'fresh', dryRun: true }));
    await plugin.mutate(admissionRequest('CREATE', namespaces, 'fresh'));
    assert.deepEqual(created, []);
  });

  test('a namespace created meanwhile by someone else is fine; any other failure is 403 naming the object', async () => {
    const raced = provisioner([], async (name) => { throw errors.alreadyExists({ group: '', resource: 'namespaces' }, name); });
    await raced.plugin.mutate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'fresh' }));
    const broken = provisioner([], async () => { throw errors.serviceUnavailable('storage is down'); });
    const status = (await rejection(broken.plugin.mutate(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'fresh' })))).toStatus();
    assert.equal(status.code, 403);
    assert.equal(status.message, 'configmaps "cm" is forbidden: storage is down');
  });
});

describe('DefaultTolerationSeconds', () => {
  const keysAdded = (tolerations: object[]): string[] => {
    const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [], tolerations } };
    new DefaultTolerationSeconds(300, 300).mutate(admissionRequest('CREATE', pods, 'p', { namespace: 'default', object }));
    return (object.spec.tolerations as { key?: string }[]).slice(tolerations.length).map((t) => t.key ?? '');
  };
  const { notReadyTaint: notReady, unreachableTaint: unreachable } = vocabulary;

  test('a toleration counts for a taint when its key is the taint\'s or empty and its effect NoExecute or empty', () => {
    assert.deepEqual(keysAdded([]), [notReady, unreachable]);
    assert.deepEqual(keysAdded([{ operator: 'Exists' }]), []);
    assert.deepEqual(keysAdded([{ operator: 'Exists', effect: 'NoExecute' }]), []);
    assert.deepEqual(keysAdded([{ operator: 'Exists', effect: 'NoSchedule' }]), [notReady, unreachable]);
    assert.deepEqual(keysAdded([{ key: notReady, operator: 'Exists', effect: 'NoSchedule' }]), [notReady, unreachable]);
    assert.deepEqual(keysAdded([{ key: notReady, operator: 'Exists' }]), [unreachable]);
    assert.deepEqual(keysAdded([{ key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]), [notReady]);
    assert.deepEqual(keysAdded([{ key: 'other', operator: 'Exists', effect: 'NoExecute' }, { key: unreachable, operator: 'Exists' }, { key: notReady, operator: 'Exists' }]), []);
  });
});
