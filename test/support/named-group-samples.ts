// Fully populated objects of every networking, discovery, storage,
// scheduling and node kind, as the server stores them (defaults applied, no
// empty value fields), for the round-trip tests.

import type { KubeObject } from '../../src/api/kind.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { fullMetadata } from '../unit/protobuf/fixtures.js';

const clusterMeta = { ...fullMetadata, namespace: undefined };
const v1 = (group: string) => `${group}/v1`;

export const namedGroupSamples: KubeObject[] = [
  {
    apiVersion: v1(vocabulary.networkingGroup), kind: 'Ingress', metadata: fullMetadata,
    spec: {
      ingressClassName: 'nginx',
      defaultBackend: { resource: { apiGroup: 'example.com', kind: 'Bucket', name: 'static' } },
      tls: [{ hosts: ['foo.com', '*.bar.com'], secretName: 'cert' }],
      rules: [
        { host: 'foo.com', http: { paths: [{ path: '/a', pathType: 'Prefix', backend: { service: { name: 'svc', port: { number: 80 } } } }, { path: '/b', pathType: 'Exact', backend: { service: { name: 'svc', port: { name: 'http' } } } }] } },
        { http: { paths: [{ pathType: 'ImplementationSpecific', backend: { service: { name: 'other', port: { number: 8080 } } } }] } },
      ],
    },
    status: { loadBalancer: { ingress: [{ ip: '192.0.2.1', ports: [{ port: 443, protocol: 'TCP', error: 'Pending' }] }, { hostname: 'lb.example.com' }] } },
  },
  {
    apiVersion: v1(vocabulary.networkingGroup), kind: 'IngressClass', metadata: clusterMeta,
    spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'example.com', kind: 'Config', name: 'c', scope: 'Namespace', namespace: 'team-a' } },
  },
  {
    apiVersion: v1(vocabulary.networkingGroup), kind: 'NetworkPolicy', metadata: fullMetadata,
    spec: {
      podSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
      ingress: [{ ports: [{ protocol: 'TCP', port: 80, endPort: 90 }, { protocol: 'UDP', port: 'dns' }], from: [{ podSelector: { matchLabels: { role: 'client' } }, namespaceSelector: {} }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }],
      egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'a' } } }] }],
      policyTypes: ['Ingress', 'Egress'],
    },
  },
  {
    apiVersion: v1(vocabulary.endpointDiscoveryGroup), kind: 'EndpointSlice', metadata: fullMetadata,
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['10.1.0.1'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'web-0',
        targetRef: { kind: 'Pod', namespace: 'team-a', name: 'web-0', uid: 'pod-uid' }, deprecatedTopology: { zone: 'a' }, nodeName: 'node-a', zone: 'a',
        hints: { forZones: [{ name: 'a' }] },
      },
      { addresses: ['10.1.0.2'], conditions: { ready: false } },
    ],
    ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }, { name: '', protocol: 'UDP' }],
  },
  {
    apiVersion: v1(vocabulary.storageGroup), kind: 'StorageClass', metadata: clusterMeta,
    provisioner: 'example.com/disk', parameters: { type: 'ssd', zone: '' }, reclaimPolicy: 'Retain', mountOptions: ['ro'], allowVolumeExpansion: true,
    volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a', 'b'] }] }],
  },
  {
    apiVersion: v1(vocabulary.storageGroup), kind: 'CSIDriver', metadata: clusterMeta,
    spec: {
      attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'], storageCapacity: true, fsGroupPolicy: 'File',
      tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }], requiresRepublish: true, seLinuxMount: false,
    },
  },
  {
    apiVersion: v1(vocabulary.storageGroup), kind: 'CSINode', metadata: clusterMeta,
    spec: { drivers: [{ name: 'disk.example.com', nodeID: 'node-a', topologyKeys: ['zone'], allocatable: { count: 0 } }] },
  },
  {
    apiVersion: v1(vocabulary.storageGroup), kind: 'VolumeAttachment', metadata: clusterMeta,
    spec: { attacher: 'disk.example.com', source: { persistentVolumeName: 'pv-1' }, nodeName: 'node-a' },
    status: { attached: true, attachmentMetadata: { device: '/dev/sdb' }, attachError: { time: '2024-01-02T03:04:05Z', message: 'busy' }, detachError: { message: 'gone' } },
  },
  {
    apiVersion: v1(vocabulary.storageGroup), kind: 'CSIStorageCapacity', metadata: fullMetadata,
    nodeTopology: { matchLabels: { zone: 'a' } }, storageClassName: 'fast', capacity: '10Gi', maximumVolumeSize: '1Gi',
  },
  {
    apiVersion: v1(vocabulary.schedulingGroup), kind: 'PriorityClass', metadata: clusterMeta,
    value: 1000, globalDefault: true, description: 'high', preemptionPolicy: 'Never',
  },
  {
    apiVersion: v1(vocabulary.nodeGroup), kind: 'RuntimeClass', metadata: clusterMeta,
    handler: 'runsc', overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
    scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
  },
];
