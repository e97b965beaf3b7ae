// What the registry serves beyond the catalog's plain stores, made once the
// registry and the shared informers exist and before the first request: what
// admission plugins read (webhook configurations among it), the custom
// resources every server on the store serves, the group versions APIServices
// hand to other servers, RBAC's index and the access reviews, the
// authenticators and TokenReview, and the REST objects with logic of their
// own (pods, nodes, eviction, services with their address allocation).

import type { Logger } from 'pino';
import type { KeyMaterial } from '../pki/index.js';
import { product } from '../machinery/vocabulary.js';
import type { Backend } from '../storage/index.js';
import type { Registry } from '../registry/registry.js';
import type { ObjectLookup } from '../registry/lookup.js';
import { podRests } from '../registry/pods.js';
import { nodeRests } from '../registry/nodes.js';
import { componentStatusRest } from '../registry/componentstatuses.js';
import { evictionRest } from '../registry/eviction.js';
import { serveServices } from '../registry/services.js';
import { parseNodePortRange, parseServiceIPRanges, serviceAllocation } from '../registry/allocation/index.js';
import { validateClusterIPs } from '../api/core/v1/service.js';
import type { AdmissionListers } from '../admission/index.js';
import type { InformerFactory } from '../client/informer.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import { Aggregator } from '../server/aggregator/index.js';
import type { ServerOptions } from '../server/options.js';
import type { InProcessClient } from './inprocess.js';
import { CustomResourceServing } from './customresources.js';
import { ConversionWebhooks } from './conversionwebhook.js';
import type { AuthorizationParts } from './authorization.js';
import { buildAuthentication, serveAuthentication, type IdentityFiles, type TokenSigners } from './identity.js';
import type { Closers } from './closers.js';

export interface ServingInputs {
  options: ServerOptions;
  log: Logger;
  closers: Closers;
  registry: Registry;
  /** The store as the server uses it (timed). */
  store: Backend;
  lookup: ObjectLookup;
  informers: InformerFactory;
  client: InProcessClient;
  admissionListers: AdmissionListers;
  authorization: AuthorizationParts;
  identityFiles: IdentityFiles;
  keys: KeyMaterial;
  signers: TokenSigners;
}

export interface Serving {
  aggregator: Aggregator;
  authenticator: UnionAuthenticator;
}

export async function serveApis(p: ServingInputs): Promise<Serving> {
  const { options, log, closers, registry, informers, client } = p;
  const warn = (msg: string, extra?: object) => log.warn(extra ?? {}, msg);
  closers.add(() => p.admissionListers.stop());
  await p.admissionListers.start(informers, client);
  const conversionWebhooks = new ConversionWebhooks();
  closers.add(() => conversionWebhooks.close());
  const customResources = new CustomResourceServing(registry, client.as(`${product.name}-apiextensions`), warn, (crd) => conversionWebhooks.conversionFor(crd));
  closers.add(() => customResources.stop());
  await customResources.start(informers);
  const aggregator = new Aggregator({
    identity: { certPem: p.keys.proxyClientCertPem, keyPem: p.keys.proxyClientKeyPem },
    routeToEndpoints: options.enableAggregatorRouting,
    servedHere: (group, version) => registry.restObjectsOf(group, version).length > 0,
    log: warn,
  });
  closers.add(() => aggregator.stop());
  await aggregator.start(informers, client.as(`${product.name}-aggregator`));
  closers.add(() => p.authorization.stop());
  await p.authorization.start(registry, informers, client);
  const identity = buildAuthentication(options, p.identityFiles, {
    authorizationModes: options.authorizationMode,
    serviceAccountPublicKeyPems: p.keys.serviceAccountPublicKeyPems,
    objects: { get: (resource, namespace, name) => p.lookup.find('', 'v1', resource, namespace, name) },
    clientCaPem: p.keys.clientCaPem,
  });
  serveAuthentication(registry, options, identity, p.signers);
  for (const rest of [...podRests(registry), ...nodeRests(registry), componentStatusRest(p.store)]) registry.addRest(rest);
  const eviction = evictionRest(registry);
  if (eviction) registry.addRest(eviction);
  const stopServiceRepairs = await serveServices(registry,
    serviceAllocation(p.store, parseServiceIPRanges(options.serviceClusterIpRange), parseNodePortRange(options.serviceNodePortRange), validateClusterIPs), log);
  closers.add(stopServiceRepairs);
  return { aggregator, authenticator: identity.authenticator };
}
