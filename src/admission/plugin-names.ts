// Which plugins run, and in which order. Every plugin name the specification
// lists is known here, in upstream's fixed order (the order of the flags does
// not matter); the default set is on unless disabled. Any other name stops
// the start-up, and so does a plugin upstream removed (PodSecurityPolicy),
// with the one line that says what replaces it.

export const orderedPluginNames: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'SecurityContextDeny',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodSecurityPolicy',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'DenyEscalatingExec',
  'DenyExecOnPrivileged',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  // Webhooks, quota and AlwaysDeny come last, as upstream.
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

export const defaultOnPlugins: ReadonlySet<string> = new Set([
  'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass',
  'DefaultStorageClass', 'DefaultTolerationSeconds', 'LimitRanger', 'MutatingAdmissionWebhook',
  'NamespaceLifecycle', 'PersistentVolumeClaimResize', 'PodSecurity', 'Priority', 'ResourceQuota',
  'RuntimeClass', 'ServiceAccount', 'StorageObjectInUseProtection', 'TaintNodesByCondition',
  'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook',
]);

/** Plugins the spec still lists but upstream removed: enabling one stops the start with what replaces it. */
export const removedPlugins: ReadonlyMap<string, string> = new Map([
  ['PodSecurityPolicy', 'admission plugin "PodSecurityPolicy" was removed in v1.25 with policy/v1beta1 PodSecurityPolicy: use the PodSecurity admission plugin (on by default) and the pod security labels of namespaces instead'],
]);

/** A start-up failure of admission (flags, configuration file): the message says what to fix. */
export class AdmissionConfigError extends Error {
  override name = 'AdmissionConfigError';
}

/**
 * The enabled plugin names in running order: the default set, plus
 * `enable`, minus `disable`. Unknown names and names both enabled and
 * disabled are refused with upstream's messages, all at once.
 */
export function enabledPluginNames(enable: readonly string[], disable: readonly string[]): string[] {
  const known = new Set(orderedPluginNames);
  const problems: string[] = [];
  for (const name of enable) if (!known.has(name)) problems.push(`enable-admission-plugins plugin "${name}" is unknown`);
  for (const name of disable) if (!known.has(name)) problems.push(`disable-admission-plugins plugin "${name}" is unknown`);
  const both = [...new Set(enable)].filter((name) => disable.includes(name)).sort();
  if (both.length) problems.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  for (const name of new Set(enable)) if (removedPlugins.has(name) && !disable.includes(name)) problems.push(removedPlugins.get(name)!);
  if (problems.length) throw new AdmissionConfigError(problems.join('; '));
  return orderedPluginNames.filter((name) => (defaultOnPlugins.has(name) || enable.includes(name)) && !disable.includes(name));
}
