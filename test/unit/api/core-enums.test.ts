// The enumerated fields of the core kinds (and a policy one) against upstream's messages, one
// table per kind, re-expressed from the cases of upstream's core validation
// tests (TestValidateService, TestValidatePodSpec, TestValidateContainers,
// TestValidatePersistentVolumes, TestValidatePersistentVolumeClaim): a bad
// value gets Unsupported value with the supported values in upstream's
// order, an empty required one Required value, and the valid values pass.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObject } from '../../../src/api/decode.js';
import type { KindDefinition, KubeObject } from '../../../src/api/kind.js';
import { services } from '../../../src/api/core/v1/service.js';
import { pods } from '../../../src/api/core/v1/pod.js';
import { persistentVolumeClaims, persistentVolumes } from '../../../src/api/core/v1/storage.js';
import { podDisruptionBudgets } from '../../../src/api/policy/v1/poddisruptionbudget.js';

type Obj = Record<string, any>;
type Row = [name: string, change: (o: Obj) => void, messages: string[]];

/** Decodes and defaults `base` after `change`, and answers the kind's validation messages. */
function messagesOf(kind: KindDefinition, base: () => Obj, change: (o: Obj) => void): string[] {
  const o = base();
  change(o);
  const obj: KubeObject = decodeObject(kind, o, { fieldValidation: 'Strict', warnings: [] });
  kind.strategy.defaults?.(obj);
  return kind.strategy.validate!(obj).map((e) => e.describe());
}

function runTable(kind: KindDefinition, base: () => Obj, rows: Row[]): void {
  assert.deepEqual(messagesOf(kind, base, () => {}), [], 'the base object is valid');
  for (const [name, change, messages] of rows) assert.deepEqual(messagesOf(kind, base, change), messages, name);
}

const service = (): Obj => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default' },
  spec: { selector: { app: 'a' }, ports: [{ port: 80 }] },
});

test('Service: type, session affinity, traffic policies, IP families, ports\' protocols', () => {
  runTable(services, service, [
    ['valid: ClientIP affinity, Local policies', (o) => Object.assign(o.spec, { sessionAffinity: 'ClientIP', type: 'NodePort', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local' }), []],
    ['valid: dual stack', (o) => Object.assign(o.spec, { ipFamilies: ['IPv6', 'IPv4'], ipFamilyPolicy: 'PreferDualStack', trafficDistribution: 'PreferClose' }), []],
    ['invalid session affinity', (o) => { o.spec.sessionAffinity = 'Bogus'; }, ['spec.sessionAffinity: Unsupported value: "Bogus": supported values: "ClientIP", "None"']],
    ['invalid type', (o) => { o.spec.type = 'Balancer'; }, ['spec.type: Unsupported value: "Balancer": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"']],
    ['invalid protocol', (o) => { o.spec.ports[0].protocol = 'INVALID'; }, ['spec.ports[0].protocol: Unsupported value: "INVALID": supported values: "SCTP", "TCP", "UDP"']],
    ['invalid externalTrafficPolicy', (o) => Object.assign(o.spec, { type: 'LoadBalancer', externalTrafficPolicy: 'invalid' }),
      ['spec.externalTrafficPolicy: Unsupported value: "invalid": supported values: "Cluster", "Local"']],
    ['externalTrafficPolicy of a ClusterIP service with external IPs', (o) => Object.assign(o.spec, { externalIPs: ['1.2.3.4'], externalTrafficPolicy: 'Everywhere' }),
      ['spec.externalTrafficPolicy: Unsupported value: "Everywhere": supported values: "Cluster", "Local"']],
    ['invalid internalTrafficPolicy', (o) => { o.spec.internalTrafficPolicy = 'invalid'; }, ['spec.internalTrafficPolicy: Unsupported value: "invalid": supported values: "Cluster", "Local"']],
    ['invalid trafficDistribution', (o) => { o.spec.trafficDistribution = 'Random'; }, ['spec.trafficDistribution: Unsupported value: "Random": supported values: "PreferClose"']],
    ['invalid ipFamilies', (o) => { o.spec.ipFamilies = ['IPv5']; }, ['spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"']],
    ['duplicate ipFamilies', (o) => { o.spec.ipFamilies = ['IPv4', 'IPv4']; }, ['spec.ipFamilies[1]: Duplicate value: "IPv4"']],
    ['invalid ipFamilyPolicy', (o) => { o.spec.ipFamilyPolicy = 'WhatEver'; }, ['spec.ipFamilyPolicy: Unsupported value: "WhatEver": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"']],
  ]);
});

test('Service: a ClusterIP service with external IPs gets externalTrafficPolicy Cluster, as upstream defaults it', () => {
  const o = service();
  o.spec.externalIPs = ['1.2.3.4'];
  const svc = decodeObject(services, o, { fieldValidation: 'Strict', warnings: [] });
  services.strategy.defaults!(svc);
  assert.equal(svc.spec.externalTrafficPolicy, 'Cluster');
});

const pod = (): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }], initContainers: [{ name: 'i', image: 'busybox' }] },
});
const c0 = 'spec.containers[0]';

test('Pod: the spec\'s and the containers\' enumerated fields', () => {
  runTable(pods, pod, [
    ['valid values everywhere', (o) => {
      Object.assign(o.spec, {
        preemptionPolicy: 'Never', os: { name: 'linux' }, securityContext: { fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'RuntimeDefault' } },
        tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, { operator: 'Exists' }],
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore' }],
      });
      o.spec.initContainers[0].restartPolicy = 'Always';
      Object.assign(o.spec.containers[0], {
        livenessProbe: { httpGet: { port: 80, path: '/', scheme: 'HTTPS' } }, securityContext: { procMount: 'Default', appArmorProfile: { type: 'Unconfined' } },
        resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      });
    }, []],
    ['invalid preemption policy', (o) => { o.spec.preemptionPolicy = 'Sometimes'; }, ['spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']],
    ['empty preemption policy', (o) => { o.spec.preemptionPolicy = ''; }, ['spec.preemptionPolicy: Required value']],
    ['invalid fsGroupChangePolicy', (o) => { o.spec.securityContext = { fsGroupChangePolicy: 'Sometimes' }; },
      ['spec.securityContext.fsGroupChangePolicy: Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"']],
    ['invalid seccomp type', (o) => { o.spec.securityContext = { seccompProfile: { type: 'Bogus' } }; },
      ['spec.securityContext.seccompProfile.type: Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"']],
    ['missing seccomp type', (o) => { o.spec.securityContext = { seccompProfile: {} }; }, ['spec.securityContext.seccompProfile.type: Required value: type is required when seccompProfile is set']],
    ['invalid os', (o) => { o.spec.os = { name: 'plan9' }; }, ['spec.os: Unsupported value: "plan9": supported values: "linux", "windows"']],
    ['empty os name', (o) => { o.spec.os = { name: '' }; }, ['spec.os.name: Required value: cannot be empty']],
    ['invalid toleration operator', (o) => { o.spec.tolerations = [{ key: 'k', operator: 'In', value: 'v' }]; },
      ['spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"']],
    ['invalid toleration effect', (o) => { o.spec.tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoScheduleNoAdmit' }]; },
      ['spec.tolerations[0].effect: Unsupported value: "NoScheduleNoAdmit": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"']],
    ['invalid whenUnsatisfiable', (o) => { o.spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'N/A' }]; },
      ['spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "N/A": supported values: "DoNotSchedule", "ScheduleAnyway"']],
    ['invalid node inclusion policies', (o) => { o.spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', nodeAffinityPolicy: 'invalid', nodeTaintsPolicy: 'invalid' }]; }, [
      'spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "invalid": supported values: "Honor", "Ignore"',
      'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "invalid": supported values: "Honor", "Ignore"',
    ]],
    ['invalid mount propagation', (o) => {
      o.spec.volumes = [{ name: 'v', emptyDir: {} }];
      o.spec.containers[0].volumeMounts = [{ name: 'v', mountPath: '/v', mountPropagation: 'Sideways' }];
    }, [`${c0}.volumeMounts[0].mountPropagation: Unsupported value: "Sideways": supported values: "Bidirectional", "HostToContainer", "None"`]],
    ['invalid probe scheme', (o) => { o.spec.containers[0].readinessProbe = { httpGet: { port: 80, path: '/', scheme: 'FTP' } }; },
      [`${c0}.readinessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`]],
    ['invalid hook scheme', (o) => { o.spec.containers[0].lifecycle = { preStop: { httpGet: { port: 80, path: '/', scheme: 'FTP' } } }; },
      [`${c0}.lifecycle.preStop.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`]],
    ['invalid procMount', (o) => { o.spec.containers[0].securityContext = { procMount: 'Masked' }; },
      [`${c0}.securityContext.procMount: Unsupported value: "Masked": supported values: "Default", "Unmasked"`]],
    ['invalid AppArmor type', (o) => { o.spec.containers[0].securityContext = { appArmorProfile: { type: 'Strict' } }; },
      [`${c0}.securityContext.appArmorProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"`]],
    ['invalid resize policy', (o) => { o.spec.containers[0].resizePolicy = [{ resourceName: 'gpu', restartPolicy: 'Sometimes' }]; }, [
      `${c0}.resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory"`,
      `${c0}.resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"`,
    ]],
    ['invalid sidecar restart policy', (o) => { o.spec.initContainers[0].restartPolicy = 'Never'; },
      ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ['restart policy of an app container', (o) => { o.spec.containers[0].restartPolicy = 'Always'; },
      [`${c0}.restartPolicy: Forbidden: may not be set for non-init containers`]],
  ]);
});

const pv = (): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } },
});
const pvc = (): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});
const accessModes = 'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"';

test('PersistentVolume: access modes, reclaim policy, volume mode', () => {
  runTable(persistentVolumes, pv, [
    ['valid values', (o) => Object.assign(o.spec, { persistentVolumeReclaimPolicy: 'Recycle', volumeMode: 'Block', accessModes: ['ReadOnlyMany', 'ReadWriteMany'] }), []],
    ['invalid access mode', (o) => { o.spec.accessModes = ['fakemode']; }, [`spec.accessModes: Unsupported value: "fakemode": ${accessModes}`]],
    ['no access modes', (o) => { o.spec.accessModes = []; }, ['spec.accessModes: Required value']],
    ['ReadWriteOncePod with an unsupported mode only', (o) => { o.spec.accessModes = ['ReadWriteOncePod', 'fakemode']; }, [`spec.accessModes: Unsupported value: "fakemode": ${accessModes}`]],
    ['ReadWriteOncePod with another mode', (o) => { o.spec.accessModes = ['ReadWriteOncePod', 'ReadWriteMany']; }, ['spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes']],
    ['invalid reclaim policy', (o) => { o.spec.persistentVolumeReclaimPolicy = 'fakeReclaimPolicy'; },
      ['spec.persistentVolumeReclaimPolicy: Unsupported value: "fakeReclaimPolicy": supported values: "Delete", "Recycle", "Retain"']],
    ['invalid volume mode', (o) => { o.spec.volumeMode = 'fakeVolumeMode'; }, ['spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem"']],
  ]);
});

test('PersistentVolumeClaim: access modes, volume mode', () => {
  runTable(persistentVolumeClaims, pvc, [
    ['invalid access mode', (o) => { o.spec.accessModes = ['fakemode']; }, [`spec.accessModes: Unsupported value: "fakemode": ${accessModes}`]],
    ['no access modes', (o) => { o.spec.accessModes = []; }, ['spec.accessModes: Required value: at least 1 access mode is required']],
    ['invalid volume mode', (o) => { o.spec.volumeMode = 'fakeVolumeMode'; }, ['spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem"']],
  ]);
});

test('PodDisruptionBudget: unhealthyPodEvictionPolicy', () => {
  runTable(podDisruptionBudgets, () => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'b', namespace: 'default' }, spec: { minAvailable: 1, selector: {} } }), [
    ['valid policy', (o) => { o.spec.unhealthyPodEvictionPolicy = 'AlwaysAllow'; }, []],
    ['invalid policy', (o) => { o.spec.unhealthyPodEvictionPolicy = 'Invalid'; },
      ['spec.unhealthyPodEvictionPolicy: Unsupported value: "Invalid": supported values: "AlwaysAllow", "IfHealthyBudget"']],
  ]);
});
