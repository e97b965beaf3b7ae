// The product's vocabulary: every name that carries the product's name is built
// here, so nothing else in the tree spells the domain out.

import { ownValue } from './ownkeys.js';

export const product = {
  name: 'plat',
  /** Domain under which API groups, annotations and labels live. */
  domain: 'plat.io',
  /** Prefix of environment variables read by clients and plugins. */
  envPrefix: 'PLAT',
} as const;

/** `authentication` -> `authentication.plat.io`. */
export function productGroup(prefix: string): string {
  return `${prefix}.${product.domain}`;
}

/** `service-account.name` -> `plat.io/service-account.name`. */
export function productKey(name: string): string {
  return `${product.domain}/${name}`;
}

export const vocabulary = {
  metaGroup: productGroup('meta'),
  authenticationGroup: productGroup('authentication'),
  authorizationGroup: productGroup('authorization'),
  /** Audit Policy (read from a file) and Event (written to the audit log). */
  auditGroup: productGroup('audit'),
  rbacGroup: productGroup('rbac.authorization'),
  /** apiVersion group of ABAC policy lines. */
  abacGroup: productGroup('abac.authorization'),
  /** A default-policy object the server may reconcile at start unless this annotation says "false". */
  rbacAutoupdateAnnotation: `${productGroup('rbac.authorization')}/autoupdate`,
  /** Prefix of the labels that aggregate a ClusterRole into admin, edit and view: `<prefix>admin`. */
  rbacAggregateToLabelPrefix: `${productGroup('rbac.authorization')}/aggregate-to-`,
  /** Label of the objects of the default policy (value rbac-defaults). */
  bootstrappingLabel: productKey('bootstrapping'),
  certificatesGroup: productGroup('certificates'),
  admissionRegistrationGroup: productGroup('admissionregistration'),
  apiextensionsGroup: productGroup('apiextensions'),
  /** APIServices: which server answers a group version (upstream apiregistration.k8s.io). */
  apiregistrationGroup: productGroup('apiregistration'),
  /** Label of the local APIServices the server keeps itself (upstream kube-aggregator.kubernetes.io/automanaged). */
  apiServiceAutomanagedLabel: `kube-aggregator.${product.domain}/automanaged`,
  /** The ConfigMap in the system namespace telling aggregated servers how to trust this one's proxy (same name upstream). */
  extensionApiserverAuthentication: 'extension-apiserver-authentication',
  /** The approval a definition in a protected group needs (upstream api-approved.kubernetes.io). */
  apiApprovedAnnotation: `api-approved.${product.domain}`,
  eventsGroup: productGroup('events'),
  /** Aggregated discovery documents (APIGroupDiscoveryList). */
  discoveryGroup: productGroup('apidiscovery'),
  coordinationGroup: productGroup('coordination'),
  networkingGroup: productGroup('networking'),
  /** EndpointSlices (not to be confused with `discoveryGroup`, aggregated API discovery). */
  endpointDiscoveryGroup: productGroup('discovery'),
  storageGroup: productGroup('storage'),
  schedulingGroup: productGroup('scheduling'),
  nodeGroup: productGroup('node'),
  /** Label naming the Service an EndpointSlice belongs to (upstream kubernetes.io/service-name). */
  serviceNameLabel: productKey('service-name'),
  /** Label naming who manages an EndpointSlice (upstream endpointslice.kubernetes.io/managed-by), and the controller's value. */
  endpointSliceManagedByLabel: `endpointslice.${product.domain}/managed-by`,
  endpointSliceControllerName: `endpointslice-controller.${product.domain}`,
  /** Label of an Endpoints no mirroring may copy into slices (upstream endpointslice.kubernetes.io/skip-mirror): the product Service's, whose slice the API server writes. */
  endpointSliceSkipMirrorLabel: `endpointslice.${product.domain}/skip-mirror`,
  /** Label of the Endpoints and EndpointSlices of a headless Service (upstream service.kubernetes.io/headless). */
  headlessServiceLabel: `service.${product.domain}/headless`,
  /** When the pod or service change that last changed an Endpoints or EndpointSlice happened (upstream endpoints.kubernetes.io/last-change-trigger-time). */
  lastChangeTriggerTimeAnnotation: `endpoints.${product.domain}/last-change-trigger-time`,
  /** Set to `truncated` on Endpoints cut to 1000 addresses (upstream endpoints.kubernetes.io/over-capacity). */
  endpointsOverCapacityAnnotation: `endpoints.${product.domain}/over-capacity`,
  /** The StorageClass chosen for claims that name none (upstream storageclass.kubernetes.io/is-default-class). */
  defaultStorageClassAnnotation: `storageclass.${product.domain}/is-default-class`,
  /** Label naming the kind of server an identity lease stands for (upstream apiserver.kubernetes.io/identity). */
  apiserverIdentityLabel: `apiserver.${product.domain}/identity`,
  hostnameLabel: productKey('hostname'),
  /** The namespace of the node agents' Leases (upstream kube-node-lease). */
  nodeLeaseNamespace: `${product.name}-node-lease`,
  /** The annotation of a pod a node agent created from its own files (upstream kubernetes.io/config.mirror). */
  mirrorPodAnnotation: productKey('config.mirror'),
  /** Labels under this domain (and its subdomains) a node agent may never set on its Node (upstream node-restriction.kubernetes.io). */
  nodeRestrictionLabelDomain: `node-restriction.${product.domain}`,
  /** Prefix of the labels that give a Node a role (upstream node-role.kubernetes.io/<role>): the printer's ROLES column. */
  nodeRoleLabelPrefix: `node-role.${product.domain}/`,
  /** The taint that lets the pod garbage collector remove the terminating pods of a node that is down (upstream node.kubernetes.io/out-of-service). */
  outOfServiceTaint: `node.${product.domain}/out-of-service`,
  /** The taints of a node not ready and of one unreachable (upstream node.kubernetes.io/not-ready, /unreachable). */
  notReadyTaint: `node.${product.domain}/not-ready`,
  unreachableTaint: `node.${product.domain}/unreachable`,
  /** The finalizers that keep a claim in use and a bound volume (upstream kubernetes.io/pvc-protection, /pv-protection). */
  pvcProtectionFinalizer: productKey('pvc-protection'),
  pvProtectionFinalizer: productKey('pv-protection'),
  /** The pod annotation saying which resources LimitRanger defaulted (upstream kubernetes.io/limit-ranger). */
  limitRangerAnnotation: productKey('limit-ranger'),
  /** The IngressClass chosen for ingresses that name none (upstream ingressclass.kubernetes.io/is-default-class). */
  defaultIngressClassAnnotation: `ingressclass.${product.domain}/is-default-class`,
  /** Where a pod's containers find their service account's token (upstream /var/run/secrets/kubernetes.io/serviceaccount). */
  serviceAccountMountPath: `/var/run/secrets/${product.domain}/serviceaccount`,
  /** Prefix of the projected token volume's name (upstream kube-api-access-). */
  apiAccessVolumePrefix: `${product.name}-api-access-`,
  /** The older role label whose value is the role (upstream kubernetes.io/role). */
  legacyNodeRoleLabel: productKey('role'),
  /** AdmissionReview, the body of webhook calls. */
  admissionGroup: productGroup('admission'),
  /** Server configuration files (AdmissionConfiguration, WebhookAdmissionConfiguration). */
  apiserverConfigGroup: productGroup('apiserver.config'),
  /** Audit annotations of mutating webhook calls: `<prefix>round_<r>_index_<i>`. */
  mutationAnnotationPrefix: `${productGroup('mutation.webhook.admission')}/`,
  patchAnnotationPrefix: `${productGroup('patch.webhook.admission')}/`,
  /** Audit annotation prefixes of webhooks that failed open (mutating, validating). */
  mutationFailedOpenAnnotationPrefix: `failed-open.${productGroup('mutation.webhook.admission')}/`,
  validationFailedOpenAnnotationPrefix: `failed-open.${productGroup('validating.webhook.admission')}/`,
  protobufMediaType: `application/vnd.${product.name}.protobuf`,
  execInfoEnv: `${product.envPrefix}_EXEC_INFO`,
  /** The finalizer the namespace controller holds in `spec.finalizers`. */
  namespaceFinalizer: product.name,
  /** Label every namespace carries with its own name. */
  namespaceNameLabel: productKey('metadata.name'),
  serviceAccountNameAnnotation: productKey('service-account.name'),
  /** A ServiceAccount annotation (`true`): its pods may use only the secrets it lists (upstream kubernetes.io/enforce-mountable-secrets, deprecated there). */
  enforceMountableSecretsAnnotation: productKey('enforce-mountable-secrets'),
  serviceAccountUidAnnotation: productKey('service-account.uid'),
  serviceAccountTokenSecretType: productKey('service-account-token'),
  dockercfgSecretType: productKey('dockercfg'),
  dockerConfigJsonSecretType: productKey('dockerconfigjson'),
  basicAuthSecretType: productKey('basic-auth'),
  sshAuthSecretType: productKey('ssh-auth'),
  tlsSecretType: productKey('tls'),
  bootstrapTokenSecretType: `bootstrap.${product.domain}/token`,
  /** The built-in certificate signers. */
  apiserverClientSigner: productKey('apiserver-client'),
  apiserverClientNodeagentSigner: productKey('apiserver-client-nodeagent'),
  nodeagentServingSigner: productKey('nodeagent-serving'),
  legacyUnknownSigner: productKey('legacy-unknown'),
  /** Labels a Job's pods and selector carry (upstream batch.kubernetes.io/job-name and /controller-uid). */
  jobNameLabel: `${productGroup('batch')}/job-name`,
  jobControllerUidLabel: `${productGroup('batch')}/controller-uid`,
  /** Annotations keeping what autoscaling/v1 HorizontalPodAutoscalers cannot say (upstream autoscaling.alpha.kubernetes.io/...). */
  autoscalingAnnotationPrefix: `${productGroup('autoscaling.alpha')}/`,
  systemNamespace: `${product.name}-system`,
  publicNamespace: `${product.name}-public`,
  defaultNamespace: 'default',
  rootCaConfigMap: `${product.name}-root-ca.crt`,
  /** OpenAPI extension prefix for merge markers and kind identity. */
  openapiExtensionPrefix: `x-${product.name}-`,
} as const;

export const reservedNamespaces: readonly string[] = [
  vocabulary.defaultNamespace,
  vocabulary.systemNamespace,
  vocabulary.publicNamespace,
];

/**
 * Names the unmodified upstream kubectl looks for in what we serve. They are
 * client wire compatibility, not product names: kubectl finds a kind's schema
 * in OpenAPI by `x-kubernetes-group-version-kind` and asks for Tables in the
 * upstream meta group. We honour them beside our own names.
 */
export const upstreamCompat = {
  groupVersionKindExtension: 'x-kubernetes-group-version-kind',
  /** Prefix of the schema markers definitions written for the upstream server carry (`x-kubernetes-list-type`): read as ours. */
  openapiExtensionPrefix: 'x-kubernetes-',
  metaGroup: 'meta.k8s.io',
  discoveryGroup: 'apidiscovery.k8s.io',
  /** The group ConversionReviews are sent in: conversion webhooks decode them with upstream's types. */
  conversionReviewGroup: 'apiextensions.k8s.io',
  /** The approval annotation definitions written for the upstream server carry, accepted as ours. */
  apiApprovedAnnotation: 'api-approved.kubernetes.io',
  /** Domains whose groups (and their subdomains) are the community's: a definition there needs the approval annotation. */
  protectedGroupDomains: ['k8s.io', 'kubernetes.io'] as readonly string[],
  protobufMediaType: 'application/vnd.kubernetes.protobuf',
  /**
   * Labels clients and published manifests select by, carried beside ours:
   * webhook namespaceSelectors written for upstream exclude their own
   * namespace by its name label; kubectl describe finds a Service's
   * EndpointSlices by theirs.
   */
  namespaceNameLabel: 'kubernetes.io/metadata.name',
  serviceNameLabel: 'kubernetes.io/service-name',
  /** The annotation ServiceAccounts written for upstream carry to limit their pods' secrets: read beside ours. */
  enforceMountableSecretsAnnotation: 'kubernetes.io/enforce-mountable-secrets',
  /** Domain of the upstream group names typed clients put in paths and bodies (`authentication.k8s.io`). */
  groupDomain: 'k8s.io',
  /**
   * Groups discovery also lists by their upstream name, ahead of ours: kubectl
   * maps the kinds of a manifest (`kubectl apply -f` of a Role written for
   * the upstream server) through discovery, and some commands insist on the
   * upstream group (`kubectl certificate approve`). Every built-in group of
   * ours is here, the reviews' too (`kubectl create -f` of a
   * SubjectAccessReview written for upstream).
   */
  discoveredGroupPrefixes: [
    'authentication', 'authorization', 'certificates', 'rbac.authorization', 'admissionregistration', 'coordination', 'events',
    'apiextensions', 'networking', 'discovery', 'storage', 'scheduling', 'node', 'apiregistration',
  ] as readonly string[],
} as const;

/** The upstream name discovery lists beside one of our groups (`certificates.plat.io` -> `certificates.k8s.io`), if any. */
export function discoveredUpstreamGroup(group: string): string | undefined {
  const suffix = `.${product.domain}`;
  if (!group.endsWith(suffix)) return undefined;
  const prefix = group.slice(0, -suffix.length);
  return upstreamCompat.discoveredGroupPrefixes.includes(prefix) ? `${prefix}.${upstreamCompat.groupDomain}` : undefined;
}

/** Our group for an upstream-named one (`authentication.k8s.io` -> `authentication.plat.io`); undefined for other names. */
export function productGroupForUpstream(group: string): string | undefined {
  const suffix = `.${upstreamCompat.groupDomain}`;
  return group.endsWith(suffix) && group.length > suffix.length ? productGroup(group.slice(0, -suffix.length)) : undefined;
}

/** `authentication.k8s.io/v1` -> `authentication.plat.io/v1`; undefined for an apiVersion not in an upstream-named group. */
export function productApiVersionForUpstream(apiVersion: string): string | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = productGroupForUpstream(apiVersion.slice(0, slash));
  return group === undefined ? undefined : `${group}${apiVersion.slice(slash)}`;
}

/** Reverse-domain prefix of OpenAPI definition names: `io.plat`. */
export const definitionPrefix = product.domain.split('.').reverse().join('.');

/**
 * Why a remote service's answer (a review POSTed to a webhook) is not the
 * kind asked for at `apiVersion`, or undefined when it is. The same version
 * by its upstream group name counts as ours; anything else (a Status, another
 * kind or version, no apiVersion at all) is not an answer to trust.
 */
export function wrongAnswerKind(answer: unknown, apiVersion: string, kind: string): string | undefined {
  const body = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as Record<string, unknown>) : {};
  const got = ownValue(body, 'apiVersion');
  const gotKind = ownValue(body, 'kind');
  const sameVersion = typeof got === 'string' && (got === apiVersion || productApiVersionForUpstream(got) === apiVersion);
  if (sameVersion && gotKind === kind) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return `expected ${apiVersion}, Kind=${kind}, got ${text(got)}, Kind=${text(gotKind)}`;
}
