// The post-start hooks of every server, in the order they first run: the
// reserved namespaces, the default RBAC policy and the system priority
// classes (the server is not ready without them, as upstream's), then what
// clients find once it is there: how aggregated servers trust this one's
// proxy, and the public cluster-info. Each is written through admission,
// and each tolerates another server on the store doing it at the same time.

import type { Logger } from 'pino';
import { reservedNamespaces } from '../machinery/vocabulary.js';
import { ApiError } from '../machinery/errors.js';
import { joinPem, type KeyMaterial } from '../pki/index.js';
import { frontProxyClientName } from '../pki/key-material.js';
import type { Registry } from '../registry/registry.js';
import { ensureExtensionAuthentication, proxyHeaderDefaults } from '../server/aggregator/authconfigmap.js';
import type { ServerOptions } from '../server/options.js';
import type { InProcessClient } from './inprocess.js';
import type { IdentityFiles } from './identity.js';
import type { PostStartHooks } from './hooks.js';
import { reconcileDefaultPolicy } from './rbacbootstrap.js';
import { ensureSystemPriorityClasses } from './priorityclasses.js';
import { ensureClusterInfo } from './clusterinfo.js';

export interface BootstrapInputs {
  options: ServerOptions;
  log: Logger;
  registry: Registry;
  client: InProcessClient;
  keys: KeyMaterial;
  identityFiles: IdentityFiles;
  /** The CA bundle that verifies the serving certificate, as clients are given it. */
  trustedPem: string;
  /** The server's URL; read only once it listens. */
  url(): string;
}

export function addBootstrapHooks(hooks: PostStartHooks, p: BootstrapInputs): void {
  const { options, client } = p;
  hooks.add({ name: 'reserved-namespaces', failure: 'could not create the reserved namespaces', run: () => ensureReservedNamespaces(p.registry) });
  hooks.add({
    name: 'rbac/bootstrap-roles', failure: 'could not reconcile the default RBAC policy',
    run: () => reconcileDefaultPolicy(client, (msg) => p.log.debug(msg)),
  });
  hooks.add({ name: 'scheduling/bootstrap-system-priority-classes', failure: 'could not create the system priority classes', run: () => ensureSystemPriorityClasses(client) });
  hooks.addUnchecked({
    name: 'extension-apiserver-authentication', failure: 'could not write the extension-apiserver-authentication ConfigMap',
    run: () => ensureExtensionAuthentication(client, {
      clientCaPem: p.keys.clientCaPem,
      requestHeaderCaPem: joinPem([p.keys.frontProxyCaCertPem, ...(p.identityFiles.requestHeaderCaPem ? [p.identityFiles.requestHeaderCaPem] : [])]),
      allowedNames: options.requestheaderAllowedNames?.length ? options.requestheaderAllowedNames : (options.proxyClientCertFile ? [] : [frontProxyClientName]),
      usernameHeaders: options.requestheaderUsernameHeaders?.length ? options.requestheaderUsernameHeaders : proxyHeaderDefaults.usernameHeaders,
      groupHeaders: options.requestheaderGroupHeaders?.length ? options.requestheaderGroupHeaders : proxyHeaderDefaults.groupHeaders,
      extraHeaderPrefixes: options.requestheaderExtraHeadersPrefix?.length ? options.requestheaderExtraHeadersPrefix : proxyHeaderDefaults.extraHeaderPrefixes,
    }),
  });
  hooks.addUnchecked({ name: 'cluster-info', failure: 'could not create the cluster-info ConfigMap', run: () => ensureClusterInfo(client, p.url(), p.trustedPem) });
}

/** Creates the reserved namespaces that do not exist yet. */
async function ensureReservedNamespaces(registry: Registry): Promise<void> {
  const namespaces = registry.namespaces();
  for (const name of reservedNamespaces) {
    if (await namespaces.find(undefined, name)) continue;
    try {
      await namespaces.create(undefined, { value: { metadata: { name } } }, { dryRun: false, fieldValidation: 'Strict' }, { warnings: [] });
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}
