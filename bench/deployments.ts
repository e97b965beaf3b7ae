// What a Deployment costs beside a ConfigMap: creates, gets and lists of
// Deployments whose template is the pods bench's Pod (about 4 KiB stored,
// defaulted and validated with the pod template's rules), beside ConfigMaps
// of the same stored size, measured as bench/pods.ts measures Pods.

import { runAlone } from './session.js';
import { benchBesideConfigMap, type PodsBenchOptions } from './pods.js';
import type { Row } from './table.js';

export function benchDeployments(opts: PodsBenchOptions): Promise<Row[]> {
  return benchBesideConfigMap({
    label: 'Deployment', shape: 'a two-container template', create: 'create-deployment',
    collection: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
  }, opts);
}

// Alone: node dist/bench/deployments.js [--quick]
await runAlone(import.meta.url, benchDeployments);
