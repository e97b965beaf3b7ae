// The EndpointSlice beside the product Service's Endpoints, as upstream's
// EndpointsAdapter writes the `kubernetes` Service's one: named as the
// Service, labelled with the service-name label only, made from the first
// subset of the Endpoints (upstream's servers share one port, so one subset
// holds them all), IPv6 when every address is IPv6 and IPv4 otherwise, each
// address a ready endpoint, and the Endpoints' ports. Written when it differs
// in endpoints, ports or labels; a slice of the other family is replaced.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import { resources, resourceType } from '../client/resources.js';
import { deepEqual } from '../machinery/equal.js';
import { upstreamCompat, vocabulary } from '../machinery/vocabulary.js';
import { isIP } from 'node:net';

type Obj = Record<string, any>;

/** The slice upstream derives from `endpoints` (a v1 Endpoints object). */
export function sliceFromEndpoints(endpoints: Obj): Obj {
  const subset: Obj | undefined = (endpoints.subsets ?? [])[0];
  const ready: Obj[] = subset?.addresses ?? [];
  const notReady: Obj[] = subset?.notReadyAddresses ?? [];
  const all = [...ready, ...notReady];
  const v6 = all.length > 0 && all.every((a) => isIP(String(a.ip)) === 6);
  const endpointOf = (a: Obj, isReady: boolean): Obj => ({
    addresses: [a.ip], conditions: { ready: isReady },
    ...(a.targetRef ? { targetRef: a.targetRef } : {}), ...(a.nodeName ? { nodeName: a.nodeName } : {}),
  });
  const sameFamily = (a: Obj) => (isIP(String(a.ip)) === 6) === v6;
  return {
    apiVersion: `${vocabulary.endpointDiscoveryGroup}/v1`, kind: 'EndpointSlice',
    metadata: { name: endpoints.metadata.name, namespace: endpoints.metadata.namespace, labels: { [vocabulary.serviceNameLabel]: endpoints.metadata.name, [upstreamCompat.serviceNameLabel]: endpoints.metadata.name } },
    addressType: v6 ? 'IPv6' : 'IPv4',
    endpoints: [...ready.filter(sameFamily).map((a) => endpointOf(a, true)), ...notReady.filter(sameFamily).map((a) => endpointOf(a, false))],
    ports: ((subset?.ports ?? []) as Obj[]).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
  };
}

/** The served EndpointSlice type, or none when the discovery group is switched off. */
function sliceType(client: ApiClient): ResourceType | undefined {
  try {
    return resourceType(client, resources.endpointSlices);
  } catch {
    return undefined;
  }
}

/** Makes or rewrites the slice of `endpoints` as upstream's EnsureEndpointSliceFromEndpoints does. */
export async function ensureSliceFromEndpoints(client: ApiClient, endpoints: Obj): Promise<void> {
  const type = sliceType(client);
  if (!type) return;
  const want = sliceFromEndpoints(endpoints);
  const { name, namespace } = want.metadata;
  const create = async () => {
    try {
      await client.create(type, namespace, want as ApiObject);
    } catch (e) {
      if (!isConflict(e)) throw e; // another server made it: the next round compares it
    }
  };
  const current = await client.get(type, namespace, name);
  if (!current) return create();
  if (current.addressType !== want.addressType) {
    // The address type cannot change: the slice is made anew.
    await client.delete(type, namespace, name).catch((e) => { if (!isNotFound(e)) throw e; });
    return create();
  }
  if (deepEqual(current.endpoints ?? [], want.endpoints) && deepEqual(current.ports ?? [], want.ports) && deepEqual(current.metadata?.labels ?? {}, want.metadata.labels)) return;
  try {
    await client.update(type, namespace, { ...current, metadata: { ...current.metadata, labels: want.metadata.labels }, endpoints: want.endpoints, ports: want.ports } as ApiObject);
  } catch (e) {
    if (!isConflict(e) && !isNotFound(e)) throw e; // another server wrote it since: the next round compares again
  }
}
