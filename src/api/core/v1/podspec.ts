// PodSpec (upstream 1.32): containers, volumes, scheduling (affinity,
// tolerations, topology spread), DNS and the pod-level security context, with
// upstream's protobuf field numbers, merge keys and list types. Pod,
// PodTemplate and every kind that carries a pod template use it.

import { define, p, t, type Schema } from '../../schema.js';
import { LabelSelector, ObjectMeta } from '../../meta/v1.js';
import { core, LocalObjectReference } from './common.js';
import {
  AppArmorProfile, Container, EphemeralContainer, mergedBy, ResourceRequirements, resourceList, SeccompProfile, SELinuxOptions, WindowsSecurityContextOptions,
} from './containers.js';
import { Volume } from './volumes.js';

const s = t.string;
const strings = (description: string): Schema => t.array(s(), description, { listType: 'atomic' });

const NodeSelectorRequirement = define(core('NodeSelectorRequirement'), t.object({
  key: p(1, s('The label key the selector applies to.')),
  operator: p(2, s('In, NotIn, Exists, DoesNotExist, Gt or Lt.', { enum: ['DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn'] })),
  values: p(3, strings('Values for In and NotIn; one integer for Gt and Lt; none for Exists and DoesNotExist.')),
}, 'A key, an operator and values a node\'s labels or fields must satisfy.', { required: ['key', 'operator'] }));

export const NodeSelectorTerm = define(core('NodeSelectorTerm'), t.object({
  matchExpressions: p(1, t.array(t.ref(NodeSelectorRequirement), 'Requirements on the node\'s labels.', { listType: 'atomic' })),
  matchFields: p(2, t.array(t.ref(NodeSelectorRequirement), 'Requirements on the node\'s fields.', { listType: 'atomic' })),
}, 'Requirements that must all hold; an empty term matches nothing.', { mapType: 'atomic' }));

export const NodeSelector = define(core('NodeSelector'), t.object({
  nodeSelectorTerms: p(1, t.array(t.ref(NodeSelectorTerm), 'Terms of which at least one must hold.', { listType: 'atomic' })),
}, 'Selects nodes: the terms are ORed.', { required: ['nodeSelectorTerms'], mapType: 'atomic' }));

const PreferredSchedulingTerm = define(core('PreferredSchedulingTerm'), t.object({
  weight: p(1, t.int32('Weight of the term, 1-100.'), 'always'),
  preference: p(2, t.ref(NodeSelectorTerm, 'The node selector term.'), 'always'),
}, 'A weighted node preference.', { required: ['weight', 'preference'] }));

const PodAffinityTerm = define(core('PodAffinityTerm'), t.object({
  labelSelector: p(1, t.ref(LabelSelector, 'Pods this term is about.')),
  namespaces: p(2, strings('Namespaces of those pods; the pod\'s own when unset with no namespaceSelector.')),
  topologyKey: p(3, s('Node label key whose value groups nodes into domains; not empty.')),
  namespaceSelector: p(4, t.ref(LabelSelector, 'Namespaces of those pods, by their labels.')),
  matchLabelKeys: p(5, strings('Label keys whose values are taken from the incoming pod and ANDed with labelSelector.')),
  mismatchLabelKeys: p(6, strings('Label keys whose values are taken from the incoming pod and excluded from labelSelector.')),
}, 'A set of pods and a topology domain for (anti-)affinity.', { required: ['topologyKey'] }));

const WeightedPodAffinityTerm = define(core('WeightedPodAffinityTerm'), t.object({
  weight: p(1, t.int32('Weight of the term, 1-100.'), 'always'),
  podAffinityTerm: p(2, t.ref(PodAffinityTerm, 'The pod affinity term.'), 'always'),
}, 'A weighted pod (anti-)affinity term.', { required: ['weight', 'podAffinityTerm'] }));

const podAffinity = (name: string, description: string) => define(core(name), t.object({
  requiredDuringSchedulingIgnoredDuringExecution: p(1, t.array(t.ref(PodAffinityTerm), 'Terms that must hold for the pod to be scheduled.', { listType: 'atomic' })),
  preferredDuringSchedulingIgnoredDuringExecution: p(2, t.array(t.ref(WeightedPodAffinityTerm), 'Terms the scheduler prefers to hold.', { listType: 'atomic' })),
}, description));

const Affinity = define(core('Affinity'), t.object({
  nodeAffinity: p(1, t.ref(define(core('NodeAffinity'), t.object({
    requiredDuringSchedulingIgnoredDuringExecution: p(1, t.ref(NodeSelector, 'Nodes the pod must be scheduled to.')),
    preferredDuringSchedulingIgnoredDuringExecution: p(2, t.array(t.ref(PreferredSchedulingTerm), 'Nodes the scheduler prefers.', { listType: 'atomic' })),
  }, 'Node affinity scheduling rules.')), 'Rules about the nodes the pod may run on.')),
  podAffinity: p(2, t.ref(podAffinity('PodAffinity', 'Pod affinity scheduling rules.'), 'Pods this pod should run near.')),
  podAntiAffinity: p(3, t.ref(podAffinity('PodAntiAffinity', 'Pod anti-affinity scheduling rules.'), 'Pods this pod should not run near.')),
}, 'Affinity scheduling rules.'));

export const Toleration = define(core('Toleration'), t.object({
  key: p(1, s('Taint key the toleration applies to; every key when empty (with operator Exists).')),
  operator: p(2, s('Exists or Equal; Equal when unset.', { enum: ['Equal', 'Exists'] })),
  value: p(3, s('Taint value to match; empty with Exists.')),
  effect: p(4, s('NoSchedule, PreferNoSchedule or NoExecute; every effect when empty.', { enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] })),
  tolerationSeconds: p(5, t.int64('How long a NoExecute taint is tolerated; forever when unset.')),
}, 'Lets the pod run on nodes with a matching taint.'));

const PodSecurityContext = define(core('PodSecurityContext'), t.object({
  seLinuxOptions: p(1, t.ref(SELinuxOptions, 'SELinux context for every container.')),
  windowsOptions: p(8, t.ref(WindowsSecurityContextOptions, 'Windows-specific settings of every container.')),
  runAsUser: p(2, t.int64('UID to run the entrypoints as.')),
  runAsGroup: p(6, t.int64('GID to run the entrypoints as.')),
  runAsNonRoot: p(3, t.bool('Requires the containers to run as a non-root user.')),
  supplementalGroups: p(4, t.array(t.int64(), 'Groups added to each container\'s first process.', { listType: 'atomic' })),
  supplementalGroupsPolicy: p(12, s('Merge or Strict: how supplemental groups are computed.')),
  fsGroup: p(5, t.int64('Group that owns the pod\'s volumes.')),
  sysctls: p(7, t.array(t.ref(define(core('Sysctl'), t.object({
    name: p(1, s('Name of the property.')), value: p(2, s('Value of the property.')),
  }, 'A kernel parameter to set.', { required: ['name', 'value'] }))), 'Namespaced kernel parameters.', { listType: 'atomic' })),
  fsGroupChangePolicy: p(9, s('OnRootMismatch or Always.')),
  seccompProfile: p(10, t.ref(SeccompProfile, 'Seccomp options of every container.')),
  appArmorProfile: p(11, t.ref(AppArmorProfile, 'AppArmor options of every container.')),
  seLinuxChangePolicy: p(13, s('MountOption or Recursive: how the SELinux label reaches volumes.')),
}, 'Security options of every container of the pod.'));

const TopologySpreadConstraint = define(core('TopologySpreadConstraint'), t.object({
  maxSkew: p(1, t.int32('How unevenly matching pods may be spread (at least 1).'), 'always'),
  topologyKey: p(2, s('Node label key of the topology domains.')),
  whenUnsatisfiable: p(3, s('DoNotSchedule or ScheduleAnyway.', { enum: ['DoNotSchedule', 'ScheduleAnyway'] })),
  labelSelector: p(4, t.ref(LabelSelector, 'Pods counted in each domain.')),
  minDomains: p(5, t.int32('Minimum number of eligible domains.')),
  nodeAffinityPolicy: p(6, s('Honor or Ignore: whether the pod\'s node affinity limits the domains.')),
  nodeTaintsPolicy: p(7, s('Honor or Ignore: whether node taints limit the domains.')),
  matchLabelKeys: p(8, strings('Label keys whose values are taken from the incoming pod.')),
}, 'How matching pods are spread across topology domains.', { required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] }));

export const PodSpec = define(core('PodSpec'), t.object({
  volumes: p(1, mergedBy('name', t.ref(Volume), 'Volumes the containers can mount.', 'merge,retainKeys')),
  initContainers: p(20, mergedBy('name', t.ref(Container), 'Containers run in order before the app containers start.')),
  containers: p(2, mergedBy('name', t.ref(Container), 'The pod\'s containers: at least one, which cannot be added or removed.')),
  ephemeralContainers: p(34, mergedBy('name', t.ref(EphemeralContainer), 'Debugging containers added through the ephemeralcontainers sub-resource.')),
  restartPolicy: p(3, s('Always, OnFailure or Never; Always when unset.', { enum: ['Always', 'Never', 'OnFailure'] })),
  terminationGracePeriodSeconds: p(4, t.int64('Seconds the pod is given to stop gracefully; 30 when unset.')),
  activeDeadlineSeconds: p(5, t.int64('Seconds the pod may be active before it is failed.')),
  dnsPolicy: p(6, s('ClusterFirstWithHostNet, ClusterFirst, Default or None; ClusterFirst when unset.', { enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] })),
  nodeSelector: p(7, { ...t.map(s(), 'Labels a node must carry for the pod to run there.'), mapType: 'atomic' }),
  serviceAccountName: p(8, s('Service account the pod runs as.')),
  serviceAccount: p(9, s('Deprecated alias of serviceAccountName.')),
  automountServiceAccountToken: p(21, t.bool('Whether a service account token is mounted automatically.')),
  nodeName: p(10, s('Node the pod is bound to; set through the binding sub-resource.')),
  hostNetwork: p(11, t.bool('Uses the host\'s network namespace.')),
  hostPID: p(12, t.bool('Uses the host\'s PID namespace.')),
  hostIPC: p(13, t.bool('Uses the host\'s IPC namespace.')),
  shareProcessNamespace: p(27, t.bool('One process namespace shared by all the containers.')),
  securityContext: p(14, t.ref(PodSecurityContext, 'Pod-level security attributes.')),
  imagePullSecrets: p(15, mergedBy('name', t.ref(LocalObjectReference), 'Secrets used to pull the images.')),
  hostname: p(16, s('Hostname of the pod; the pod\'s name when unset.')),
  subdomain: p(17, s('Subdomain: the pod\'s FQDN is <hostname>.<subdomain>.<namespace>.svc.<cluster domain>.')),
  affinity: p(18, t.ref(Affinity, 'Scheduling constraints.')),
  schedulerName: p(19, s('Scheduler that schedules the pod; default-scheduler when unset.')),
  tolerations: p(22, t.array(t.ref(Toleration), 'Taints the pod tolerates.', { listType: 'atomic' })),
  hostAliases: p(23, mergedBy('ip', t.ref(define(core('HostAlias'), t.object({
    ip: p(1, s('IP address of the host file entry.')), hostnames: p(2, strings('Hostnames for that address.')),
  }, 'An entry of the pod\'s hosts file.', { required: ['ip'] }))), 'Entries added to the pod\'s hosts file.')),
  priorityClassName: p(24, s('Name of the pod\'s PriorityClass.')),
  priority: p(25, t.int32('Priority value, filled from the priority class by admission.')),
  dnsConfig: p(26, t.ref(define(core('PodDNSConfig'), t.object({
    nameservers: p(1, strings('DNS server IP addresses.')),
    searches: p(2, strings('DNS search domains.')),
    options: p(3, t.array(t.ref(define(core('PodDNSConfigOption'), t.object({
      name: p(1, s('Name of the resolver option.')), value: p(2, s('Value of the option.')),
    }, 'A resolver option.'))), 'Resolver options.', { listType: 'atomic' })),
  }, 'DNS parameters beyond those of the DNS policy.')), 'DNS parameters of the pod.')),
  readinessGates: p(28, t.array(t.ref(define(core('PodReadinessGate'), t.object({
    conditionType: p(1, s('A condition type of the pod\'s conditions.')),
  }, 'A pod condition the pod\'s readiness also waits for.', { required: ['conditionType'] }))), 'More conditions the pod\'s readiness waits for.', { listType: 'atomic' })),
  runtimeClassName: p(29, s('Name of the RuntimeClass to run the pod with.')),
  enableServiceLinks: p(30, t.bool('Whether services are injected as environment variables; true when unset.')),
  preemptionPolicy: p(31, s('Never or PreemptLowerPriority.')),
  overhead: p(32, resourceList('Resources the pod\'s sandbox uses, set by RuntimeClass admission.')),
  topologySpreadConstraints: p(33, t.array(t.ref(TopologySpreadConstraint), 'How the pod is spread across topology domains.', {
    patchMergeKey: 'topologyKey', patchStrategy: 'merge', listType: 'map', listMapKeys: ['topologyKey', 'whenUnsatisfiable'],
  })),
  setHostnameAsFQDN: p(35, t.bool('Sets the hostname to the pod\'s FQDN.')),
  os: p(36, t.ref(define(core('PodOS'), t.object({ name: p(1, s('linux or windows.')) }, 'The OS of the pod\'s containers.', { required: ['name'] })), 'OS of the pod\'s containers.')),
  hostUsers: p(37, t.bool('Whether the host\'s user namespace is used; true when unset.')),
  schedulingGates: p(38, mergedBy('name', t.ref(define(core('PodSchedulingGate'), t.object({
    name: p(1, s('Name of the gate.')),
  }, 'A gate that holds the pod back from scheduling.', { required: ['name'] }))), 'Gates the pod waits for before it is scheduled; only removable.')),
  resourceClaims: p(39, mergedBy('name', t.ref(define(core('PodResourceClaim'), t.object({
    name: p(1, s('Name of the claim within the pod (a DNS label).')),
    resourceClaimName: p(3, s('Name of a ResourceClaim in the pod\'s namespace.')),
    resourceClaimTemplateName: p(4, s('Name of a ResourceClaimTemplate to make the claim from.')),
  }, 'A resource claim of the pod.', { required: ['name'] }))), 'Resource claims the containers may use.', 'merge,retainKeys')),
  resources: p(40, t.ref(ResourceRequirements, 'Resources of the pod as a whole.')),
}, 'The specification of a pod.', { required: ['containers'] }));

export const PodTemplateSpec = define(core('PodTemplateSpec'), t.object({
  metadata: p(1, t.ref(ObjectMeta, 'Metadata of the pods made from the template.'), 'always'),
  spec: p(2, t.ref(PodSpec, 'Specification of the pods made from the template.'), 'always'),
}, 'What pods made from a template look like.'));
