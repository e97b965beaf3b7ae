// The public cluster-info ConfigMap: the server's address and the CA that
// verifies it, as a kubeconfig (key `kubeconfig`) that anonymous users may
// read and the bootstrap signer signs. Created at start when absent; an
// existing one is left as it is (an operator may have pointed it at a load
// balancer). A refused write is tried again until it succeeds or the server
// stops, without holding up readiness.

import YAML from 'yaml';
import { clusterInfo } from '../machinery/bootstraptoken.js';
import { ApiCallError, type ApiClient } from '../client/types.js';
import { resources, resourceType } from '../client/resources.js';

/** The kubeconfig a joining client starts from: one unnamed cluster, no users, as upstream's. */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: '', cluster: { 'certificate-authority-data': Buffer.from(caPem, 'utf8').toString('base64'), server } }],
    contexts: null,
    'current-context': '',
    preferences: {},
    users: null,
  });
}

/** Creates the public cluster-info ConfigMap unless it exists. */
export async function ensureClusterInfo(client: ApiClient, server: string, caPem: string): Promise<void> {
  const type = resourceType(client, resources.configMaps);
  if (await client.get(type, clusterInfo.namespace, clusterInfo.name)) return;
  try {
    await client.create(type, clusterInfo.namespace, {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: clusterInfo.name },
      data: { [clusterInfo.kubeconfigKey]: clusterInfoKubeconfig(server, caPem) },
    });
  } catch (e) {
    if (!(e instanceof ApiCallError && e.code === 409)) throw e;
  }
}
