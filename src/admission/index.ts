// Builds the admission chain the server runs: the enabled plugin names (see
// plugin-names.ts), each plugin made by its factory with its configuration
// from the admission configuration file and what it needs of the server.

import type { ServesVersion } from './webhook/matcher.js';
import { AdmissionChain } from './chain.js';
import { readAdmissionConfiguration } from './config.js';
import type { AdmissionMetrics } from './metrics.js';
import { AdmissionConfigError, enabledPluginNames } from './plugin-names.js';
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
import { NodeRestriction } from './plugins/noderestriction.js';
import { makePodSecurity } from './plugins/podsecurity/index.js';
import { WebhookClient, webhookPlugin } from './webhook/index.js';
import { AlwaysPullImages } from './plugins/alwayspullimages.js';
import { LimitPodHardAntiAffinityTopology } from './plugins/antiaffinity.js';
import { DenyServiceExternalIPs } from './plugins/denyserviceexternalips.js';
import { SecurityContextDeny } from './plugins/securitycontextdeny.js';
import { ExtendedResourceToleration } from './plugins/extendedresourcetoleration.js';
import { PodNodeSelector, nodeSelectorConfig } from './plugins/podnodeselector.js';
import { PodTolerationRestriction, tolerationRestrictionConfig } from './plugins/podtolerationrestriction.js';
import { EventRateLimit, eventLimitsConfig } from './plugins/eventratelimit.js';
import { OwnerReferencesPermissionEnforcement, type KindResources } from './plugins/ownerreferences.js';
import { ImagePolicyWebhook, imagePolicySettings } from './plugins/imagepolicywebhook.js';
import { resourceQuotaPlugin } from './plugins/resourcequota/index.js';
import { resources, resourceType, type ResourceHandle } from '../client/resources.js';
import { ValidatingAdmissionPolicyPlugin } from './policy/plugin.js';
import type { AdmissionListers } from './listers.js';
import { ServiceAccount } from './plugins/serviceaccount.js';
import { LimitRanger } from './plugins/limitranger.js';
import { Priority } from './plugins/priority.js';
import { DefaultTolerationSeconds } from './plugins/defaulttolerationseconds.js';
import { RuntimeClass } from './plugins/runtimeclass.js';
import { DefaultIngressClass, DefaultStorageClass } from './plugins/defaultclass.js';
import { PersistentVolumeClaimResize } from './plugins/pvcresize.js';
import { StorageObjectInUseProtection } from './plugins/storageobjectinuseprotection.js';
import { TaintNodesByCondition } from './plugins/taintnodesbycondition.js';

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
  /** The resources a kind is served as in a group version (owner references name kinds); without it no owner can be found. */
  kindResources?: KindResources;
  /** Which versions the server serves (--runtime-config); webhooks never get an equivalent version turned off. */
  serves?: ServesVersion;
  /** --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds (DefaultTolerationSeconds); 300 each when absent. */
  tolerationSeconds?: { notReady: number; unreachable: number };
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

/** A live read of one object of `handle`'s resource, for a lister's miss; undefined without the server's reader. */
function liveGetter(c: AdmissionContext, handle: ResourceHandle): (namespace: string | undefined, name: string) => Promise<KubeObject | undefined> {
  return async (namespace, name) => c.getObject?.(handle.group, handle.version ?? 'v1', handle.resource, namespace, name);
}

/** A live list of one namespace's objects of `handle`'s resource through the server's own client, for a lister that holds none. */
function liveNamespaceList(c: AdmissionContext, handle: ResourceHandle): (namespace: string) => Promise<KubeObject[]> {
  return async (namespace) => {
    const client = c.listers.writer();
    return (await client.list(resourceType(client, handle), namespace)).items as KubeObject[];
  };
}

const factories = new Map<string, Factory>([
  ['AlwaysAdmit', (c) => new AlwaysAdmit((m) => c.log.warn(m))],
  ['AlwaysDeny', (c) => new AlwaysDeny((m) => c.log.warn(m))],
  ['NamespaceAutoProvision', (c) => new NamespaceAutoProvision(c.getNamespace, c.createNamespace)],
  ['NamespaceExists', (c) => new NamespaceExists(c.getNamespace)],
  ['NamespaceLifecycle', (c) => new NamespaceLifecycle(c.getNamespace, c.listers.lister(resources.namespaces))],
  ['CertificateApproval', (c) => new CertificateApproval(c.authorize)],
  ['CertificateSigning', (c) => new CertificateSigning(c.authorize)],
  ['CertificateSubjectRestriction', () => new CertificateSubjectRestriction()],
  ['DenyEscalatingExec', (c) => new DenyExec('DenyEscalatingExec', c.getPod ?? noPods)],
  ['DenyExecOnPrivileged', (c) => new DenyExec('DenyExecOnPrivileged', c.getPod ?? noPods)],
  ['NodeRestriction', (c) => new NodeRestriction(c.listers.lister(resources.pods), c.listers.lister(resources.nodes), c.getObject)],
  ['PodSecurity', (c, config) => makePodSecurity(c, config)],
  ['ServiceAccount', (c) => new ServiceAccount(c.listers.lister(resources.serviceAccounts), liveGetter(c, resources.serviceAccounts))],
  ['LimitRanger', (c) => new LimitRanger(c.listers.lister(resources.limitRanges), liveNamespaceList(c, resources.limitRanges))],
  ['Priority', (c) => {
    const live = liveGetter(c, resources.priorityClasses);
    return new Priority(c.listers.lister(resources.priorityClasses), (name) => live(undefined, name));
  }],
  ['DefaultTolerationSeconds', (c) => new DefaultTolerationSeconds(c.tolerationSeconds?.notReady ?? 300, c.tolerationSeconds?.unreachable ?? 300)],
  ['RuntimeClass', (c) => {
    const live = liveGetter(c, resources.runtimeClasses);
    return new RuntimeClass(c.listers.lister(resources.runtimeClasses), (name) => live(undefined, name));
  }],
  ['DefaultStorageClass', (c) => new DefaultStorageClass(c.listers.lister(resources.storageClasses))],
  ['DefaultIngressClass', (c) => new DefaultIngressClass(c.listers.lister(resources.ingressClasses))],
  ['PersistentVolumeClaimResize', (c) => new PersistentVolumeClaimResize(c.listers.lister(resources.storageClasses))],
  ['StorageObjectInUseProtection', () => new StorageObjectInUseProtection()],
  ['TaintNodesByCondition', () => new TaintNodesByCondition()],
  ['MutatingAdmissionWebhook', webhookFactory(true)],
  ['ValidatingAdmissionPolicy', (c) => new ValidatingAdmissionPolicyPlugin({ listers: c.listers, getNamespace: c.getNamespace, getObject: c.getObject, authorize: c.authorize, serves: c.serves })],
  ['ValidatingAdmissionWebhook', webhookFactory(false)],
  ['AlwaysPullImages', () => new AlwaysPullImages()],
  ['LimitPodHardAntiAffinityTopology', () => new LimitPodHardAntiAffinityTopology()],
  ['DenyServiceExternalIPs', () => new DenyServiceExternalIPs()],
  ['SecurityContextDeny', () => new SecurityContextDeny()],
  ['ExtendedResourceToleration', () => new ExtendedResourceToleration()],
  ['PodNodeSelector', (c, config) => new PodNodeSelector(c.getNamespace, nodeSelectorConfig(config))],
  ['PodTolerationRestriction', (c, config) => new PodTolerationRestriction(c.getNamespace, tolerationRestrictionConfig(config))],
  ['EventRateLimit', (_c, config) => new EventRateLimit(eventLimitsConfig(config))],
  ['OwnerReferencesPermissionEnforcement', (c) => new OwnerReferencesPermissionEnforcement(c.authorize, c.kindResources)],
  ['ImagePolicyWebhook', async (c, config, client) => new ImagePolicyWebhook(await imagePolicySettings(config, c.serves), client)],
  ['ResourceQuota', (c, config) => resourceQuotaPlugin(c.listers, config)],
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
  const missing = names.filter((name) => !factories.has(name));
  if (missing.length) {
    throw new AdmissionConfigError(`admission plugin${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'have' : 'has'} no implementation in this server: turn ${missing.length > 1 ? 'them' : 'it'} off (--disable-admission-plugins=${missing.join(',')})`);
  }
  const plugins: AdmissionPlugin[] = [...(settings.serverPlugins ?? [])];
  const client = new WebhookClient();
  for (const name of names) {
    const factory = factories.get(name);
    if (factory) plugins.push(await factory(context, configs.get(name), client));
  }
  const chain = new AdmissionChain(plugins, { metrics: context.metrics, log: (m, extra) => context.log.warn(m, extra) });
  return { chain, running: plugins.map((p) => p.name), close: () => client.close() };
}
