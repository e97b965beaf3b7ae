// The optional pod, service and event plugins one request at a time, for
// what a server cannot be brought to show: updates of services that had
// external IPs before DenyServiceExternalIPs was on, AlwaysPullImages
// refusing a policy a later mutation turned back, upstream's toleration merge
// and whitelist tables, and EventRateLimit's buckets on a moved clock.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DenyServiceExternalIPs } from '../../../src/admission/plugins/denyserviceexternalips.js';
import { AlwaysPullImages } from '../../../src/admission/plugins/alwayspullimages.js';
import { isExtendedResourceName } from '../../../src/admission/plugins/extendedresourcetoleration.js';
import { mergeTolerations, selectorMap, tolerationsWhitelisted } from '../../../src/admission/plugins/pods.js';
import { EventRateLimit } from '../../../src/admission/plugins/eventratelimit.js';
import { AdmissionConfigError, AdmissionListers, buildAdmission, type AdmissionContext } from '../../../src/admission/index.js';
import { enabledPluginNames, orderedPluginNames, removedPlugins } from '../../../src/admission/plugin-names.js';
import { events, pods, services } from '../../../src/api/core/v1/index.js';
import { admissionRequest, rejection } from '../../support/admission.js';

describe('DenyServiceExternalIPs', () => {
  const plugin = new DenyServiceExternalIPs();
  const svc = (externalIPs?: string[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' }, spec: { ...(externalIPs ? { externalIPs } : {}) } });
  const update = (from: string[] | undefined, to: string[] | undefined) => admissionRequest('UPDATE', services, 's', { namespace: 'n', object: svc(to), oldObject: svc(from) });

  test('an update may keep or remove existing external IPs, not add one', async () => {
    plugin.validate(update(['192.0.2.1', '192.0.2.2'], ['192.0.2.2', '192.0.2.1']));
    plugin.validate(update(['192.0.2.1', '192.0.2.2'], ['192.0.2.2']));
    plugin.validate(update(['192.0.2.1'], undefined));
    const added = await rejection(() => plugin.validate(update(['192.0.2.1'], ['192.0.2.1', '192.0.2.3'])));
    assert.equal(added.code, 403);
    assert.equal(added.message, 'services "s" is forbidden: Use of external IPs is denied by admission control');
  });

  test('status and other sub-resources are not checked', () => {
    plugin.validate(admissionRequest('UPDATE', services, 's', { namespace: 'n', subresource: 'status', object: svc(['192.0.2.9']), oldObject: svc() }));
  });
});

describe('AlwaysPullImages', () => {
  const plugin = new AlwaysPullImages();
  const pod = (containers: Record<string, unknown>[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' }, spec: { containers } });

  test('the validating phase refuses a container a later mutation set to another policy, naming each', async () => {
    const r = admissionRequest('CREATE', pods, 'p', { namespace: 'n', object: pod([{ name: 'a', image: 'x', imagePullPolicy: 'Never' }, { name: 'b', image: 'y', imagePullPolicy: 'IfNotPresent' }]) });
    const err = await rejection(() => plugin.validate(r));
    assert.equal(err.code, 403);
    assert.equal(err.message, 'pods "p" is forbidden: [spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", spec.containers[1].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"]');
  });

  test('an update that brings no new image is left alone', () => {
    const old = pod([{ name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' }]);
    const same = admissionRequest('UPDATE', pods, 'p', { namespace: 'n', object: structuredClone(old), oldObject: old });
    plugin.mutate(same);
    plugin.validate(same);
    assert.equal(same.object!.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    const changed = admissionRequest('UPDATE', pods, 'p', { namespace: 'n', object: pod([{ name: 'a', image: 'x2', imagePullPolicy: 'IfNotPresent' }]), oldObject: old });
    plugin.mutate(changed);
    assert.equal(changed.object!.spec.containers[0].imagePullPolicy, 'Always');
  });
});

describe('toleration and selector helpers (upstream tables)', () => {
  test('merge keeps the wider of two tolerations, and the first of two equal ones', () => {
    const exists = { key: 'k', operator: 'Exists' };
    const equal = { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' };
    assert.deepEqual(mergeTolerations([equal], [exists]), [exists]);
    assert.deepEqual(mergeTolerations([exists], [equal]), [exists]);
    assert.deepEqual(mergeTolerations([equal], [{ ...equal }]), [equal]);
    const short = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
    const long = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 };
    assert.deepEqual(mergeTolerations([short], [long]), [long]);
    const everything = { operator: 'Exists' };
    assert.deepEqual(mergeTolerations([equal, short], [everything]), [everything]);
  });

  test('whitelist: each toleration covered by one entry; an empty whitelist allows all', () => {
    const wl = [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }];
    assert.equal(tolerationsWhitelisted([{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }], wl), true);
    assert.equal(tolerationsWhitelisted([{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' }], wl), false);
    assert.equal(tolerationsWhitelisted([{ key: 'other', operator: 'Exists' }], []), true);
  });

  test('node selectors are k=v pairs; anything else is refused with upstream text', () => {
    assert.deepEqual([...selectorMap(' env = prod ,tier=web')], [['env', 'prod'], ['tier', 'web']]);
    assert.deepEqual([...selectorMap('')], []);
    assert.throws(() => selectorMap('env'), /invalid selector: \[env\]/);
    assert.throws(() => selectorMap('a=b=c'), /invalid selector: \[a b c\]/);
    assert.throws(() => selectorMap('bad key=x'), /Invalid value: "bad key"/);
  });

  test('extended resources: prefixed outside the native domains', () => {
    assert.equal(isExtendedResourceName('example.com/gpu'), true);
    assert.equal(isExtendedResourceName('cpu'), false);
    assert.equal(isExtendedResourceName('kubernetes.io/thing'), false);
    assert.equal(isExtendedResourceName('requests.example.com/gpu'), false);
  });
});

describe('EventRateLimit on a moved clock', () => {
  const event = (component: string, object: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'n' }, source: { component }, involvedObject: { kind: 'Pod', name: object, namespace: 'n' } });
  const create = (component: string, object: string, user = 'alice') => ({
    ...admissionRequest('CREATE', events, 'e', { namespace: 'n', object: event(component, object) }), user: { username: user, groups: [] },
  });

  test('a bucket refills at qps; SourceAndObject and User keep a bucket per key; the last refusal is the answer', async () => {
    let now = 0;
    const plugin = new EventRateLimit([{ type: 'SourceAndObject', qps: 2, burst: 1, cacheSize: 0 }, { type: 'User', qps: 1, burst: 2, cacheSize: 0 }], () => now);
    plugin.validate(create('kubelet', 'a'));
    const same = await rejection(() => plugin.validate(create('kubelet', 'a')));
    assert.equal(same.code, 429);
    assert.equal(same.message, 'Too many requests: limit reached on type SourceAndObject for key kubeletPodna');
    assert.equal(same.details?.retryAfterSeconds, 1);
    // Another object has its own bucket, but alice's two tokens are gone (the refused request took one too).
    const user = await rejection(() => plugin.validate(create('kubelet', 'b')));
    assert.equal(user.message, 'Too many requests: limit reached on type User for key alice');
    plugin.validate(create('scheduler', 'c', 'bob'));
    now += 1000;
    plugin.validate(create('kubelet', 'a'));
  });

  test('a bounded cache forgets the least recently used key, which starts full again', async () => {
    let now = 0;
    const plugin = new EventRateLimit([{ type: 'Namespace', qps: 1, burst: 1, cacheSize: 1 }], () => now);
    const inNamespace = (namespace: string) => admissionRequest('CREATE', events, 'e', { namespace, object: { ...event('c', 'o'), metadata: { name: 'e', namespace } } });
    plugin.validate(inNamespace('a'));
    await rejection(() => plugin.validate(inNamespace('a')));
    plugin.validate(inNamespace('b'));
    plugin.validate(inNamespace('a'));
    assert.equal(now, 0);
  });
});

describe('plugin names', () => {
  const context: AdmissionContext = {
    getNamespace: async () => undefined, createNamespace: async () => ({}), listers: new AdmissionListers(),
    log: { warn: () => {}, info: () => {} },
  };

  test('enabling PodSecurityPolicy stops the start with one line pointing to PodSecurity; disabling it is accepted', () => {
    assert.throws(() => enabledPluginNames(['PodSecurityPolicy'], []), (e: Error) => {
      assert.ok(e instanceof AdmissionConfigError);
      assert.equal(e.message, removedPlugins.get('PodSecurityPolicy'));
      assert.match(e.message, /^admission plugin "PodSecurityPolicy" was removed in v1\.25 .*use the PodSecurity admission plugin/);
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
    assert.ok(!enabledPluginNames([], ['PodSecurityPolicy']).includes('PodSecurityPolicy'));
  });

  test('every known name, enabled alone, is built or refused with a message that says why: none is accepted without effect', async () => {
    const withoutImplementation: string[] = [];
    for (const name of orderedPluginNames.filter((n) => !removedPlugins.has(n))) {
      try {
        const built = await buildAdmission({ enable: [name], disable: [] }, context);
        assert.ok(built.running.includes(name), `${name} runs once enabled`);
        built.close();
      } catch (e) {
        assert.ok(e instanceof AdmissionConfigError, `${name}: ${String(e)}`);
        // A plugin that needs a configuration says so; one without an implementation says that, and how to start anyway.
        if (/has no implementation/.test(e.message)) {
          assert.equal(e.message, `admission plugin ${name} has no implementation in this server: turn it off (--disable-admission-plugins=${name})`);
          withoutImplementation.push(name);
        } else {
          assert.match(e.message, /needs a configuration/, name);
        }
      }
    }
    // The default set starts whatever is still being built.
    await buildAdmission({ enable: [], disable: [] }, context);
    for (const name of ['AlwaysPullImages', 'DenyServiceExternalIPs', 'EventRateLimit', 'ExtendedResourceToleration', 'ImagePolicyWebhook', 'LimitPodHardAntiAffinityTopology',
      'OwnerReferencesPermissionEnforcement', 'PodNodeSelector', 'PodTolerationRestriction', 'SecurityContextDeny']) {
      assert.ok(!withoutImplementation.includes(name), name);
    }
  });
});
