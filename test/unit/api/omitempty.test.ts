// Empty maps and lists of built-in kinds are left out, as upstream's typed encoding omits them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asTypedEncoding } from '../../../src/api/omitempty.js';
import { builtinKinds } from '../../../src/api/catalog.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const kind = (group: string, name: string) => builtinKinds.find((k) => k.group === group && k.kind === name)!;

test('optional empty maps and lists go, at every depth; structs, required lists and non-empty ones stay', () => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', labels: {}, annotations: { a: 'b' }, finalizers: [] },
    spec: {
      containers: [{ name: 'c', image: 'x', args: [], env: [], resources: {}, ports: [{ containerPort: 80 }] }],
      nodeSelector: {}, securityContext: {}, tolerations: [],
    },
  };
  asTypedEncoding(pod, kind('', 'Pod').schema);
  assert.deepEqual(pod, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', annotations: { a: 'b' } },
    spec: { containers: [{ name: 'c', image: 'x', resources: {}, ports: [{ containerPort: 80 }] }], securityContext: {} },
    status: {},
  });
  const slice = { addressType: 'IPv4', endpoints: [], ports: [], metadata: { name: 's' } };
  asTypedEncoding(slice, kind(vocabulary.endpointDiscoveryGroup, 'EndpointSlice').schema);
  assert.deepEqual(slice, { addressType: 'IPv4', endpoints: [], metadata: { name: 's' } }, 'endpoints is required: it stays');
});

test('value structs go out as {} when not sent, at every depth; pointers, maps and lists are not made up', () => {
  // Go writes a non-pointer struct field whether or not it was set: what upstream answers for these objects.
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c', image: 'x' }], initContainers: [{ name: 'i', image: 'x', resources: { limits: { cpu: '1' } } }] } } },
  };
  asTypedEncoding(deployment, kind('apps', 'Deployment').schema);
  assert.deepEqual(deployment, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      strategy: {},
      template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'x', resources: {} }], initContainers: [{ name: 'i', image: 'x', resources: { limits: { cpu: '1' } } }] } },
    },
    status: {},
  });
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } };
  asTypedEncoding(service, kind('', 'Service').schema);
  assert.deepEqual(service, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: {}, status: { loadBalancer: {} } });
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
  asTypedEncoding(cm, kind('', 'ConfigMap').schema);
  assert.deepEqual(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, 'a ConfigMap has no struct field');
});

test('keys named like Object.prototype members are ordinary keys', () => {
  const cm = JSON.parse('{"metadata":{"name":"c","labels":{"__proto__":"x","constructor":"y"}},"data":{"__proto__":"z"},"binaryData":{}}');
  asTypedEncoding(cm, kind('', 'ConfigMap').schema);
  assert.deepEqual(Object.keys(cm.metadata.labels), ['__proto__', 'constructor']);
  assert.deepEqual(Object.keys(cm.data), ['__proto__']);
  assert.ok(!('binaryData' in cm));
  assert.equal(Object.getPrototypeOf(cm.data), Object.prototype);
});
