// Where an aggregated server is and how to reach it. An APIService names a
// Service; upstream dials the Service's cluster IP (or, with
// --enable-aggregator-routing, one of its endpoints). There is no service
// network here, and Endpoints may not hold loopback addresses, so a server
// on this machine is registered through an ExternalName Service naming
// `localhost` (upstream's resolver dials an ExternalName Service's name at
// the APIService's port). Only addresses in 127.0.0.0/8 are ever dialed:
// any other answer is an unreachable backend, and nothing is connected to.

import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import type { KubeObject } from '../../api/kind.js';

/** Why a backend cannot be reached now, in the terms of upstream's Available condition. */
export class BackendUnavailable extends Error {
  override name = 'BackendUnavailable';
  constructor(readonly reason: 'ServiceNotFound' | 'ServiceAccessError' | 'MissingEndpoints' | 'FailedDiscoveryCheck', message: string) {
    super(message);
  }
}

/** The Services and Endpoints an informer holds. */
export interface ServiceObjects {
  service(namespace: string, name: string): KubeObject | undefined;
  endpoints(namespace: string, name: string): KubeObject | undefined;
}

/** How to dial a backend: a loopback address, its port, and the name its certificate must carry. */
export interface BackendTarget {
  host: string;
  port: number;
  /** `<service>.<namespace>.svc`, as upstream verifies it. */
  serverName: string;
}

const isLoopback = (ip: string) => isIPv4(ip) && ip.startsWith('127.');

/** A name resolved to addresses, every one of them loopback, or why not. */
async function loopbackAddressOf(host: string, describe: string): Promise<string> {
  if (isIPv4(host)) {
    if (!isLoopback(host)) throw new BackendUnavailable('ServiceAccessError', `${describe}: ${host} is not in 127.0.0.0/8, and only loopback addresses are dialed here`);
    return host;
  }
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, family: 4 });
  } catch (e) {
    throw new BackendUnavailable('ServiceAccessError', `${describe}: cannot resolve ${JSON.stringify(host)}: ${(e as Error).message}`);
  }
  const outside = addresses.find((a) => !isLoopback(a.address));
  if (addresses.length === 0 || outside) {
    throw new BackendUnavailable('ServiceAccessError', `${describe}: ${host} resolves to ${outside?.address ?? 'nothing'}, and only addresses in 127.0.0.0/8 are dialed here`);
  }
  return addresses[0]!.address;
}

/**
 * The target of an APIService's Service, as upstream's service resolvers
 * find it (the ExternalName name, or with `routeToEndpoints` an endpoint
 * address), refused unless it is loopback.
 */
export async function resolveBackend(apiService: KubeObject, objects: ServiceObjects, routeToEndpoints: boolean): Promise<BackendTarget> {
  const ref = apiService.spec?.service ?? {};
  const namespace = String(ref.namespace ?? '');
  const name = String(ref.name ?? '');
  const port = Number(ref.port ?? 443);
  const serverName = `${name}.${namespace}.svc`;
  const service = objects.service(namespace, name);
  if (!service) throw new BackendUnavailable('ServiceNotFound', `service/${name} in ${JSON.stringify(namespace)} is not present`);
  const describe = `service/${name} in ${JSON.stringify(namespace)}`;
  if (service.spec?.type === 'ExternalName') {
    return { host: await loopbackAddressOf(String(service.spec.externalName ?? ''), describe), port, serverName };
  }
  const servicePort = (Array.isArray(service.spec?.ports) ? service.spec.ports : []).find((p: KubeObject) => p?.port === port);
  if (!servicePort) throw new BackendUnavailable('ServiceAccessError', `service/${name} in ${JSON.stringify(namespace)} is not listening on port ${port}`);
  if (!routeToEndpoints) {
    const ip = String(service.spec?.clusterIP ?? '');
    return { host: await loopbackAddressOf(ip, describe), port, serverName };
  }
  const endpoints = objects.endpoints(namespace, name);
  const portName = servicePort.name ?? '';
  for (const subset of Array.isArray(endpoints?.subsets) ? endpoints!.subsets : []) {
    const found = (Array.isArray(subset?.ports) ? subset.ports : []).find((p: KubeObject) => (p?.name ?? '') === portName);
    const address = (Array.isArray(subset?.addresses) ? subset.addresses : [])[0]?.ip;
    if (found && address) return { host: await loopbackAddressOf(String(address), describe), port: Number(found.port), serverName };
  }
  throw new BackendUnavailable('MissingEndpoints', `endpoints for service/${name} in ${JSON.stringify(namespace)} have no addresses with port name ${JSON.stringify(portName)}`);
}
