// Builds the admission chain the server runs: the enabled plugin names (see
// plugin-names.ts), each plugin made by its factory with its configuration
// from the admission configuration file and what it needs of the server.

import type { ServesVersion } from './webhook/matcher.js';
import { AdmissionChain } from './chain.js';
import { readAdmissionConfiguration } from './config.js';
import type { AdmissionMetrics } from './metrics.js';
import { enabledPluginNames } from './plugin-names.js';
import type { AdmissionPlugin } from './types.js';
import type { KubeObject } from '../api/kind.js';
import { AlwaysAdmit } from './plugins/alwaysadmit.js';
import { AlwaysDeny } from './plugins/alwaysdeny.js';
import { NamespaceAutoProvision, type NamespaceCreator } from './plugins/namespaceautoprovision.js';
import { NamespaceExists } from './plugins/namespaceexists.js';
import { NamespaceLifecycle, type NamespaceGetter } from './plugins/namespacelifecycle.js';
import { CertificateApproval } from './plugins/certificateapproval.js';
import { CertificateSigning } from './plugins/certificatesigning.js';
import { CertificateSubjectRestriction } from './plugins/certificatesubjectrestriction.js';
import type { Authorize } from './plugins/signerauthorization.js';
import { DenyExec, type PodGetter } from './plugins/denyexec.js';
import { WebhookClient, webhookPlugin } from './webhook/index.js';
import { ValidatingAdmissionPolicyPlugin } from './policy/plugin.js';
import { resources } from '../client/resources.js';
import type { AdmissionListers } from './listers.js';

export { AdmissionConfigError } from './plugin-names.js';
export { AdmissionListers, type Lister } from './listers.js';

export interface AdmissionLog {
  warn(message: string, extra?: object): void;
  info(message: string, extra?: object): void;
}

/** What the plugins need of the server they guard. */
export interface AdmissionContext {
  /** A namespace by name from the server's cache, or undefined. */
  getNamespace: NamespaceGetter;
  /** A pod by namespace and name (DenyEscalatingExec, DenyExecOnPrivileged); without it those plugins refuse. */
  getPod?: PodGetter;
  /** Creates a namespace as the server itself. */
  createNamespace: NamespaceCreator;
  log: AdmissionLog;
  metrics?: AdmissionMetrics;
  /** Informer-fed listers of what plugins read per request (the webhook configurations among them); the server starts them before it serves. */
  listers: AdmissionListers;
  /**
   * One object read live, from the watch cache and from the store when the
   * cache does not hold it yet (an object created a moment ago), as upstream's
   * plugins fall back to a live read when their lister misses.
   */
  getObject?(group: string, version: string, resource: string, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  /** The server's authorizer, for plugins that ask about the requester (approve and sign on signers, match conditions' `authorizer`); without it they refuse. */
  authorize?: Authorize;
  /** Which versions the server serves (--runtime-config); webhooks never get an equivalent version turned off. */
  serves?: ServesVersion;
}

export interface AdmissionSettings {
  enable: readonly string[];
  disable: readonly string[];
  configFile?: string;
  /** Checks that are part of the server, not plugins one turns off (RBAC's escalation check); they run first. */
  serverPlugins?: readonly AdmissionPlugin[];
}

type Factory = (context: AdmissionContext, config: Record<string, unknown> | undefined, client: WebhookClient) => AdmissionPlugin | Promise<AdmissionPlugin>;

const noPods: PodGetter = async () => undefined;

function webhookFactory(mutating: boolean): Factory {
  return (c, config, client) => webhookPlugin(mutating, config, {
    feed: c.listers.lister(mutating ? resources.mutatingWebhookConfigurations : resources.validatingWebhookConfigurations),
    getNamespace: c.getNamespace, client, metrics: c.metrics, warn: (m, extra) => c.log.warn(m, extra), serves: c.serves, authorize: c.authorize,
  });
}

const factories = new Map<string, Factory>([
  ['AlwaysAdmit', (c) => new AlwaysAdmit((m) => c.log.warn(m))],
  ['AlwaysDeny', (c) => new AlwaysDeny((m) => c.log.warn(m))],
  ['NamespaceAutoProvision', (c) => new NamespaceAutoProvision(c.getNamespace, c.createNamespace)],
  ['NamespaceExists', (c) => new NamespaceExists(c.getNamespace)],
  ['NamespaceLifecycle', (c) => new NamespaceLifecycle(c.getNamespace)],
  ['CertificateApproval', (c) => new CertificateApproval(c.authorize)],
  ['CertificateSigning', (c) => new CertificateSigning(c.authorize)],
  ['CertificateSubjectRestriction', () => new CertificateSubjectRestriction()],
  ['DenyEscalatingExec', (c) => new DenyExec('DenyEscalatingExec', c.getPod ?? noPods)],
  ['DenyExecOnPrivileged', (c) => new DenyExec('DenyExecOnPrivileged', c.getPod ?? noPods)],
  ['MutatingAdmissionWebhook', webhookFactory(true)],
  ['ValidatingAdmissionPolicy', (c) => new ValidatingAdmissionPolicyPlugin({ listers: c.listers, getNamespace: c.getNamespace, getObject: c.getObject, authorize: c.authorize, serves: c.serves })],
  ['ValidatingAdmissionWebhook', webhookFactory(false)],
]);

export interface BuiltAdmission {
  chain: AdmissionChain;
  /** Names of the plugins that run, in order. */
  running: string[];
  /** Closes the connections kept to webhooks. */
  close(): void;
}

/** The chain for these settings; throws AdmissionConfigError for bad names or configuration. */
export async function buildAdmission(settings: AdmissionSettings, context: AdmissionContext): Promise<BuiltAdmission> {
  const names = enabledPluginNames(settings.enable, settings.disable);
  const configs = await readAdmissionConfiguration(settings.configFile);
  for (const name of configs.keys()) {
    if (!names.includes(name)) context.log.warn(`the admission configuration configures plugin ${name}, which is not enabled; its configuration is ignored`);
  }
  const plugins: AdmissionPlugin[] = [...(settings.serverPlugins ?? [])];
  const absent: string[] = [];
  const client = new WebhookClient();
  for (const name of names) {
    const factory = factories.get(name);
    if (!factory) {
      absent.push(name);
      continue;
    }
    plugins.push(await factory(context, configs.get(name), client));
  }
  const explicit = absent.filter((name) => settings.enable.includes(name));
  if (explicit.length) {
    context.log.warn(`admission plugins ${explicit.join(', ')} act on kinds this server does not serve yet; they have no effect`);
  }
  const chain = new AdmissionChain(plugins, { metrics: context.metrics, log: (m, extra) => context.log.warn(m, extra) });
  return { chain, running: plugins.map((p) => p.name), close: () => client.close() };
}
