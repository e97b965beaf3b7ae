// A pod as the server stores it after cluster-sim creates one (managed
// fields, defaults, status), for benches that fill a store or a cache
// without going through the API.

import { join } from 'node:path';
import type { Backend } from '../src/storage/backend.js';
import { SqliteBackend } from '../src/storage/sqlite/store.js';
import { fmtInt } from './stats.js';

/**
 * Writes `pods` pods (pod-000000…, pod i on node `nodeName(i % nodes)`)
 * straight into a store: the SQLite store of a data dir whose server is
 * stopped (its group commit makes each batch of concurrent creates one
 * transaction), or a Backend given (an etcd the servers share).
 */
export async function storePods(into: string | Backend, pods: number, nodes: number, nodeName: (i: number) => string, namespace: string, progress: (m: string) => void): Promise<void> {
  const store = typeof into === 'string' ? new SqliteBackend(join(into, 'store.db')) : into;
  try {
    const batch = 5_000;
    for (let from = 0; from < pods; from += batch) {
      const writes: Promise<unknown>[] = [];
      for (let i = from; i < Math.min(pods, from + batch); i++) {
        writes.push(store.create(`/registry/pods/${namespace}/pod-${String(i).padStart(6, '0')}`, storedPod(i, nodeName(i % nodes), namespace)));
      }
      await Promise.all(writes);
      if ((from + batch) % 50_000 === 0) progress(`${fmtInt(from + batch)} pods stored`);
    }
  } finally {
    if (typeof into === 'string') await store.close();
  }
}

/** The stored bytes of pod `i` (pod-000000…) in namespace `namespace`, bound to `node`. */
export function storedPod(i: number, node: string, namespace = 'sim-pods'): Buffer {
  const name = `pod-${String(i).padStart(6, '0')}`;
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace, uid: `4f6c2a7e-0c1e-4d2b-9a51-${String(i).padStart(12, '0')}`,
      creationTimestamp: '2026-12-07T19:12:56Z', labels: { app: 'sim', tier: i % 2 ? 'web' : 'db' },
      managedFields: [{
        manager: 'node-fetch', operation: 'Update', apiVersion: 'v1', time: '2026-12-07T19:12:56Z', fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } }, 'f:resources': { '.': {}, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } } } }, 'f:nodeName': {} } },
      }],
    },
    spec: {
      containers: [{ name: 'main', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080, protocol: 'TCP' }], resources: { requests: { cpu: '100m', memory: '64Mi' } }, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', nodeName: node,
      securityContext: {}, schedulerName: 'default-scheduler', enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority', priority: 0,
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: { phase: 'Pending', qosClass: 'Burstable' },
  };
  return Buffer.from(JSON.stringify(pod));
}
