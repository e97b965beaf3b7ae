// The admission chain the server runs, with what its plugins read of the
// server: namespaces and objects from the watch cache without waiting for it
// (the store on a miss), as upstream's listers; pods from the store; its own
// writes (a namespace auto-provisioned) as the server's user. The plugins
// guard the registry they read through, so the registry is made after them:
// they reach it when a request comes, through `served`.

import type { Logger } from 'pino';
import type { Registry as MetricRegistry } from 'prom-client';
import { AdmissionListers, buildAdmission, type BuiltAdmission } from '../admission/index.js';
import { AdmissionMetrics } from '../admission/metrics.js';
import type { ApiEnablement } from '../api/versioning.js';
import { systemGroups, type UserInfo } from '../machinery/user.js';
import type { Registry } from '../registry/registry.js';
import type { ObjectLookup } from '../registry/lookup.js';
import type { ServerOptions } from '../server/options.js';
import type { AuthorizationParts } from './authorization.js';

/** The server's own identity for writes it makes itself (upstream's loopback user). */
export const apiserverUser: UserInfo = { username: 'system:apiserver', groups: [systemGroups.masters, systemGroups.authenticated] };

/** What admission reads of the server once it is made. */
export interface AdmittedServer {
  registry: Registry;
  lookup: ObjectLookup;
}

export interface AdmissionInputs {
  log: Logger;
  metrics: MetricRegistry;
  listers: AdmissionListers;
  authorization: AuthorizationParts;
  enablement: ApiEnablement;
  /** The server the chain guards; throws before it is made (no request reaches admission before). */
  served(): AdmittedServer;
}

export function serverAdmission(options: ServerOptions, inputs: AdmissionInputs): Promise<BuiltAdmission> {
  const { log, served, enablement, authorization } = inputs;
  return buildAdmission(
    {
      enable: options.enableAdmissionPlugins, disable: options.disableAdmissionPlugins, configFile: options.admissionControlConfigFile,
      // Not a configurable plugin: RBAC's escalation check guards every write of roles and bindings.
      serverPlugins: [authorization.escalation],
    },
    {
      // From the cache without waiting for it (the store on a miss), as upstream's lister; live after a deletion.
      getNamespace: (name, live) => (live ? served().registry.findNamespace(name) : served().lookup.get('', 'v1', 'namespaces', undefined, name)),
      getPod: async (namespace, name) => served().registry.store('', 'v1', 'pods')?.find(namespace, name),
      createNamespace: (name) => served().registry.namespaces().create(undefined, { value: { metadata: { name } } }, { dryRun: false, fieldValidation: 'Strict' }, { warnings: [], user: apiserverUser }),
      log: { warn: (msg, extra) => log.warn(extra ?? {}, msg), info: (msg, extra) => log.info(extra ?? {}, msg) },
      metrics: new AdmissionMetrics(inputs.metrics),
      listers: inputs.listers,
      getObject: (group, version, resource, namespace, name) => served().lookup.get(group, version, resource, namespace, name),
      authorize: (attributes) => authorization.authorizer.authorize(attributes),
      kindResources: (group, version, kind) => served().registry.restObjects().map((r) => r.describe).filter((d) => !d.subresource && d.group === group && d.version === version && d.kind.kind === kind),
      serves: (group, version, resource) => enablement.serves(group, version, resource),
      tolerationSeconds: { notReady: options.defaultNotReadyTolerationSeconds, unreachable: options.defaultUnreachableTolerationSeconds },
    },
  );
}
