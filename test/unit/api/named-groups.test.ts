// The networking, discovery, storage, scheduling and node kinds: every kind
// survives JSON, YAML and protobuf round trips unchanged, and their
// validation answers with upstream's messages, table by table.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject, listSchemaOf } from '../../../src/api/protobuf/index.js';
import { namedGroupKinds } from '../../../src/api/namedgroups.js';
import { readJson, readYaml } from '../../../src/api/wire.js';
import type { KindDefinition, KubeObject } from '../../../src/api/kind.js';
import { ingresses, ingressClasses, networkPolicies } from '../../../src/api/networking/v1/index.js';
import { endpointSlices } from '../../../src/api/discovery/v1/endpointslice.js';
import { csiDrivers, csiNodes, csiStorageCapacities, storageClasses, volumeAttachments } from '../../../src/api/storage/v1/index.js';
import { priorityClasses } from '../../../src/api/scheduling/v1/priorityclass.js';
import { runtimeClasses } from '../../../src/api/node/v1/runtimeclass.js';
import { canonical } from '../protobuf/fixtures.js';
import { namedGroupSamples } from '../../support/named-group-samples.js';

const lookup = builtinSchemaLookup(namedGroupKinds);

test('every kind has a sample and survives protobuf, JSON and YAML round trips unchanged, alone and in a list', () => {
  for (const kind of namedGroupKinds) {
    const sample = namedGroupSamples.find((s) => s.kind === kind.kind);
    assert.ok(sample, `a sample of ${kind.kind}`);
    const expected = canonical(sample);
    const schema = lookup(sample.apiVersion!, sample.kind!)!;
    assert.deepEqual(decodeProtobufObject(encodeProtobufObject(sample, schema), lookup), expected, `${kind.kind} protobuf`);
    assert.deepEqual(readJson(JSON.stringify(sample)).value, expected, `${kind.kind} JSON`);
    assert.deepEqual(readYaml(YAML.stringify(expected)).value, expected, `${kind.kind} YAML`);
    const { apiVersion, kind: _k, ...item } = expected;
    const list = { apiVersion, kind: kind.listKind, metadata: { resourceVersion: '7' }, items: [item] };
    assert.deepEqual(decodeProtobufObject(encodeProtobufObject(list, listSchemaOf(schema)), lookup), list, `${kind.listKind} protobuf`);
  }
});

/** Upstream's field numbers, spot-checked where a wrong one would go unnoticed by a round trip. */
test('protobuf field numbers follow upstream\'s generated.proto', () => {
  const field = (kind: KindDefinition, ...path: string[]) => {
    let s = kind.schema;
    for (const step of path) {
      s = s.ref ?? s;
      s = (s.properties?.[step] ?? s.items?.ref?.properties?.[step] ?? s.items?.properties?.[step])!;
      assert.ok(s, `${kind.kind}: ${path.join('.')}`);
    }
    return s.proto;
  };
  assert.equal(field(ingresses, 'spec', 'ingressClassName'), 4);
  assert.equal(field(ingresses, 'spec', 'defaultBackend', 'service'), 4);
  assert.equal(field(ingresses, 'spec', 'rules', 'http'), 1);
  assert.equal(ingresses.schema.properties!.spec!.ref!.properties!.rules!.items!.ref!.protoInline![0]!.proto, 2);
  assert.equal(field(endpointSlices, 'addressType'), 4);
  assert.equal(field(endpointSlices, 'endpoints', 'hints'), 8);
  assert.equal(field(priorityClasses, 'preemptionPolicy'), 5);
  assert.equal(field(storageClasses, 'allowedTopologies'), 8);
  assert.equal(field(csiDrivers, 'spec', 'seLinuxMount'), 8);
  assert.equal(field(runtimeClasses, 'scheduling'), 4);
});

type Row = [string, (o: KubeObject) => void, string[]];

/** Defaults the object as the server does, mutates it, and answers the validation messages. */
function errorsOf(kind: KindDefinition, base: KubeObject, mutate: (o: KubeObject) => void): string[] {
  const obj = structuredClone(base);
  mutate(obj);
  kind.strategy.defaults?.(obj);
  return (kind.strategy.validate?.(obj) ?? []).map((e) => e.describe());
}

function table(kind: KindDefinition, base: KubeObject, rows: Row[]): void {
  assert.deepEqual(errorsOf(kind, base, () => undefined), [], `${kind.kind}: the base object is valid`);
  for (const [name, mutate, expected] of rows) assert.deepEqual(errorsOf(kind, base, mutate), expected, `${kind.kind}: ${name}`);
}

const sampleOf = (kind: string) => structuredClone(namedGroupSamples.find((s) => s.kind === kind)!);

test('Ingress validation', () => {
  const path = (o: KubeObject) => o.spec.rules[0].http.paths[0];
  table(ingresses, sampleOf('Ingress'), [
    ['no rules and no default backend', (o) => { delete o.spec.rules; delete o.spec.defaultBackend; }, ['spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified']],
    ['an IP as host', (o) => { o.spec.rules[0].host = '10.0.0.1'; }, ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']],
    ['a bad wildcard', (o) => { o.spec.rules[0].host = 'a.*.com'; }, ['spec.rules[0].host: Invalid value: "a.*.com": a wildcard DNS-1123 subdomain must start with \'*.\', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, \'-\' or \'.\' and end with an alphanumeric character (e.g. \'*.example.com\', regex used for validation is \'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')']],
    ['no paths', (o) => { o.spec.rules[0].http.paths = []; }, ['spec.rules[0].http.paths: Required value']],
    ['no pathType', (o) => { delete path(o).pathType; }, ['spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified']],
    ['an unknown pathType', (o) => { path(o).pathType = 'Regex'; }, ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"']],
    ['a relative path', (o) => { path(o).path = 'a'; }, ['spec.rules[0].http.paths[0].path: Invalid value: "a": must be an absolute path']],
    ['a path with //', (o) => { path(o).path = '/a//b'; }, ['spec.rules[0].http.paths[0].path: Invalid value: "/a//b": must not contain \'//\'']],
    ['a path ending /..', (o) => { path(o).path = '/a/..'; }, ['spec.rules[0].http.paths[0].path: Invalid value: "/a/..": cannot end with \'/..\'']],
    ['both backends', (o) => { path(o).backend.resource = { kind: 'K', name: 'n' }; }, ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends']],
    ['no backend', (o) => { path(o).backend = {}; }, ['spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required']],
    ['both port name and number', (o) => { path(o).backend.service.port = { name: 'http', number: 80 }; }, ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number']],
    ['no port', (o) => { path(o).backend.service.port = {}; }, ['spec.rules[0].http.paths[0].backend: Required value: port name or number is required']],
    ['a bad port number', (o) => { path(o).backend.service.port = { number: 70000 }; }, ['spec.rules[0].http.paths[0].backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive']],
    ['a bad service name', (o) => { path(o).backend.service.name = '1svc'; }, ['spec.rules[0].http.paths[0].backend.service.name: Invalid value: "1svc": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')']],
    ['a resource backend without kind', (o) => { delete o.spec.defaultBackend.resource.kind; }, ['spec.defaultBackend.resource.kind: Required value']],
    ['a bad TLS host', (o) => { o.spec.tls[0].hosts = ['Foo.com']; }, ['spec.tls[0].hosts[0]: Invalid value: "Foo.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')']],
  ]);
});

test('IngressClass validation; the controller is immutable and parameters default to Cluster scope', () => {
  table(ingressClasses, sampleOf('IngressClass'), [
    ['no controller', (o) => { o.spec.controller = ''; }, ['spec.controller: Required value']],
    ['a controller without path', (o) => { o.spec.controller = 'example.com'; }, ['spec.controller: Invalid value: "example.com": must be a domain-prefixed path (such as "acme.io/foo")']],
    ['a controller too long', (o) => { o.spec.controller = `example.com/${'a'.repeat(250)}`; }, ['spec.controller: Too long: may not be more than 250 bytes']],
    ['a namespaced reference without namespace', (o) => { delete o.spec.parameters.namespace; }, ['spec.parameters.namespace: Required value: `parameters.scope` is set to \'Namespace\'']],
    ['a cluster reference with a namespace', (o) => { o.spec.parameters.scope = 'Cluster'; }, ['spec.parameters.namespace: Forbidden: `parameters.scope` is set to \'Cluster\'']],
    ['an unknown scope', (o) => { o.spec.parameters.scope = 'World'; }, ['spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace"']],
  ]);
  const ic: KubeObject = { spec: { controller: 'example.com/a', parameters: { kind: 'K', name: 'n' } } };
  ingressClasses.strategy.defaults!(ic);
  assert.equal(ic.spec.parameters.scope, 'Cluster');
  const changed = ingressClasses.strategy.validateUpdate!({ ...ic, spec: { ...ic.spec, controller: 'example.com/b' } }, ic).map((e) => e.describe());
  assert.deepEqual(changed, ['spec.controller: Invalid value: "example.com/b": field is immutable']);
});

test('NetworkPolicy validation and defaults', () => {
  const peer = (o: KubeObject) => o.spec.ingress[0].from;
  table(networkPolicies, sampleOf('NetworkPolicy'), [
    ['an empty peer', (o) => { peer(o)[0] = {}; }, ['spec.ingress[0].from[0]: Required value: must specify a peer']],
    ['ipBlock with another peer', (o) => { peer(o)[1].podSelector = {}; }, ['spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer']],
    ['a bad cidr', (o) => { peer(o)[1].ipBlock = { cidr: '10.0.0.0/33' }; }, ['spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']],
    ['an except outside the cidr', (o) => { peer(o)[1].ipBlock.except = ['192.168.0.0/16', '10.0.0.0/8']; }, [
      'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`',
      'spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
    ]],
    ['no cidr', (o) => { peer(o)[1].ipBlock = { cidr: '' }; }, ['spec.ingress[0].from[1].ipBlock.cidr: Required value']],
    ['endPort below port', (o) => { o.spec.ingress[0].ports[0].endPort = 70; }, ['spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`']],
    ['endPort with a named port', (o) => { o.spec.ingress[0].ports[1].endPort = 70; }, ['spec.ingress[0].ports[1].endPort: Forbidden: may not be specified when `port` is non-numeric']],
    ['endPort without port', (o) => { o.spec.ingress[0].ports[0] = { endPort: 70 }; }, ['spec.ingress[0].ports[0].port: Required value: must specify port when endPort is specified']],
    ['an unknown protocol', (o) => { o.spec.ingress[0].ports[0].protocol = 'ICMP'; }, ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']],
    ['an unknown policy type', (o) => { o.spec.policyTypes = ['Ingress', 'Sideways']; }, ['spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"']],
    ['three policy types', (o) => { o.spec.policyTypes = ['Ingress', 'Egress', 'Ingress']; }, ['spec.policyTypes: Invalid value: []string{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes']],
    ['a bad selector operator', (o) => { o.spec.podSelector.matchExpressions[0].operator = 'Near'; }, ['spec.podSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator']],
  ]);
  const np: KubeObject = { spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] } };
  networkPolicies.strategy.defaults!(np);
  assert.deepEqual(np.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
});

test('EndpointSlice validation; the address type is immutable', () => {
  table(endpointSlices, sampleOf('EndpointSlice'), [
    ['no address type', (o) => { delete o.addressType; }, ['addressType: Required value']],
    ['an unknown address type', (o) => { o.addressType = 'IPX'; }, ['addressType: Unsupported value: "IPX": supported values: "FQDN", "IPv4", "IPv6"']],
    ['an IPv6 address in an IPv4 slice', (o) => { o.endpoints[0].addresses = ['fd00::1']; }, ['endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address']],
    ['a loopback address', (o) => { o.endpoints[0].addresses = ['127.0.0.1']; }, ['endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']],
    ['no address', (o) => { o.endpoints[1].addresses = []; }, ['endpoints[1].addresses: Required value: must contain at least 1 address']],
    ['101 addresses', (o) => { o.endpoints[1].addresses = Array.from({ length: 101 }, (_, i) => `10.0.${i >> 8}.${(i % 250) + 1}`); }, ['endpoints[1].addresses: Too many: 101: must have at most 100 items']],
    ['1001 endpoints', (o) => { o.endpoints = Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })); }, ['endpoints: Too many: 1001: must have at most 1000 items']],
    ['a bad hostname', (o) => { o.endpoints[0].hostname = 'Web'; }, ['endpoints[0].hostname: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')']],
    ['duplicate port names', (o) => { o.ports[1].name = 'http'; }, ['ports[1].name: Duplicate value: "http"']],
    ['an unknown protocol', (o) => { o.ports[0].protocol = 'ICMP'; }, ['ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']],
    ['nine zone hints', (o) => { o.endpoints[0].hints.forZones = Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` })); }, ['endpoints[0].hints.forZones: Too many: 9: must have at most 8 items']],
    ['an FQDN slice', (o) => { o.addressType = 'FQDN'; o.endpoints = [{ addresses: ['web.example.com'] }]; }, []],
  ]);
  const slice = sampleOf('EndpointSlice');
  assert.deepEqual(endpointSlices.strategy.validateUpdate!({ ...slice, addressType: 'IPv6', endpoints: [] }, slice).map((e) => e.describe()), ['addressType: Invalid value: "IPv6": field is immutable']);
  const defaulted: KubeObject = { addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] };
  endpointSlices.strategy.defaults!(defaulted);
  assert.deepEqual(defaulted.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
});

test('StorageClass validation and defaults; provisioner, parameters, reclaimPolicy and binding mode never change', () => {
  table(storageClasses, sampleOf('StorageClass'), [
    ['no provisioner', (o) => { delete o.provisioner; }, ['provisioner: Required value']],
    ['a bad provisioner', (o) => { o.provisioner = 'a/b/c'; }, ['provisioner: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')']],
    ['an unknown reclaim policy', (o) => { o.reclaimPolicy = 'Recycle'; }, ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"']],
    ['an unknown binding mode', (o) => { o.volumeBindingMode = 'Later'; }, ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']],
    ['a topology without values', (o) => { o.allowedTopologies[0].matchLabelExpressions[0].values = []; }, ['allowedTopologies[0].matchLabelExpressions[0].values: Required value: must specify as least one value']],
    ['an empty parameter name', (o) => { o.parameters[''] = 'x'; }, ['parameters: Invalid value: "": field can not be empty.']],
  ]);
  const sc: KubeObject = { metadata: { name: 'a' }, provisioner: 'example.com/disk', parameters: { a: '1' } };
  storageClasses.strategy.defaults!(sc);
  assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ['Delete', 'Immediate']);
  const changed = { ...sc, provisioner: 'example.com/other', parameters: { a: '2' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' };
  assert.deepEqual(storageClasses.strategy.validateUpdate!(changed, sc).map((e) => e.describe()), [
    'parameters: Forbidden: updates to parameters are forbidden.',
    'provisioner: Forbidden: updates to provisioner are forbidden.',
    'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
    'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
  ]);
});

test('CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity validation', () => {
  table(csiDrivers, sampleOf('CSIDriver'), [
    ['an unknown fsGroupPolicy', (o) => { o.spec.fsGroupPolicy = 'Any'; }, ['spec.fsGroupPolicy: Unsupported value: "Any": supported values: "File", "None", "ReadWriteOnceWithFSType"']],
    ['a short token', (o) => { o.spec.tokenRequests[0].expirationSeconds = 60; }, ['spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes']],
    ['a repeated audience', (o) => { o.spec.tokenRequests.push({ audience: 'vault' }); }, ['spec.tokenRequests[1].audience: Duplicate value: "vault"']],
  ]);
  const driver: KubeObject = { metadata: { name: 'd.example.com' }, spec: {} };
  csiDrivers.strategy.defaults!(driver);
  assert.deepEqual(driver.spec, { attachRequired: true, podInfoOnMount: false, storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType', requiresRepublish: false, seLinuxMount: false, volumeLifecycleModes: ['Persistent'] });
  assert.deepEqual(csiDrivers.strategy.validateUpdate!({ ...driver, spec: { ...driver.spec, attachRequired: false } }, driver).map((e) => e.describe()), ['spec.attachedRequired: Invalid value: false: field is immutable']);
  assert.deepEqual(csiDrivers.nameCheck('-bad'), ['must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')']);
  table(csiNodes, sampleOf('CSINode'), [
    ['no node ID', (o) => { o.spec.drivers[0].nodeID = ''; }, ['spec.drivers[0].nodeID: Required value: nodeID must not be empty']],
    ['a repeated driver', (o) => { o.spec.drivers.push({ ...o.spec.drivers[0] }); }, ['spec.drivers[1]: Duplicate value: "disk.example.com"']],
    ['a negative count', (o) => { o.spec.drivers[0].allocatable.count = -1; }, ['spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0']],
  ]);
  table(volumeAttachments, sampleOf('VolumeAttachment'), [
    ['two sources', (o) => { o.spec.source.inlineVolumeSpec = {}; }, ['spec.source: Invalid value: {"persistentVolumeName":"pv-1","inlineVolumeSpec":{}}: must specify exactly one of inlineVolumeSpec and persistentVolumeName']],
    ['no node', (o) => { delete o.spec.nodeName; }, ['spec.nodeName: Required value']],
    ['no attacher', (o) => { delete o.spec.attacher; }, ['spec.attacher: Required value']],
  ]);
  const va = sampleOf('VolumeAttachment');
  assert.deepEqual(volumeAttachments.strategy.validateUpdate!({ ...va, spec: { ...va.spec, nodeName: 'node-b' } }, va).map((e) => e.describe().replace(/: \{.*\}: /, ': {…}: ')), ['spec: Invalid value: {…}: field is immutable']);
  table(csiStorageCapacities, sampleOf('CSIStorageCapacity'), [
    ['no class', (o) => { delete o.storageClassName; }, ['storageClassName: Required value']],
    ['a negative capacity', (o) => { o.capacity = '-1Gi'; }, ['capacity: Invalid value: "-1Gi": must be greater than or equal to 0']],
  ]);
});

test('PriorityClass validation: reserved system- names, the user maximum, an immutable value', () => {
  table(priorityClasses, sampleOf('PriorityClass'), [
    ['a value above the user maximum', (o) => { o.value = 1000000001; }, ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000']],
    ['an unknown system- name', (o) => { o.metadata!.name = 'system-x'; }, ['metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: system-x is not a known system priority class']],
    ['a system class with another value', (o) => { o.metadata!.name = 'system-node-critical'; o.globalDefault = false; }, ['metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000']],
    ['a system class as global default', (o) => { o.metadata!.name = 'system-cluster-critical'; o.value = 2000000000; }, ['metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false']],
    ['the known system class', (o) => { o.metadata!.name = 'system-cluster-critical'; o.value = 2000000000; o.globalDefault = false; }, []],
    ['an unknown preemption policy', (o) => { o.preemptionPolicy = 'Sometimes'; }, ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"']],
  ]);
  const pc = sampleOf('PriorityClass');
  assert.deepEqual(priorityClasses.strategy.validateUpdate!({ ...pc, value: 5, preemptionPolicy: 'PreemptLowerPriority' }, pc).map((e) => e.describe()), [
    'value: Forbidden: may not be changed in an update.',
    'preemptionPolicy: Invalid value: "PreemptLowerPriority": field is immutable',
  ]);
});

test('RuntimeClass validation; the handler is immutable', () => {
  table(runtimeClasses, sampleOf('RuntimeClass'), [
    ['a bad handler', (o) => { o.handler = 'Run_SC'; }, ['handler: Invalid value: "Run_SC": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')']],
    ['a bad node selector key', (o) => { o.scheduling.nodeSelector = { 'a b': 'x' }; }, ['scheduling.nodeSelector: Invalid value: "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')']],
  ]);
  const rc = sampleOf('RuntimeClass');
  assert.deepEqual(runtimeClasses.strategy.validateUpdate!({ ...rc, handler: 'kata' }, rc).map((e) => e.describe()), ['handler: Invalid value: "kata": field is immutable']);
});

test('a PriorityClass encodes byte for byte as upstream\'s generated marshaler writes it', () => {
  const bytes = (...parts: string[]) => Buffer.from(parts.join('').replace(/\s+/g, ''), 'hex');
  const ascii = (text: string) => Buffer.from(text).toString('hex');
  const apiVersion = `${priorityClasses.group}/v1`;
  const wire = bytes(
    '6b387300',
    '0a', (2 + apiVersion.length + 2 + 13).toString(16), '0a', apiVersion.length.toString(16), ascii(apiVersion), '120d', ascii('PriorityClass'),
    '1225',
    '  0a14', '0a04', ascii('high'), '1200 1a00 2200 2a00 3200 3800 4200', // metadata: every value field, as a Go client writes it
    '  10e807', // value 1000
    '  1800', // globalDefault false: a value field, written
    '  2201', ascii('d'), // description
    '  2a05', ascii('Never'), // preemptionPolicy: a pointer, set
    '1a00 2200',
  );
  const obj = { apiVersion, kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000, globalDefault: false, description: 'd', preemptionPolicy: 'Never' };
  assert.equal(encodeProtobufObject(obj, lookup(apiVersion, 'PriorityClass')!).toString('hex'), wire.toString('hex'));
  // A zero value field is dropped on decode, as JSON's omitempty drops it.
  const { globalDefault: _dropped, ...decoded } = obj;
  assert.deepEqual(decodeProtobufObject(wire, lookup), decoded);
});
