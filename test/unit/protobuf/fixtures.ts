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
  {
    apiVersion: 'v1', kind: 'Pod', metadata: fullMetadata,
    spec: {
      volumes: [{ name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } }, { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
      containers: [{
        name: 'web', image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
        env: [{ name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
        resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } },
        volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true }],
        livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
        terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
      }],
      ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'web', resources: {} }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', nodeName: 'node-1', schedulerName: 'default-scheduler',
    },
    status: { phase: 'Running', podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }], qosClass: 'Burstable', startTime: '2024-01-02T03:04:05Z' },
  },
  {
    apiVersion: 'v1', kind: 'Node', metadata: { ...fullMetadata, namespace: undefined },
    spec: { podCIDRs: ['10.244.1.0/24'], unschedulable: true, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
    status: {
      capacity: { cpu: '4', memory: '8Gi' }, allocatable: { cpu: '3900m', memory: '7Gi' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2024-01-02T03:04:05Z', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'KubeletReady' }],
      addresses: [{ type: 'InternalIP', address: '192.0.2.10' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1', osImage: 'Debian', containerRuntimeVersion: 'containerd://1.7', kubeletVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64' },
    },
  },
  {
    apiVersion: 'v1', kind: 'Endpoints', metadata: fullMetadata,
    subsets: [{ addresses: [{ ip: '10.244.0.5', nodeName: 'node-1', targetRef: { kind: 'Pod', name: 'web', namespace: 'team-a' } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
  },
  {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: fullMetadata,
    spec: { replicas: 2, minReadySeconds: 5, selector: { app: 'web' }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx', resources: {} }] } } },
    status: { replicas: 2, readyReplicas: 1, observedGeneration: 3 },
  },
  {
    apiVersion: 'v1', kind: 'PodTemplate', metadata: fullMetadata,
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx', args: ['-g', 'daemon off;'], resources: {} }] } },
  },
  {
    apiVersion: 'v1', kind: 'Service', metadata: fullMetadata,
    spec: {
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }, { name: 'named', protocol: 'TCP', port: 81, targetPort: 'metrics' }],
      selector: { app: 'web' }, clusterIP: '10.0.0.10', clusterIPs: ['10.0.0.10'], type: 'NodePort', sessionAffinity: 'None',
      externalTrafficPolicy: 'Cluster', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  },
  {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { ...fullMetadata, namespace: undefined },
    spec: {
      capacity: { storage: '10Gi' }, hostPath: { path: '/data', type: 'DirectoryOrCreate' }, accessModes: ['ReadWriteOnce'],
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'team-a', name: 'data' }, persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'manual', volumeMode: 'Filesystem',
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] }] } },
    },
    status: { phase: 'Bound' },
  },
  // The PV-only sources, each with its secret named in any namespace.
  {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { ...fullMetadata, namespace: undefined, name: 'iscsi' },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'],
      iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2024-01.io.example:disk', lun: 0, iscsiInterface: 'default', fsType: 'ext4', readOnly: true,
        portals: ['10.0.0.2:3260'], chapAuthDiscovery: true, chapAuthSession: true, secretRef: { name: 'chap', namespace: 'storage' }, initiatorName: 'iqn.2024-01.io.example:node' },
    },
    status: { phase: 'Available' },
  },
  {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { ...fullMetadata, namespace: undefined, name: 'csi' },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany'],
      csi: { driver: 'csi.example.com', volumeHandle: 'vol-1', readOnly: true, fsType: 'xfs', volumeAttributes: { tier: 'fast' },
        controllerPublishSecretRef: { name: 'a', namespace: 'x' }, nodeStageSecretRef: { name: 'b', namespace: 'x' }, nodePublishSecretRef: { name: 'c', namespace: 'x' },
        controllerExpandSecretRef: { name: 'd', namespace: 'x' }, nodeExpandSecretRef: { name: 'e', namespace: 'x' } },
    },
    status: { phase: 'Available' },
  },
  ...([
    ['glusterfs', { endpoints: 'gluster', path: 'vol', readOnly: true, endpointsNamespace: 'storage' }],
    ['rbd', { monitors: ['10.0.0.1:6789'], image: 'img', fsType: 'ext4', pool: 'rbd', user: 'admin', keyring: '/k', secretRef: { name: 's', namespace: 'n' }, readOnly: true }],
    ['cinder', { volumeID: 'v', fsType: 'ext4', readOnly: true, secretRef: { name: 's', namespace: 'n' } }],
    ['cephfs', { monitors: ['10.0.0.1:6789'], path: '/', user: 'admin', secretFile: '/f', secretRef: { name: 's', namespace: 'n' }, readOnly: true }],
    ['flexVolume', { driver: 'example/flex', fsType: 'ext4', secretRef: { name: 's', namespace: 'n' }, readOnly: true, options: { a: '1', b: '2' } }],
    ['azureFile', { secretName: 's', shareName: 'share', readOnly: true, secretNamespace: 'n' }],
    ['scaleIO', { gateway: 'https://gw', system: 'sys', secretRef: { name: 's', namespace: 'n' }, sslEnabled: true, protectionDomain: 'pd', storagePool: 'sp', storageMode: 'ThinProvisioned', volumeName: 'v', fsType: 'xfs', readOnly: true }],
    ['storageos', { volumeName: 'v', volumeNamespace: 'n', fsType: 'ext4', readOnly: true, secretRef: { kind: 'Secret', namespace: 'n', name: 's' } }],
    ['local', { path: '/mnt/disks/a', fsType: 'ext4' }],
    ['nfs', { server: 'nfs.example.com', path: '/exports', readOnly: true }],
  ] as const).map(([source, value]): KubeObject => ({
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { ...fullMetadata, namespace: undefined, name: source.toLowerCase() },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], [source]: value },
    status: { phase: 'Available' },
  })),
  {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: fullMetadata,
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, volumeName: 'pv-1', storageClassName: 'manual', volumeMode: 'Filesystem' },
    status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' } },
  },
  {
    apiVersion: 'v1', kind: 'LimitRange', metadata: fullMetadata,
    spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { cpu: '100m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '250m' }, maxLimitRequestRatio: { cpu: '4' } }] },
  },
  {
    apiVersion: 'v1', kind: 'ResourceQuota', metadata: fullMetadata,
    spec: { hard: { pods: '10', 'requests.cpu': '4' }, scopes: ['NotTerminating'] },
    status: { hard: { pods: '10', 'requests.cpu': '4' }, used: { pods: '2', 'requests.cpu': '500m' } },
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
