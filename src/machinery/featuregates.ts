// Feature gates (`--feature-gates Name=bool,...`), with the spec's stages:
// an alpha gate is off and may be turned on, a beta gate is on and may be
// turned off, a GA gate is on and locked (turning it off stops the start), a
// gate past its deprecation window is gone (naming it stops the start too).
// The gates this server knows are the API-server gates of upstream 1.32 whose
// behaviour it implements, with upstream's stage and default; the other gate
// names of upstream 1.32 are accepted with a warning, so that upstream
// configurations start here.

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** Cannot be set to anything but its default. */
  locked?: boolean;
}

/** The gates this server implements, as upstream 1.32 declares them. */
export const knownFeatures = {
  /** Discovery in one document per root (/api, /apis, Accept: ...;as=APIGroupDiscoveryList). */
  AggregatedDiscoveryEndpoint: { stage: 'GA', default: true, locked: true },
  /** Lists in chunks (limit, continue). */
  APIListChunking: { stage: 'GA', default: true, locked: true },
  /** Publishes a Lease per API server in kube-system (servers that share a store). */
  APIServerIdentity: { stage: 'BETA', default: true },
  /** metadata.remainingItemCount on chunked lists. */
  RemainingItemCount: { stage: 'GA', default: true, locked: true },
  /** A jti claim in service-account tokens. */
  ServiceAccountTokenJTI: { stage: 'GA', default: true, locked: true },
  /** storageVersionHash in discovery's resource lists. */
  StorageVersionHash: { stage: 'BETA', default: true },
  /** Bookmark events on watches that ask for them. */
  WatchBookmark: { stage: 'GA', default: true, locked: true },
} as const satisfies Record<string, FeatureSpec>;

export type FeatureName = keyof typeof knownFeatures;

/** Upstream 1.32 gate names this server does not implement; the deprecated ones warn as such. */
const deprecatedUpstream = new Set(['AllowDNSOnlyNodeCSR', 'AllowInsecureKubeletCertificateSigningRequests', 'AllowOverwriteTerminationGracePeriodSeconds', 'DisableNodeKubeProxyVersion', 'KMSv1', 'KubeletRegistrationGetOnExistsOnly']);
const otherUpstream = new Set([
  ...deprecatedUpstream,
  // k8s.io/apiserver
  'AdmissionWebhookMatchConditions', 'AnonymousAuthConfigurableEndpoints', 'APIResponseCompression', 'APIServerTracing', 'APIServingWithRoutine',
  'AuthorizeWithSelectors', 'ConcurrentWatchObjectDecode', 'ConsistentListFromCache', 'CoordinatedLeaderElection', 'EfficientWatchResumption',
  'MutatingAdmissionPolicy', 'OpenAPIEnums', 'ResilientWatchCacheInitialization', 'RetryGenerateName', 'SeparateCacheWatchRPC', 'StorageVersionAPI',
  'StrictCostEnforcementForVAP', 'StrictCostEnforcementForWebhooks', 'StructuredAuthenticationConfiguration', 'StructuredAuthorizationConfiguration',
  'UnauthenticatedHTTP2DOSMitigation', 'WatchCacheInitializationPostStartHook', 'WatchFromStorageWithoutResourceVersion', 'WatchList',
  'ZeroLimitedNominalConcurrencyShares', 'CRDValidationRatcheting', 'CustomResourceFieldSelectors',
  // k8s.io/component-base
  'ComponentSLIs', 'ContextualLogging', 'LoggingAlphaOptions', 'LoggingBetaOptions',
  // the rest of kube's gates (one gate set for every component)
  'AnyVolumeDataSource', 'AppArmor', 'AppArmorFields', 'AuthorizeNodeWithSelectors', 'CloudControllerManagerWebhook', 'ClusterTrustBundle',
  'ClusterTrustBundleProjection', 'ContainerCheckpoint', 'CPUCFSQuotaPeriod', 'CPUManager', 'CPUManagerPolicyAlphaOptions', 'CPUManagerPolicyBetaOptions',
  'CPUManagerPolicyOptions', 'CronJobsScheduledAnnotation', 'CrossNamespaceVolumeDataSource', 'CSIMigrationPortworx', 'CSIVolumeHealth',
  'DevicePluginCDIDevices', 'DisableAllocatorDualWrite', 'DisableCloudProviders', 'DisableKubeletCloudCredentialProviders', 'DynamicResourceAllocation',
  'ElasticIndexedJob', 'EventedPLEG', 'ExecProbeTimeout', 'GracefulNodeShutdown', 'GracefulNodeShutdownBasedOnPodPriority', 'HonorPVReclaimPolicy',
  'HPAContainerMetrics', 'HPAScaleToZero', 'ImageMaximumGCAge', 'ImageVolume', 'InPlacePodVerticalScaling', 'InTreePluginPortworxUnregister',
  'JobBackoffLimitPerIndex', 'JobManagedBy', 'JobPodFailurePolicy', 'JobPodReplacementPolicy', 'JobSuccessPolicy', 'KubeletCgroupDriverFromCRI',
  'KubeletFineGrainedAuthz', 'KubeletInUserNamespace', 'KubeletPodResourcesDynamicResources', 'KubeletPodResourcesGet', 'KubeletSeparateDiskGC',
  'KubeletTracing', 'KubeProxyDrainingTerminatingNodes', 'LoadBalancerIPMode', 'LocalStorageCapacityIsolationFSQuotaMonitoring', 'LogarithmicScaleDown',
  'MatchLabelKeysInPodAffinity', 'MatchLabelKeysInPodTopologySpread', 'MaxUnavailableStatefulSet', 'MemoryManager', 'MemoryQoS',
  'MultiCIDRServiceAllocator', 'NFTablesProxyMode', 'NodeInclusionPolicyInPodTopologySpread', 'NodeLogQuery', 'NodeSwap', 'PDBUnhealthyPodEvictionPolicy',
  'PersistentVolumeLastPhaseTransitionTime', 'PodAndContainerStatsFromCRI', 'PodDeletionCost', 'PodDisruptionConditions', 'PodHostIPs', 'PodIndexLabel',
  'PodLifecycleSleepAction', 'PodReadyToStartContainersCondition', 'PodSchedulingReadiness', 'PortForwardWebsockets', 'ProcMountType', 'QOSReserved',
  'RecoverVolumeExpansionFailure', 'RecursiveReadOnlyMounts', 'RelaxedDNSSearchValidation', 'RelaxedEnvironmentVariableValidation',
  'ReloadKubeletServerCertificateFile', 'ResourceHealthStatus', 'RotateKubeletServerCertificate', 'RuntimeClassInImageCriAPI', 'SchedulerQueueingHints',
  'SELinuxChangePolicy', 'SELinuxMount', 'SELinuxMountReadWriteOncePod', 'SeparateTaintEvictionController', 'ServiceAccountTokenNodeBinding',
  'ServiceAccountTokenNodeBindingValidation', 'ServiceAccountTokenPodNodeInfo', 'ServiceTrafficDistribution', 'SidecarContainers', 'SizeMemoryBackedVolumes',
  'StatefulSetAutoDeletePVC', 'StatefulSetStartOrdinal', 'StorageNamespaceIndex', 'StorageVersionMigrator', 'SupplementalGroupsPolicy', 'TopologyAwareHints',
  'TopologyManagerPolicyAlphaOptions', 'TopologyManagerPolicyBetaOptions', 'TopologyManagerPolicyOptions', 'TranslateStreamCloseWebsocketRequests',
  'UnknownVersionInteroperabilityProxy', 'UserNamespacesPodSecurityStandards', 'UserNamespacesSupport', 'VolumeAttributesClass', 'VolumeCapacityPriority',
  'WinDSR', 'WinOverlay', 'WindowsHostNetwork',
]);

/** Upstream's keys that set every alpha or every beta gate that is not locked. */
const allAlpha = 'AllAlpha';
const allBeta = 'AllBeta';

/** A --feature-gates the server refuses to start with; the message is the one line the CLI prints. */
export class FeatureGateError extends Error {
  override name = 'FeatureGateError';
}

export class FeatureGates {
  private constructor(private readonly state: ReadonlyMap<FeatureName, boolean>) {}

  /** Upstream's defaults. */
  static defaults(): FeatureGates {
    return FeatureGates.fromFlags([]).gates;
  }

  /**
   * The gates `pairs` ask for; throws FeatureGateError for an unknown name or
   * a locked gate set against its default. Warnings: gates named that have no
   * effect here, GA and deprecated gates that are set.
   */
  static fromFlags(pairs: readonly [string, boolean][]): { gates: FeatureGates; warnings: string[] } {
    const state = new Map<FeatureName, boolean>(Object.entries(knownFeatures).map(([name, spec]) => [name as FeatureName, spec.default]));
    const warnings: string[] = [];
    const ignored: string[] = [];
    // AllAlpha and AllBeta first: a gate named on its own wins over them, whatever the order.
    const ordered = [...pairs].sort(([a], [b]) => Number(b === allAlpha || b === allBeta) - Number(a === allAlpha || a === allBeta));
    for (const [name, on] of ordered) {
      if (name === allAlpha || name === allBeta) {
        const stage = name === allAlpha ? 'ALPHA' : 'BETA';
        for (const [gate, spec] of Object.entries(knownFeatures) as [FeatureName, FeatureSpec][]) if (spec.stage === stage && !spec.locked) state.set(gate, on);
        continue;
      }
      if (Object.hasOwn(knownFeatures, name)) {
        const spec: FeatureSpec = knownFeatures[name as FeatureName];
        if (spec.locked && on !== spec.default) throw new FeatureGateError(`--feature-gates: cannot set feature gate ${name} to ${on}, feature is locked to ${spec.default}`);
        if (spec.stage === 'GA' || spec.stage === 'DEPRECATED') {
          warnings.push(`Setting ${spec.stage === 'GA' ? 'GA' : 'deprecated'} feature gate ${name}=${on}. It will be removed in a future release.`);
        }
        state.set(name as FeatureName, on);
        continue;
      }
      if (!otherUpstream.has(name)) throw new FeatureGateError(`--feature-gates: unrecognized feature gate: ${name}`);
      if (deprecatedUpstream.has(name)) warnings.push(`Setting deprecated feature gate ${name}=${on}. It will be removed in a future release.`);
      ignored.push(name);
    }
    if (ignored.length) warnings.push(`--feature-gates: ${ignored.join(', ')} ${ignored.length === 1 ? 'is a gate' : 'are gates'} of upstream that this server does not implement; setting ${ignored.length === 1 ? 'it has' : 'them has'} no effect`);
    return { gates: new FeatureGates(state), warnings };
  }

  enabled(name: FeatureName): boolean {
    return this.state.get(name)!;
  }

  /** Every known gate with its stage and state (the feature-enabled metric). */
  list(): { name: FeatureName; stage: FeatureStage; enabled: boolean }[] {
    return (Object.keys(knownFeatures) as FeatureName[]).map((name) => ({ name, stage: knownFeatures[name].stage, enabled: this.enabled(name) }));
  }
}
