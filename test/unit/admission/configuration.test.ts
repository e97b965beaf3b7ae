// Which plugins run (the default set, --enable-admission-plugins and
// --disable-admission-plugins, in upstream's fixed order) and the admission
// configuration file (inline or path, YAML or JSON), with the start-up
// messages for every mistake.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { enabledPluginNames, defaultOnPlugins, orderedPluginNames, AdmissionConfigError } from '../../../src/admission/plugin-names.js';
import { readAdmissionConfiguration } from '../../../src/admission/config.js';
import { AdmissionListers, buildAdmission } from '../../../src/admission/index.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { tempDir } from '../../support/server.js';

const dir = tempDir('plat-admission-config-');
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const configVersion = `${vocabulary.apiserverConfigGroup}/v1`;

describe('enabled plugins', () => {
  test('the default set runs in the fixed order', () => {
    const names = enabledPluginNames([], []);
    assert.deepEqual(names, orderedPluginNames.filter((n) => defaultOnPlugins.has(n)));
    assert.deepEqual(names.slice(-4), ['MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
    assert.equal(names[0], 'NamespaceLifecycle');
  });

  test('the order of the flags does not matter', () => {
    const a = enabledPluginNames(['AlwaysDeny', 'NamespaceExists', 'NamespaceAutoProvision'], ['ResourceQuota']);
    const b = enabledPluginNames(['NamespaceAutoProvision', 'AlwaysDeny', 'NamespaceExists'], ['ResourceQuota']);
    assert.deepEqual(a, b);
    assert.equal(a.at(-1), 'AlwaysDeny');
    assert.ok(a.indexOf('NamespaceAutoProvision') < a.indexOf('NamespaceLifecycle'));
    assert.ok(a.indexOf('NamespaceLifecycle') < a.indexOf('NamespaceExists'));
    assert.ok(!a.includes('ResourceQuota'));
  });

  test('unknown names and names both enabled and disabled are refused, all at once', () => {
    assert.throws(() => enabledPluginNames(['Bogus', 'AlwaysDeny'], ['Nope', 'AlwaysDeny']), (e: Error) => {
      assert.ok(e instanceof AdmissionConfigError);
      assert.equal(e.message, 'enable-admission-plugins plugin "Bogus" is unknown; disable-admission-plugins plugin "Nope" is unknown; [AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped');
      return true;
    });
  });
});

describe('admission configuration file', () => {
  test('no file: no plugin has a configuration', async () => {
    assert.equal((await readAdmissionConfiguration(undefined)).size, 0);
  });

  test('inline configurations (YAML) and path ones (JSON, relative to the file) are read', async () => {
    file('sub/webhook.json', JSON.stringify({ apiVersion: configVersion, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: '/x' }));
    const path = file('admission.yaml', [
      `apiVersion: ${configVersion}`,
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: ValidatingAdmissionWebhook',
      '  path: sub/webhook.json',
      '- name: MutatingAdmissionWebhook',
      '  configuration:',
      `    apiVersion: ${configVersion}`,
      '    kind: WebhookAdmissionConfiguration',
      '    kubeConfigFile: /y',
      '- name: NamespaceLifecycle',
    ].join('\n'));
    const configs = await readAdmissionConfiguration(path);
    assert.equal(configs.get('ValidatingAdmissionWebhook')?.kubeConfigFile, '/x');
    assert.equal(configs.get('MutatingAdmissionWebhook')?.kubeConfigFile, '/y');
    assert.equal(configs.has('NamespaceLifecycle'), false);
  });

  test('the whole file may be JSON', async () => {
    const path = file('admission.json', JSON.stringify({ apiVersion: configVersion, kind: 'AdmissionConfiguration', plugins: [{ name: 'AlwaysDeny', configuration: { a: 1 } }] }));
    assert.deepEqual((await readAdmissionConfiguration(path)).get('AlwaysDeny'), { a: 1 });
  });

  const refusals: [string, string, RegExp][] = [
    ['missing.yaml', '', /^unable to read the admission control configuration from ".*missing\.yaml": ENOENT/],
    ['wrong-kind.yaml', `apiVersion: v1\nkind: ConfigMap\n`, /must be a AdmissionConfiguration \(apiVersion apiserver\.config\.plat\.io\/v1\) or .* not ConfigMap \(apiVersion v1\)$/],
    ['broken.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins: [\n`, /is not valid YAML or JSON/],
    ['repeated-key.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nkind: AdmissionConfiguration\n`, /is not valid YAML or JSON/],
    ['both.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: AlwaysDeny\n  path: x.yaml\n  configuration: {}\n`, /plugins\[0\] \(AlwaysDeny\): give either path or configuration, not both$/],
    ['nameless.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- path: x.yaml\n`, /plugins\[0\]\.name is required$/],
    ['twice.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n- name: A\n`, /plugin "A" is configured more than once$/],
    ['dangling.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n  path: nowhere.yaml\n`, /unable to read the configuration of plugin A from ".*nowhere\.yaml"/],
    ['scalar.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n  configuration: 3\n`, /plugins\[0\]\.configuration must be an object$/],
    ['deep.json', `${'['.repeat(600)}${']'.repeat(600)}`, /is nested too deeply$/],
  ];
  for (const [name, text, message] of refusals) {
    test(`refused with a clear message: ${name}`, async () => {
      const path = name === 'missing.yaml' ? join(dir, name) : file(name, text);
      await assert.rejects(readAdmissionConfiguration(path), (e: Error) => {
        assert.ok(e instanceof AdmissionConfigError, String(e));
        assert.match(e.message, message);
        return true;
      });
    });
  }

  test('configuring a plugin that is not enabled is a warning, not an error', async () => {
    const path = file('unused.yaml', `apiVersion: ${configVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: AlwaysDeny\n  configuration: {}\n`);
    const warnings: string[] = [];
    const built = await buildAdmission({ enable: [], disable: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota'], configFile: path }, {
      getNamespace: async () => undefined, createNamespace: async () => ({}), log: { warn: (m) => warnings.push(m), info: () => {} }, listers: new AdmissionListers(),
    });
    assert.deepEqual(built.running, [
      'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass',
      'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'ValidatingAdmissionPolicy',
    ]);
    assert.deepEqual(warnings, ['the admission configuration configures plugin AlwaysDeny, which is not enabled; its configuration is ignored']);
  });
});
