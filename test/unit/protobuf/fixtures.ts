// Fully populated objects of every core v1 kind, shaped as the server stores
// them: no empty value fields (those do not survive JSON omitempty either).

import type { KubeObject } from '../../../src/api/kind.js';

export const fullMetadata = {
  name: 'demo',
  generateName: 'de-',
  namespace: 'team-a',
  uid: '5f1c2a8e-1111-2222-3333-444455556666',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2024-01-02T03:04:05Z',
  deletionTimestamp: '2024-01-02T04:00:00Z',
  deletionGracePeriodSeconds: 0,
  labels: { app: 'web', 'plat.io/metadata.name': 'demo', zeta: '' },
  annotations: { note: 'ünïcode ✓', empty: '' },
  ownerReferences: [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'owner-uid', controller: true, blockOwnerDeletion: false },
    { apiVersion: 'v1', kind: 'Secret', name: 'other', uid: 'other-uid' },
  ],
  finalizers: ['plat.io/one', 'example.com/two'],
  managedFields: [
    {
      manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2024-01-02T03:04:05Z',
      fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    },
    { manager: 'ctl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} }, subresource: 'status' },
  ],
};

export const samples: KubeObject[] = [
  {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { ...fullMetadata, namespace: undefined },
    spec: { finalizers: ['plat'] },
    status: {
      phase: 'Terminating',
      conditions: [{ type: 'NamespaceContentRemaining', status: 'True', lastTransitionTime: '2024-02-03T04:05:06Z', reason: 'SomeResourcesRemain', message: 'Some resources are remaining' }],
    },
  },
  {
    apiVersion: 'v1', kind: 'ServiceAccount',
    metadata: fullMetadata,
    secrets: [{ kind: 'Secret', namespace: 'team-a', name: 'tok', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'data' }],
    imagePullSecrets: [{ name: 'pull' }, {}],
    automountServiceAccountToken: false,
  },
  {
    apiVersion: 'v1', kind: 'Secret',
    metadata: fullMetadata,
    data: { 'tls.key': Buffer.from([0, 1, 2, 255]).toString('base64'), 'ca.crt': 'aGVsbG8=', empty: '' },
    stringData: { plain: 'text', blank: '' },
    type: 'plat.io/tls',
    immutable: false,
  },
  {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: fullMetadata,
    data: { 'app.properties': 'a=b\nc=d', empty: '' },
    binaryData: { blob: Buffer.from([0xde, 0xad, 0xbe, 0xef]).toString('base64') },
    immutable: true,
  },
  {
    apiVersion: 'v1', kind: 'Event',
    metadata: fullMetadata,
    involvedObject: { kind: 'Pod', namespace: 'team-a', name: 'web-1', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '9', fieldPath: 'spec.containers{web}' },
    reason: 'Started',
    message: 'Started container web',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2024-01-02T03:04:05Z',
    lastTimestamp: '2024-01-02T03:14:05Z',
    count: 4,
    type: 'Normal',
    eventTime: '2024-01-02T03:04:05.123456Z',
    series: { count: 2, lastObservedTime: '2024-01-02T03:14:05.000001Z' },
    action: 'Start',
    related: { kind: 'Node', name: 'node-1' },
    reportingComponent: 'plat.io/kubelet',
    reportingInstance: 'kubelet-node-1',
  },
];

export const status: KubeObject = {
  apiVersion: 'v1', kind: 'Status',
  metadata: { resourceVersion: '12' },
  status: 'Failure',
  message: 'namespaces "x" not found',
  reason: 'NotFound',
  details: { name: 'x', group: 'plat.io', kind: 'namespaces', uid: 'uid-1', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'metadata.name' }, {}], retryAfterSeconds: 5 },
  code: 404,
};

export const deleteOptions: KubeObject = {
  apiVersion: 'v1', kind: 'DeleteOptions',
  gracePeriodSeconds: 0,
  preconditions: { uid: '', resourceVersion: '12' },
  orphanDependents: false,
  propagationPolicy: 'Foreground',
  dryRun: ['All'],
  ignoreStoreReadErrorWithClusterBreakingPotential: true,
};

/** The JSON value without the keys whose value is undefined (as JSON text would carry it). */
export function canonical<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
