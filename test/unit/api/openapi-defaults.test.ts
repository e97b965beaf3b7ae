// Upstream 1.32's published OpenAPI gives fields defaults in two ways: a
// `+default=` marker on the Go field (a port's protocol, an RBD volume's
// pool), and the Go zero value of every scalar field whose JSON tag has no
// omitempty ("" or 0 or false). Server-side apply reads list-map keys
// through them, and clients read them in the documents. The table below
// re-expresses those defaults for every definition this server also
// declares (read from k8s.io/api and k8s.io/apimachinery v0.32's types: the
// markers and the tags the OpenAPI generator turns into `default`); each must
// be ours, in our schema, in OpenAPI v2 and v3, and in the typed schema
// server-side apply uses. Defaults of whole structs (`{}`) are in the second
// table.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { builtinKinds } from '../../../src/api/catalog.js';
import { isViewSubresource } from '../../../src/api/kind.js';
import { codecsOf } from '../../../src/api/codec.js';
import { namedSchemas, resolve, type Schema } from '../../../src/api/schema.js';
import { typeInfoOf } from '../../../src/api/typeinfo.js';
import { definitionPrefix } from '../../../src/machinery/vocabulary.js';
import { OpenApiService } from '../../../src/server/openapi/index.js';
import { catalogRegistry } from '../../support/catalog.js';

/** [group.version.Definition, its defaulted fields]: upstream's defaults, by definition. */
const upstreamDefaults: Array<[string, Record<string, unknown>]> = [
  ['admissionregistration.v1.MatchCondition', { name: '', expression: '' }],
  ['admissionregistration.v1.MutatingWebhook', { name: '' }],
  ['admissionregistration.v1.ServiceReference', { namespace: '', name: '' }],
  ['admissionregistration.v1.ValidatingWebhook', { name: '' }],
  ['apiextensions.v1.CustomResourceDefinitionCondition', { type: '', status: '' }],
  ['apps.v1.ControllerRevision', { revision: 0 }],
  ['apps.v1.DaemonSetCondition', { type: '', status: '' }],
  ['apps.v1.DaemonSetStatus', { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }],
  ['apps.v1.DeploymentCondition', { type: '', status: '' }],
  ['apps.v1.ReplicaSetCondition', { type: '', status: '' }],
  ['apps.v1.ReplicaSetStatus', { replicas: 0 }],
  ['apps.v1.StatefulSetCondition', { type: '', status: '' }],
  ['apps.v1.StatefulSetOrdinals', { start: 0 }],
  ['apps.v1.StatefulSetSpec', { serviceName: '' }],
  ['apps.v1.StatefulSetStatus', { replicas: 0, availableReplicas: 0 }],
  ['autoscaling.v1.CrossVersionObjectReference', { kind: '', name: '' }],
  ['autoscaling.v1.HorizontalPodAutoscalerSpec', { maxReplicas: 0 }],
  ['autoscaling.v1.HorizontalPodAutoscalerStatus', { currentReplicas: 0, desiredReplicas: 0 }],
  ['autoscaling.v1.ScaleStatus', { replicas: 0 }],
  ['autoscaling.v2.ContainerResourceMetricSource', { name: '', container: '' }],
  ['autoscaling.v2.ContainerResourceMetricStatus', { name: '', container: '' }],
  ['autoscaling.v2.CrossVersionObjectReference', { kind: '', name: '' }],
  ['autoscaling.v2.HPAScalingPolicy', { type: '', value: 0, periodSeconds: 0 }],
  ['autoscaling.v2.HorizontalPodAutoscalerCondition', { type: '', status: '' }],
  ['autoscaling.v2.HorizontalPodAutoscalerSpec', { maxReplicas: 0 }],
  ['autoscaling.v2.HorizontalPodAutoscalerStatus', { desiredReplicas: 0 }],
  ['autoscaling.v2.MetricIdentifier', { name: '' }],
  ['autoscaling.v2.MetricSpec', { type: '' }],
  ['autoscaling.v2.MetricStatus', { type: '' }],
  ['autoscaling.v2.MetricTarget', { type: '' }],
  ['autoscaling.v2.ResourceMetricSource', { name: '' }],
  ['autoscaling.v2.ResourceMetricStatus', { name: '' }],
  ['batch.v1.CronJobSpec', { schedule: '' }],
  ['batch.v1.JobCondition', { type: '', status: '' }],
  ['batch.v1.PodFailurePolicyOnExitCodesRequirement', { operator: '' }],
  ['batch.v1.PodFailurePolicyOnPodConditionsPattern', { type: '', status: '' }],
  ['batch.v1.PodFailurePolicyRule', { action: '' }],
  ['certificates.v1.CertificateSigningRequestCondition', { type: '', status: '' }],
  ['certificates.v1.CertificateSigningRequestSpec', { signerName: '' }],
  ['core.v1.AWSElasticBlockStoreVolumeSource', { volumeID: '' }],
  ['core.v1.AppArmorProfile', { type: '' }],
  ['core.v1.AttachedVolume', { name: '', devicePath: '' }],
  ['core.v1.AzureDiskVolumeSource', { diskName: '', diskURI: '', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' }],
  ['core.v1.AzureFilePersistentVolumeSource', { secretName: '', shareName: '' }],
  ['core.v1.AzureFileVolumeSource', { secretName: '', shareName: '' }],
  ['core.v1.CSIPersistentVolumeSource', { driver: '', volumeHandle: '' }],
  ['core.v1.CSIVolumeSource', { driver: '' }],
  ['core.v1.CinderPersistentVolumeSource', { volumeID: '' }],
  ['core.v1.CinderVolumeSource', { volumeID: '' }],
  ['core.v1.ClusterTrustBundleProjection', { path: '' }],
  ['core.v1.ConfigMapEnvSource', { name: '' }],
  ['core.v1.ConfigMapKeySelector', { name: '', key: '' }],
  ['core.v1.ConfigMapNodeConfigSource', { namespace: '', name: '', kubeletConfigKey: '' }],
  ['core.v1.ConfigMapProjection', { name: '' }],
  ['core.v1.ConfigMapVolumeSource', { name: '' }],
  ['core.v1.Container', { name: '' }],
  ['core.v1.ContainerPort', { containerPort: 0, protocol: 'TCP' }],
  ['core.v1.ContainerResizePolicy', { resourceName: '', restartPolicy: '' }],
  ['core.v1.ContainerStateTerminated', { exitCode: 0 }],
  ['core.v1.ContainerStatus', { name: '', ready: false, restartCount: 0, image: '', imageID: '' }],
  ['core.v1.DaemonEndpoint', { Port: 0 }],
  ['core.v1.DownwardAPIVolumeFile', { path: '' }],
  ['core.v1.EndpointAddress', { ip: '' }],
  ['core.v1.EndpointPort', { port: 0 }],
  ['core.v1.EnvVar', { name: '' }],
  ['core.v1.EphemeralContainer', { name: '' }],
  ['core.v1.Event', { reportingComponent: '', reportingInstance: '' }],
  ['core.v1.FlexPersistentVolumeSource', { driver: '' }],
  ['core.v1.FlexVolumeSource', { driver: '' }],
  ['core.v1.GCEPersistentDiskVolumeSource', { pdName: '' }],
  ['core.v1.GRPCAction', { port: 0, service: '' }],
  ['core.v1.GitRepoVolumeSource', { repository: '' }],
  ['core.v1.GlusterfsPersistentVolumeSource', { endpoints: '', path: '' }],
  ['core.v1.GlusterfsVolumeSource', { endpoints: '', path: '' }],
  ['core.v1.HTTPHeader', { name: '', value: '' }],
  ['core.v1.HostAlias', { ip: '' }],
  ['core.v1.HostIP', { ip: '' }],
  ['core.v1.HostPathVolumeSource', { path: '' }],
  ['core.v1.ISCSIPersistentVolumeSource', { targetPortal: '', iqn: '', lun: 0, iscsiInterface: 'default' }],
  ['core.v1.ISCSIVolumeSource', { targetPortal: '', iqn: '', lun: 0, iscsiInterface: 'default' }],
  ['core.v1.KeyToPath', { key: '', path: '' }],
  ['core.v1.LimitRangeItem', { type: '' }],
  ['core.v1.LinuxContainerUser', { uid: 0, gid: 0 }],
  ['core.v1.LocalObjectReference', { name: '' }],
  ['core.v1.LocalVolumeSource', { path: '' }],
  ['core.v1.ModifyVolumeStatus', { status: '' }],
  ['core.v1.NFSVolumeSource', { server: '', path: '' }],
  ['core.v1.NamespaceCondition', { type: '', status: '' }],
  ['core.v1.NodeAddress', { type: '', address: '' }],
  ['core.v1.NodeCondition', { type: '', status: '' }],
  ['core.v1.NodeRuntimeHandler', { name: '' }],
  ['core.v1.NodeSelectorRequirement', { key: '', operator: '' }],
  ['core.v1.NodeSystemInfo', { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' }],
  ['core.v1.ObjectFieldSelector', { fieldPath: '' }],
  ['core.v1.PersistentVolumeClaimCondition', { type: '', status: '' }],
  ['core.v1.PersistentVolumeClaimVolumeSource', { claimName: '' }],
  ['core.v1.PhotonPersistentDiskVolumeSource', { pdID: '' }],
  ['core.v1.PodAffinityTerm', { topologyKey: '' }],
  ['core.v1.PodCondition', { type: '', status: '' }],
  ['core.v1.PodIP', { ip: '' }],
  ['core.v1.PodOS', { name: '' }],
  ['core.v1.PodReadinessGate', { conditionType: '' }],
  ['core.v1.PodResourceClaim', { name: '' }],
  ['core.v1.PodResourceClaimStatus', { name: '' }],
  ['core.v1.PodSchedulingGate', { name: '' }],
  ['core.v1.PortStatus', { port: 0, protocol: '' }],
  ['core.v1.PortworxVolumeSource', { volumeID: '' }],
  ['core.v1.PreferredSchedulingTerm', { weight: 0 }],
  ['core.v1.QuobyteVolumeSource', { registry: '', volume: '' }],
  ['core.v1.RBDPersistentVolumeSource', { image: '', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' }],
  ['core.v1.RBDVolumeSource', { image: '', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' }],
  ['core.v1.ReplicationControllerCondition', { type: '', status: '' }],
  ['core.v1.ReplicationControllerStatus', { replicas: 0 }],
  ['core.v1.ResourceClaim', { name: '' }],
  ['core.v1.ResourceFieldSelector', { resource: '' }],
  ['core.v1.ResourceHealth', { resourceID: '' }],
  ['core.v1.ResourceStatus', { name: '' }],
  ['core.v1.ScaleIOPersistentVolumeSource', { gateway: '', system: '', storageMode: 'ThinProvisioned', fsType: 'xfs' }],
  ['core.v1.ScaleIOVolumeSource', { gateway: '', system: '', storageMode: 'ThinProvisioned', fsType: 'xfs' }],
  ['core.v1.ScopedResourceSelectorRequirement', { scopeName: '', operator: '' }],
  ['core.v1.SeccompProfile', { type: '' }],
  ['core.v1.SecretEnvSource', { name: '' }],
  ['core.v1.SecretKeySelector', { name: '', key: '' }],
  ['core.v1.SecretProjection', { name: '' }],
  ['core.v1.ServiceAccountTokenProjection', { path: '' }],
  ['core.v1.ServicePort', { protocol: 'TCP', port: 0 }],
  ['core.v1.SleepAction', { seconds: 0 }],
  ['core.v1.Sysctl', { name: '', value: '' }],
  ['core.v1.Taint', { key: '', effect: '' }],
  ['core.v1.TopologySelectorLabelRequirement', { key: '' }],
  ['core.v1.TopologySpreadConstraint', { maxSkew: 0, topologyKey: '', whenUnsatisfiable: '' }],
  ['core.v1.TypedLocalObjectReference', { kind: '', name: '' }],
  ['core.v1.TypedObjectReference', { kind: '', name: '' }],
  ['core.v1.Volume', { name: '' }],
  ['core.v1.VolumeDevice', { name: '', devicePath: '' }],
  ['core.v1.VolumeMount', { name: '', mountPath: '' }],
  ['core.v1.VolumeMountStatus', { name: '', mountPath: '' }],
  ['core.v1.VsphereVirtualDiskVolumeSource', { volumePath: '' }],
  ['core.v1.WeightedPodAffinityTerm', { weight: 0 }],
  ['discovery.v1.EndpointSlice', { addressType: '' }],
  ['discovery.v1.ForZone', { name: '' }],
  ['events.v1.EventSeries', { count: 0 }],
  ['meta.v1.Condition', { type: '', status: '', reason: '', message: '' }],
  ['meta.v1.LabelSelectorRequirement', { key: '', operator: '' }],
  ['meta.v1.OwnerReference', { apiVersion: '', kind: '', name: '', uid: '' }],
  ['networking.v1.IPBlock', { cidr: '' }],
  ['networking.v1.IngressClassParametersReference', { kind: '', name: '' }],
  ['networking.v1.IngressPortStatus', { port: 0, protocol: '' }],
  ['networking.v1.IngressServiceBackend', { name: '' }],
  ['node.v1.RuntimeClass', { handler: '' }],
  ['policy.v1.PodDisruptionBudgetStatus', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }],
  ['rbac.v1.RoleRef', { apiGroup: '', kind: '', name: '' }],
  ['rbac.v1.Subject', { kind: '', name: '' }],
  ['scheduling.v1.PriorityClass', { value: 0 }],
  ['storage.v1.CSINodeDriver', { name: '', nodeID: '' }],
  ['storage.v1.CSIStorageCapacity', { storageClassName: '' }],
  ['storage.v1.StorageClass', { provisioner: '' }],
  ['storage.v1.TokenRequest', { audience: '' }],
  ['storage.v1.VolumeAttachmentSpec', { attacher: '', nodeName: '' }],
  ['storage.v1.VolumeAttachmentStatus', { attached: false }],
];

/**
 * [group.version.Definition, its fields that are Go value structs]: upstream's
 * generator gives each `default: {}` in OpenAPI v3 (v2 has none beside its
 * references), and Go writes each whether or not it was sent. `name[]` is a
 * list's items, `name{}` a map's values (read from the same types: a field
 * whose type is a struct, not a pointer, without a JSON unmarshaller of its
 * own, so no Time, Quantity or IntOrString).
 */
const upstreamValueStructs: Array<[string, string[]]> = [
  ['admissionregistration.v1.MatchResources', ['resourceRules[]', 'excludeResourceRules[]']],
  ['admissionregistration.v1.MutatingWebhook', ['clientConfig', 'rules[]', 'matchConditions[]']],
  ['admissionregistration.v1.MutatingWebhookConfiguration', ['metadata', 'webhooks[]']],
  ['admissionregistration.v1.TypeChecking', ['expressionWarnings[]']],
  ['admissionregistration.v1.ValidatingAdmissionPolicy', ['metadata', 'spec', 'status']],
  ['admissionregistration.v1.ValidatingAdmissionPolicyBinding', ['metadata', 'spec']],
  ['admissionregistration.v1.ValidatingAdmissionPolicySpec', ['validations[]', 'auditAnnotations[]', 'matchConditions[]', 'variables[]']],
  ['admissionregistration.v1.ValidatingAdmissionPolicyStatus', ['conditions[]']],
  ['admissionregistration.v1.ValidatingWebhook', ['clientConfig', 'rules[]', 'matchConditions[]']],
  ['admissionregistration.v1.ValidatingWebhookConfiguration', ['metadata', 'webhooks[]']],
  ['admissionregistration.v1beta1.MatchResources', ['resourceRules[]', 'excludeResourceRules[]']],
  ['admissionregistration.v1beta1.TypeChecking', ['expressionWarnings[]']],
  ['admissionregistration.v1beta1.ValidatingAdmissionPolicy', ['metadata', 'spec', 'status']],
  ['admissionregistration.v1beta1.ValidatingAdmissionPolicyBinding', ['metadata', 'spec']],
  ['admissionregistration.v1beta1.ValidatingAdmissionPolicySpec', ['validations[]', 'auditAnnotations[]', 'matchConditions[]', 'variables[]']],
  ['admissionregistration.v1beta1.ValidatingAdmissionPolicyStatus', ['conditions[]']],
  ['apiextensions.v1.CustomResourceDefinition', ['metadata', 'spec', 'status']],
  ['apiextensions.v1.CustomResourceDefinitionVersion', ['additionalPrinterColumns[]', 'selectableFields[]']],
  ['apiregistration.v1.APIService', ['metadata', 'spec', 'status']],
  ['apiregistration.v1.APIServiceStatus', ['conditions[]']],
  ['apps.v1.ControllerRevision', ['metadata']],
  ['apps.v1.DaemonSet', ['metadata', 'spec', 'status']],
  ['apps.v1.DaemonSetSpec', ['template', 'updateStrategy']],
  ['apps.v1.DaemonSetStatus', ['conditions[]']],
  ['apps.v1.Deployment', ['metadata', 'spec', 'status']],
  ['apps.v1.DeploymentSpec', ['template', 'strategy']],
  ['apps.v1.DeploymentStatus', ['conditions[]']],
  ['apps.v1.ReplicaSet', ['metadata', 'spec', 'status']],
  ['apps.v1.ReplicaSetSpec', ['template']],
  ['apps.v1.ReplicaSetStatus', ['conditions[]']],
  ['apps.v1.StatefulSet', ['metadata', 'spec', 'status']],
  ['apps.v1.StatefulSetSpec', ['template', 'volumeClaimTemplates[]', 'updateStrategy']],
  ['apps.v1.StatefulSetStatus', ['conditions[]']],
  ['autoscaling.v1.HorizontalPodAutoscaler', ['metadata', 'spec', 'status']],
  ['autoscaling.v1.HorizontalPodAutoscalerSpec', ['scaleTargetRef']],
  ['autoscaling.v1.Scale', ['metadata', 'spec', 'status']],
  ['autoscaling.v2.ContainerResourceMetricSource', ['target']],
  ['autoscaling.v2.ContainerResourceMetricStatus', ['current']],
  ['autoscaling.v2.ExternalMetricSource', ['metric', 'target']],
  ['autoscaling.v2.ExternalMetricStatus', ['metric', 'current']],
  ['autoscaling.v2.HPAScalingRules', ['policies[]']],
  ['autoscaling.v2.HorizontalPodAutoscaler', ['metadata', 'spec', 'status']],
  ['autoscaling.v2.HorizontalPodAutoscalerSpec', ['scaleTargetRef', 'metrics[]']],
  ['autoscaling.v2.HorizontalPodAutoscalerStatus', ['currentMetrics[]', 'conditions[]']],
  ['autoscaling.v2.ObjectMetricSource', ['describedObject', 'target', 'metric']],
  ['autoscaling.v2.ObjectMetricStatus', ['metric', 'current', 'describedObject']],
  ['autoscaling.v2.PodsMetricSource', ['metric', 'target']],
  ['autoscaling.v2.PodsMetricStatus', ['metric', 'current']],
  ['autoscaling.v2.ResourceMetricSource', ['target']],
  ['autoscaling.v2.ResourceMetricStatus', ['current']],
  ['batch.v1.CronJob', ['metadata', 'spec', 'status']],
  ['batch.v1.CronJobSpec', ['jobTemplate']],
  ['batch.v1.CronJobStatus', ['active[]']],
  ['batch.v1.Job', ['metadata', 'spec', 'status']],
  ['batch.v1.JobSpec', ['template']],
  ['batch.v1.JobStatus', ['conditions[]']],
  ['batch.v1.JobTemplateSpec', ['metadata', 'spec']],
  ['batch.v1.PodFailurePolicy', ['rules[]']],
  ['batch.v1.PodFailurePolicyRule', ['onPodConditions[]']],
  ['batch.v1.SuccessPolicy', ['rules[]']],
  ['certificates.v1.CertificateSigningRequest', ['metadata', 'spec', 'status']],
  ['certificates.v1.CertificateSigningRequestStatus', ['conditions[]']],
  ['coordination.v1.Lease', ['metadata', 'spec']],
  ['core.v1.ConfigMap', ['metadata']],
  ['core.v1.ConfigMapProjection', ['items[]']],
  ['core.v1.ConfigMapVolumeSource', ['items[]']],
  ['core.v1.Container', ['ports[]', 'envFrom[]', 'env[]', 'resources', 'resizePolicy[]', 'volumeMounts[]', 'volumeDevices[]']],
  ['core.v1.ContainerStatus', ['state', 'lastState', 'volumeMounts[]', 'allocatedResourcesStatus[]']],
  ['core.v1.DownwardAPIProjection', ['items[]']],
  ['core.v1.DownwardAPIVolumeSource', ['items[]']],
  ['core.v1.EndpointSubset', ['addresses[]', 'notReadyAddresses[]', 'ports[]']],
  ['core.v1.Endpoints', ['metadata', 'subsets[]']],
  ['core.v1.Event', ['metadata', 'involvedObject', 'source']],
  ['core.v1.HTTPGetAction', ['httpHeaders[]']],
  ['core.v1.LimitRange', ['metadata', 'spec']],
  ['core.v1.LimitRangeSpec', ['limits[]']],
  ['core.v1.LoadBalancerIngress', ['ports[]']],
  ['core.v1.LoadBalancerStatus', ['ingress[]']],
  ['core.v1.Namespace', ['metadata', 'spec', 'status']],
  ['core.v1.NamespaceStatus', ['conditions[]']],
  ['core.v1.Node', ['metadata', 'spec', 'status']],
  ['core.v1.NodeAffinity', ['preferredDuringSchedulingIgnoredDuringExecution[]']],
  ['core.v1.NodeDaemonEndpoints', ['kubeletEndpoint']],
  ['core.v1.NodeSelector', ['nodeSelectorTerms[]']],
  ['core.v1.NodeSelectorTerm', ['matchExpressions[]', 'matchFields[]']],
  ['core.v1.NodeSpec', ['taints[]']],
  ['core.v1.NodeStatus', ['conditions[]', 'addresses[]', 'daemonEndpoints', 'nodeInfo', 'images[]', 'volumesAttached[]', 'runtimeHandlers[]']],
  ['core.v1.PersistentVolume', ['metadata', 'spec', 'status']],
  ['core.v1.PersistentVolumeClaim', ['metadata', 'spec', 'status']],
  ['core.v1.PersistentVolumeClaimSpec', ['resources']],
  ['core.v1.PersistentVolumeClaimStatus', ['conditions[]']],
  ['core.v1.PersistentVolumeClaimTemplate', ['metadata', 'spec']],
  ['core.v1.Pod', ['metadata', 'spec', 'status']],
  ['core.v1.PodAffinity', ['requiredDuringSchedulingIgnoredDuringExecution[]', 'preferredDuringSchedulingIgnoredDuringExecution[]']],
  ['core.v1.PodAntiAffinity', ['requiredDuringSchedulingIgnoredDuringExecution[]', 'preferredDuringSchedulingIgnoredDuringExecution[]']],
  ['core.v1.PodDNSConfig', ['options[]']],
  ['core.v1.PodSecurityContext', ['sysctls[]']],
  ['core.v1.PodSpec', ['volumes[]', 'initContainers[]', 'containers[]', 'ephemeralContainers[]', 'imagePullSecrets[]', 'tolerations[]', 'hostAliases[]', 'readinessGates[]', 'topologySpreadConstraints[]', 'schedulingGates[]', 'resourceClaims[]']],
  ['core.v1.PodStatus', ['conditions[]', 'hostIPs[]', 'podIPs[]', 'initContainerStatuses[]', 'containerStatuses[]', 'ephemeralContainerStatuses[]', 'resourceClaimStatuses[]']],
  ['core.v1.PodTemplate', ['metadata', 'template']],
  ['core.v1.PodTemplateSpec', ['metadata', 'spec']],
  ['core.v1.PreferredSchedulingTerm', ['preference']],
  ['core.v1.ProjectedVolumeSource', ['sources[]']],
  ['core.v1.ReplicationController', ['metadata', 'spec', 'status']],
  ['core.v1.ReplicationControllerStatus', ['conditions[]']],
  ['core.v1.ResourceQuota', ['metadata', 'spec', 'status']],
  ['core.v1.ResourceRequirements', ['claims[]']],
  ['core.v1.ResourceStatus', ['resources[]']],
  ['core.v1.ScopeSelector', ['matchExpressions[]']],
  ['core.v1.Secret', ['metadata']],
  ['core.v1.SecretProjection', ['items[]']],
  ['core.v1.SecretVolumeSource', ['items[]']],
  ['core.v1.Service', ['metadata', 'spec', 'status']],
  ['core.v1.ServiceAccount', ['metadata', 'secrets[]', 'imagePullSecrets[]']],
  ['core.v1.ServiceSpec', ['ports[]']],
  ['core.v1.ServiceStatus', ['loadBalancer', 'conditions[]']],
  ['core.v1.TopologySelectorTerm', ['matchLabelExpressions[]']],
  ['core.v1.WeightedPodAffinityTerm', ['podAffinityTerm']],
  ['discovery.v1.Endpoint', ['conditions']],
  ['discovery.v1.EndpointHints', ['forZones[]']],
  ['discovery.v1.EndpointSlice', ['metadata', 'endpoints[]', 'ports[]']],
  ['events.v1.Event', ['metadata', 'regarding', 'deprecatedSource']],
  ['meta.v1.LabelSelector', ['matchExpressions[]']],
  ['meta.v1.ObjectMeta', ['ownerReferences[]', 'managedFields[]']],
  ['networking.v1.HTTPIngressPath', ['backend']],
  ['networking.v1.HTTPIngressRuleValue', ['paths[]']],
  ['networking.v1.Ingress', ['metadata', 'spec', 'status']],
  ['networking.v1.IngressClass', ['metadata', 'spec']],
  ['networking.v1.IngressLoadBalancerIngress', ['ports[]']],
  ['networking.v1.IngressLoadBalancerStatus', ['ingress[]']],
  ['networking.v1.IngressServiceBackend', ['port']],
  ['networking.v1.IngressSpec', ['tls[]', 'rules[]']],
  ['networking.v1.IngressStatus', ['loadBalancer']],
  ['networking.v1.NetworkPolicy', ['metadata', 'spec']],
  ['networking.v1.NetworkPolicyEgressRule', ['ports[]', 'to[]']],
  ['networking.v1.NetworkPolicyIngressRule', ['ports[]', 'from[]']],
  ['networking.v1.NetworkPolicySpec', ['podSelector', 'ingress[]', 'egress[]']],
  ['node.v1.RuntimeClass', ['metadata']],
  ['node.v1.Scheduling', ['tolerations[]']],
  ['policy.v1.PodDisruptionBudget', ['metadata', 'spec', 'status']],
  ['policy.v1.PodDisruptionBudgetStatus', ['conditions[]']],
  ['rbac.v1.AggregationRule', ['clusterRoleSelectors[]']],
  ['rbac.v1.ClusterRole', ['metadata', 'rules[]']],
  ['rbac.v1.ClusterRoleBinding', ['metadata', 'subjects[]', 'roleRef']],
  ['rbac.v1.Role', ['metadata', 'rules[]']],
  ['rbac.v1.RoleBinding', ['metadata', 'subjects[]', 'roleRef']],
  ['scheduling.v1.PriorityClass', ['metadata']],
  ['storage.v1.CSIDriver', ['metadata', 'spec']],
  ['storage.v1.CSIDriverSpec', ['tokenRequests[]']],
  ['storage.v1.CSINode', ['metadata', 'spec']],
  ['storage.v1.CSINodeSpec', ['drivers[]']],
  ['storage.v1.CSIStorageCapacity', ['metadata']],
  ['storage.v1.StorageClass', ['metadata', 'allowedTopologies[]']],
  ['storage.v1.VolumeAttachment', ['metadata', 'spec', 'status']],
  ['storage.v1.VolumeAttachmentSpec', ['source']],
];

/** Our name of an upstream definition (meta's live under apimachinery, the aggregator's under its own name, as upstream's). */
const ourName = (definition: string) =>
  `${definitionPrefix}.${definition.startsWith('meta.') ? 'apimachinery' : definition.startsWith('apiregistration.') ? 'kube-aggregator' : 'api'}.${definition}`;

/** The schema a value-struct entry names: the field's, its items' or its values'. */
function valueStructSchema(properties: Record<string, Schema>, entry: string): Schema | undefined {
  const field = properties[entry.replace(/\[\]$|\{\}$/, '')];
  if (!field) return undefined;
  return entry.endsWith('[]') ? resolve(field).items : entry.endsWith('{}') ? resolve(field).additionalProperties : field;
}

/** The rendering of a value-struct entry in a served document's definition. */
function rendered(definition: unknown, entry: string): { default?: unknown } | undefined {
  const field = (definition as { properties?: Record<string, any> } | undefined)?.properties?.[entry.replace(/\[\]$|\{\}$/, '')];
  return entry.endsWith('[]') ? field?.items : entry.endsWith('{}') ? field?.additionalProperties : field;
}

function ourSchemas(): Map<string, Schema> {
  const roots: Schema[] = [];
  for (const kind of builtinKinds) {
    roots.push(kind.schema);
    for (const codec of codecsOf(kind)) roots.push(codec.served.schema);
    // A view sub-resource's kind (Scale) is served too.
    for (const sub of Object.values(kind.subresources)) if (isViewSubresource(sub)) roots.push(sub.kind.schema);
  }
  return namedSchemas(roots);
}

test('every field upstream defaults has that default in our schemas', () => {
  const schemas = ourSchemas();
  const wrong: string[] = [];
  for (const [definition, defaults] of upstreamDefaults) {
    const schema = schemas.get(ourName(definition));
    if (!schema) {
      wrong.push(`${definition}: not declared`);
      continue;
    }
    const properties = resolve(schema).properties ?? {};
    for (const [field, value] of Object.entries(defaults)) {
      const ours = Object.hasOwn(properties, field) ? resolve(properties[field]!).default ?? properties[field]!.default : '(no such field)';
      if (ours !== value) wrong.push(`${definition}.${field}: ${JSON.stringify(ours)}, upstream ${JSON.stringify(value)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the defaults are in OpenAPI v2 and v3 and in the typed schema server-side apply uses', () => {
  const schemas = ourSchemas();
  // The documents as served: v2's definitions, and the schemas of every v3 group-version document together.
  const service = new OpenApiService(catalogRegistry());
  const v3: Record<string, unknown> = {};
  for (const rep of service.v3Documents().docs.values()) Object.assign(v3, JSON.parse(rep.body.toString()).components?.schemas ?? {});
  const documents = { v2: service.v2Document().doc.definitions as Record<string, unknown>, v3 };
  const wrong: string[] = [];
  for (const [definition, defaults] of upstreamDefaults) {
    const name = ourName(definition);
    const typed = typeInfoOf(schemas.get(name)!);
    for (const [field, value] of Object.entries(defaults)) {
      for (const [dialect, definitions] of Object.entries(documents)) {
        const rendered = (definitions[name] as { properties?: Record<string, { default?: unknown }> } | undefined)?.properties?.[field];
        if (rendered?.default !== value) wrong.push(`${dialect} ${definition}.${field}: ${JSON.stringify(rendered?.default)}`);
      }
      if (typed.field(field)?.default !== value) wrong.push(`typed ${definition}.${field}: ${JSON.stringify(typed.field(field)?.default)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('every value struct upstream writes has the default {} in our schemas and in the typed schema', () => {
  const schemas = ourSchemas();
  const wrong: string[] = [];
  for (const [definition, entries] of upstreamValueStructs) {
    const schema = schemas.get(ourName(definition));
    if (!schema) {
      wrong.push(`${definition}: not declared`);
      continue;
    }
    const properties = resolve(schema).properties ?? {};
    const typed = typeInfoOf(schema);
    for (const entry of entries) {
      const ours = valueStructSchema(properties, entry);
      if (!ours) wrong.push(`${definition}.${entry}: no such field`);
      else if (!isDeepStrictEqual(ours.default, {})) wrong.push(`${definition}.${entry}: ${JSON.stringify(ours.default)}`);
      const name = entry.replace(/\[\]$|\{\}$/, '');
      const info = entry === name ? typed.field(name) : typed.field(name)?.elements();
      if (!isDeepStrictEqual(info?.default, {})) wrong.push(`typed ${definition}.${entry}: ${JSON.stringify(info?.default)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('OpenAPI v3 says {} where upstream does, v2 never (as upstream\'s v2)', () => {
  const service = new OpenApiService(catalogRegistry());
  const v3: Record<string, unknown> = {};
  for (const rep of service.v3Documents().docs.values()) Object.assign(v3, JSON.parse(rep.body.toString()).components?.schemas ?? {});
  const v2 = service.v2Document().doc.definitions as Record<string, unknown>;
  const wrong: string[] = [];
  for (const [definition, entries] of upstreamValueStructs) {
    const name = ourName(definition);
    // Versions off by default (v1beta1 policies) are in no served document.
    if (v3[name] === undefined && v2[name] === undefined) continue;
    for (const entry of entries) {
      if (!isDeepStrictEqual(rendered(v3[name], entry)?.default, {})) wrong.push(`v3 ${definition}.${entry}: ${JSON.stringify(rendered(v3[name], entry)?.default)}`);
      if (rendered(v2[name], entry)?.default !== undefined) wrong.push(`v2 ${definition}.${entry}: ${JSON.stringify(rendered(v2[name], entry)?.default)}`);
    }
  }
  // Nothing else has one: a pointer struct (a container's securityContext) stays without.
  const container = v3[ourName('core.v1.Container')] as { properties: Record<string, { default?: unknown }> };
  assert.equal(container.properties.securityContext!.default, undefined);
  assert.deepEqual(wrong, []);
});

test('every list-map key of a built-in kind has a default, or none upstream either', () => {
  // Upstream's own exception: a ServiceAccount's secrets are keyed by an optional name.
  const upstreamLacks = new Set([`${ourName('core.v1.ObjectReference')}.name`]);
  const missing: string[] = [];
  const seen = new Set<Schema>();
  const walk = (s: Schema | undefined): void => {
    if (!s || seen.has(s)) return;
    seen.add(s);
    const r = resolve(s);
    if (r.type === 'array' && (s.listType ?? r.listType) === 'map' && r.items) {
      const item = resolve(r.items);
      for (const key of s.listMapKeys ?? r.listMapKeys ?? []) {
        const field = item.properties?.[key];
        const where = `${item.name ?? '(inline)'}.${key}`;
        if ((field?.default ?? (field && resolve(field).default)) === undefined && !upstreamLacks.has(where)) missing.push(where);
      }
    }
    for (const p of Object.values(r.properties ?? {})) walk(p);
    walk(r.items);
    if (typeof r.additionalProperties === 'object') walk(r.additionalProperties);
  };
  for (const kind of builtinKinds) walk(kind.schema);
  assert.deepEqual(missing, []);
});
