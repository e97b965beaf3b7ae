// Pods without a server: quantities as upstream writes them, upstream's
// validation messages in a table, defaults, and round trips of a full pod
// through JSON, YAML and protobuf (embedded Go structs nest on the wire).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { canonicalQuantity, quantityMessages } from '../../../src/machinery/quantity.js';
import { pods } from '../../../src/api/core/v1/pod.js';
import { coreV1Kinds } from '../../../src/api/core/v1/index.js';
import { decodeObject } from '../../../src/api/decode.js';
import { readJson, readYaml } from '../../../src/api/wire.js';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject } from '../../../src/api/protobuf/index.js';
import type { KubeObject } from '../../../src/api/kind.js';

test('quantities are written in upstream\'s canonical form', () => {
  const cases: [string | number, string][] = [
    ['1000m', '1'], ['0.5', '500m'], [1.5, '1500m'], ['1000', '1k'], ['1024', '1024'], ['1Gi', '1Gi'], ['1536Mi', '1536Mi'],
    ['2048Mi', '2Gi'], ['1.5Gi', '1536Mi'], ['100Mi', '100Mi'], ['1e3', '1e3'], ['0', '0'], ['-1', '-1'], ['0.0000000001', '1n'],
    ['512Ki', '512Ki'], ['0.5Ki', '512'], ['1200m', '1200m'], ['10G', '10G'], [128, '128'],
  ];
  for (const [given, canonical] of cases) assert.equal(canonicalQuantity(given), canonical, `${given}`);
  assert.throws(() => canonicalQuantity('1.2.3'), { message: quantityMessages.numeric });
  assert.throws(() => canonicalQuantity('12x'), { message: quantityMessages.format });
  assert.throws(() => canonicalQuantity('1Qi'), { message: quantityMessages.format });
  assert.throws(() => canonicalQuantity('1kk'), { message: quantityMessages.suffix });
});

const decode = (obj: unknown): KubeObject => {
  const pod = decodeObject(pods, obj, { fieldValidation: 'Strict', warnings: [] });
  pods.strategy.defaults!(pod);
  return pod;
};
const podWith = (spec: Record<string, unknown>) => decode({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec });
const messages = (pod: KubeObject) => pods.strategy.validate!(pod).map((e) => e.describe());

test('validation: upstream\'s messages, table-driven', () => {
  const c = (extra: Record<string, unknown> = {}) => ({ name: 'c', image: 'nginx', ...extra });
  const table: [string, Record<string, unknown>, string[]][] = [
    ['a valid pod', { containers: [c()] }, []],
    ['no containers', { containers: [] }, ['spec.containers: Required value']],
    ['no image', { containers: [{ name: 'c' }] }, ['spec.containers[0].image: Required value']],
    ['bad container name', { containers: [c({ name: 'C_1' })] }, [
      'spec.containers[0].name: Invalid value: "C_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')',
    ]],
    ['names unique across init and app containers', { initContainers: [c()], containers: [c()] }, ['spec.containers[0].name: Duplicate value: "c"']],
    ['port out of range', { containers: [c({ ports: [{ containerPort: 0 }, { containerPort: 65536 }, { containerPort: 80, hostPort: -1 }] })] }, [
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[2].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive',
    ]],
    ['port names', { containers: [c({ ports: [{ containerPort: 1, name: 'web' }, { containerPort: 2, name: 'web' }, { containerPort: 3, name: '123' }] })] }, [
      'spec.containers[0].ports[1].name: Duplicate value: "web"',
      'spec.containers[0].ports[2].name: Invalid value: "123": must contain at least one letter (a-z)',
    ]],
    ['protocol', { containers: [c({ ports: [{ containerPort: 1, protocol: 'ICMP' }] })] }, [
      'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    ]],
    ['restart policy', { restartPolicy: 'Sometimes', containers: [c()] }, ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    ['dns policy', { dnsPolicy: 'Nope', containers: [c()] }, ['spec.dnsPolicy: Unsupported value: "Nope": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"']],
    ['volumes', { volumes: [{ name: 'v', emptyDir: {} }, { name: 'v', emptyDir: {} }, { name: 'w' }, { name: 'x', emptyDir: {}, configMap: { name: 'cm' } }], containers: [c()] }, [
      'spec.volumes[1].name: Duplicate value: "v"',
      'spec.volumes[2]: Required value: must specify a volume type',
      'spec.volumes[3].configMap: Forbidden: may not specify more than 1 volume type',
    ]],
    ['mounts', { volumes: [{ name: 'v', emptyDir: {} }], containers: [c({ volumeMounts: [{ name: 'v', mountPath: '/a' }, { name: 'v', mountPath: '/a' }, { name: 'nope', mountPath: '/b' }] })] }, [
      'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique',
      'spec.containers[0].volumeMounts[2].name: Not found: "nope"',
    ]],
    ['resources', { containers: [c({ resources: { limits: { cpu: '1' }, requests: { cpu: '2', memory: '-1' } } })] }, [
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ]],
    ['resource names: standard, qualified, extended and huge pages', { containers: [c({ resources: { limits: { 'example.com/gpu': '500m', gpu: '1', 'hugepages-2Mi': '1Mi', memory: '-1' }, requests: { 'Bad_Name!': '1', cpu: '1m' } } })] }, [
      'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.limits[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[Bad_Name!]: Invalid value: "Bad_Name!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
      'spec.containers[0].resources.requests[Bad_Name!]: Invalid value: "Bad_Name!": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer',
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
    ]],
    ['env names', { containers: [c({ env: [{ name: '1abc' }, { name: '' }] })] }, [
      'spec.containers[0].env[0].name: Invalid value: "1abc": a valid environment variable name must consist of alphabetic characters, digits, \'_\', \'-\', or \'.\', and must not start with a digit (e.g. \'my.env-name\',  or \'MY_ENV.NAME\',  or \'MyEnvName1\', regex used for validation is \'[-._a-zA-Z][-._a-zA-Z0-9]*\')',
      'spec.containers[0].env[1].name: Required value',
    ]],
    ['image pull policy', { containers: [c({ imagePullPolicy: 'Sometimes' })] }, ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"']],
  ];
  for (const [name, spec, expected] of table) assert.deepEqual(messages(podWith(spec)), expected, name);
});

test('updates may change images, shorten the deadline and add tolerations; nothing else', () => {
  const old = podWith({ containers: [{ name: 'c', image: 'nginx:1' }], activeDeadlineSeconds: 100 });
  const changed = (f: (p: KubeObject) => void) => { const p = structuredClone(old); f(p); return pods.strategy.validateUpdate!(p, old).map((e) => e.describe()); };
  assert.deepEqual(changed((p) => { p.spec.containers[0].image = 'nginx:2'; p.spec.activeDeadlineSeconds = 50; p.spec.tolerations = [{ key: 'k', operator: 'Exists' }]; }), []);
  assert.deepEqual(changed((p) => { p.spec.activeDeadlineSeconds = 200; }), ['spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value']);
  const [nodeName] = changed((p) => { p.spec.nodeName = 'n'; });
  assert.match(nodeName!, /^spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`,`spec\.initContainers\[\*\]\.image`,`spec\.activeDeadlineSeconds`,`spec\.tolerations` \(only additions to existing tolerations\),`spec\.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\nspec\.nodeName: /);
  assert.deepEqual(changed((p) => { p.spec.containers.push({ ...p.spec.containers[0], name: 'd' }); }), ['spec.containers: Forbidden: pod updates may not add or remove containers']);
});

test('defaults as upstream: policies, grace period, scheduler, pull policy by tag, probes, modes, requests from limits', () => {
  const pod = podWith({
    containers: [
      { name: 'a', image: 'nginx', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } }, resources: { limits: { cpu: '1000m' } } },
      { name: 'b', image: 'registry.local:5000/app:1.2' }, { name: 'c', image: 'app@sha256:abc' }, { name: 'd', image: 'app:latest' },
    ],
    volumes: [{ name: 's', secret: { secretName: 'x' } }, { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }],
    serviceAccount: 'robot',
  });
  const spec = pod.spec;
  assert.deepEqual([spec.restartPolicy, spec.dnsPolicy, spec.terminationGracePeriodSeconds, spec.schedulerName, spec.serviceAccountName], ['Always', 'ClusterFirst', 30, 'default-scheduler', 'robot']);
  assert.deepEqual(spec.containers.map((c: any) => c.imagePullPolicy), ['Always', 'IfNotPresent', 'IfNotPresent', 'Always']);
  assert.deepEqual(spec.containers[0].livenessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.deepEqual(spec.containers[0].resources, { limits: { cpu: '1' }, requests: { cpu: '1' } });
  assert.equal(spec.volumes[0].secret.defaultMode, 420);
  assert.equal(spec.volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds, 3600);
});

/** A pod with most of what real manifests use. */
const fullPod: KubeObject = {
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'full', namespace: 'default', labels: { app: 'full' }, uid: 'u-1', resourceVersion: '9', creationTimestamp: '2026-11-25T10:00:00Z' },
  spec: {
    volumes: [
      { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'a', path: 'a.txt' }], defaultMode: 420 } },
      { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }, { configMap: { name: 'ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }], defaultMode: 420 } },
    ],
    initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'true'], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent', resources: {} }],
    containers: [{
      name: 'web', image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
      env: [{ name: 'MODE', value: 'fast' }, { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }, { name: 'PW', valueFrom: { secretKeyRef: { name: 'creds', key: 'pw', optional: true } } }],
      envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'S_' }],
      resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true }, { name: 'tmp', mountPath: '/tmp' }],
      livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, initialDelaySeconds: 3, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
      readinessProbe: { tcpSocket: { port: 80 }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
      lifecycle: { preStop: { exec: { command: ['nginx', '-s', 'quit'] } } },
      securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
      terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
    }],
    restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', nodeSelector: { 'kubernetes.io/os': 'linux' },
    serviceAccountName: 'robot', serviceAccount: 'robot', nodeName: 'node-1', securityContext: { fsGroup: 2000 }, schedulerName: 'default-scheduler',
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } },
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'full' } } }],
    enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority', priority: 0,
    ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'web', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'Always', resources: {} }],
  },
  status: {
    phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-25T10:01:00Z' }],
    hostIP: '192.0.2.1', hostIPs: [{ ip: '192.0.2.1' }], podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }], startTime: '2026-11-25T10:00:01Z',
    containerStatuses: [{ name: 'web', state: { running: { startedAt: '2026-11-25T10:00:30Z' } }, lastState: {}, ready: true, restartCount: 1, image: 'nginx:1.27', imageID: 'docker.io/library/nginx@sha256:1', containerID: 'containerd://abc', started: true }],
    qosClass: 'Burstable',
  },
};

test('a full pod round-trips through JSON, YAML and protobuf', () => {
  const lookup = builtinSchemaLookup(coreV1Kinds);
  const viaJson = decode(readJson(JSON.stringify(fullPod)).value);
  assert.deepEqual(viaJson, fullPod);
  assert.deepEqual(decode(readYaml(stringify(fullPod)).value), fullPod);
  const wire = encodeProtobufObject(fullPod, lookup('v1', 'Pod')!);
  assert.deepEqual(decodeProtobufObject(wire, lookup), fullPod);
});

test('protobuf: a volume\'s source nests as upstream\'s embedded message, its config map\'s reference inside it', () => {
  const lookup = builtinSchemaLookup(coreV1Kinds);
  const schema = lookup('v1', 'Pod')!;
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { volumes: [{ name: 'v', configMap: { name: 'c' } }], containers: [] } };
  const hex = encodeProtobufObject(pod, schema).toString('hex');
  // Volume {1: "v", 2: VolumeSource {19: ConfigMapVolumeSource {1: LocalObjectReference {1: "c"}}}}
  const volume = '0a01' + Buffer.from('v').toString('hex') + '1208' + '9a0105' + '0a03' + '0a01' + Buffer.from('c').toString('hex');
  assert.ok(hex.includes('0a0d' + volume), hex);
});
