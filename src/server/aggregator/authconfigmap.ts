// The `extension-apiserver-authentication` ConfigMap in the system
// namespace: what an aggregated server needs to trust this one, as upstream
// publishes it (the same keys, the lists JSON-encoded): the client CA, and
// the request-header CA, allowed names and header names by which the
// aggregator's proxied requests carry their user. Written at every start.

import { deepEqual } from '../../machinery/equal.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import { ApiCallError, type ApiClient } from '../../client/types.js';
import { resources, resourceType } from '../../client/resources.js';

export interface ExtensionAuthentication {
  clientCaPem: string;
  requestHeaderCaPem: string;
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

/** The header names the aggregator's proxy sends (upstream's), published unless the request-header flags name others. */
export const proxyHeaderDefaults = { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] } as const;

export function extensionAuthenticationData(a: ExtensionAuthentication): Record<string, string> {
  return {
    'client-ca-file': a.clientCaPem,
    'requestheader-client-ca-file': a.requestHeaderCaPem,
    'requestheader-allowed-names': JSON.stringify(a.allowedNames),
    'requestheader-username-headers': JSON.stringify(a.usernameHeaders),
    'requestheader-group-headers': JSON.stringify(a.groupHeaders),
    'requestheader-extra-headers-prefix': JSON.stringify(a.extraHeaderPrefixes),
  };
}

/** Creates or brings up to date the ConfigMap. */
export async function ensureExtensionAuthentication(client: ApiClient, a: ExtensionAuthentication): Promise<void> {
  const type = resourceType(client, resources.configMaps);
  const data = extensionAuthenticationData(a);
  const namespace = vocabulary.systemNamespace;
  const name = vocabulary.extensionApiserverAuthentication;
  const existing = await client.get(type, namespace, name);
  try {
    if (!existing) await client.create(type, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
    else if (!deepEqual(existing.data ?? {}, data)) await client.update(type, namespace, { ...existing, data });
  } catch (e) {
    // Another server wrote it meanwhile: the next start (or the retry of post-start work) looks again.
    if (!(e instanceof ApiCallError && e.code === 409)) throw e;
  }
}
