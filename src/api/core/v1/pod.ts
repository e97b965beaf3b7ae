// Pod (core v1): upstream 1.32's fields, defaults, validation and columns.
// The spec's types live in podspec.ts, containers.ts and volumes.ts; the
// rules a schema cannot say in podvalidation.ts. Sub-resources: status,
// ephemeralcontainers and resize are parts of the object declared here;
// binding and the node-agent ones (log, exec, ...) are REST objects of the
// registry (registry/pods.ts).

import { define, p, t } from '../../schema.js';
import { validatePodStatusUpdate } from './statusvalidation.js';
import { defineKind, type KubeObject, type PartSubresource, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { parseQuantity } from '../../../machinery/quantity.js';
import { setOwn } from '../../../machinery/ownkeys.js';
import { Time } from '../../meta/v1.js';

import { core, kindSchema, nameColumn, ageColumn } from './common.js';
import { mergedBy, ResourceRequirements, resourceList } from './containers.js';
import { PodSpec } from './podspec.js';
import { validatePodSpec, validatePodSpecUpdate } from './podvalidation.js';

const s = t.string;

const PodCondition = define(core('PodCondition'), t.object({
  type: p(1, s('Type of the condition: PodScheduled, Ready, Initialized, ContainersReady, ...')),
  status: p(2, s('True, False or Unknown.')),
  lastProbeTime: p(3, t.ref(Time, 'When the condition was last probed.'), 'always'),
  lastTransitionTime: p(4, t.ref(Time, 'When the condition last changed status.'), 'always'),
  reason: p(5, s('Machine-readable reason of the last change.')),
  message: p(6, s('Human-readable details of the last change.')),
}, 'A condition of a pod.', { required: ['type', 'status'] }));

const ContainerState = define(core('ContainerState'), t.object({
  waiting: p(1, t.ref(define(core('ContainerStateWaiting'), t.object({
    reason: p(1, s('Why the container is not yet running.')), message: p(2, s('Details.')),
  }, 'A container waiting to run.')), 'Details of a waiting container.')),
  running: p(2, t.ref(define(core('ContainerStateRunning'), t.object({
    startedAt: p(1, t.ref(Time, 'When the container last (re)started.'), 'always'),
  }, 'A running container.')), 'Details of a running container.')),
  terminated: p(3, t.ref(define(core('ContainerStateTerminated'), t.object({
    exitCode: p(1, t.int32('Exit status of the last termination.'), 'always'),
    signal: p(2, t.int32('Signal of the last termination.'), 'always'),
    reason: p(3, s('Reason of the last termination.')),
    message: p(4, s('Message of the last termination.')),
    startedAt: p(5, t.ref(Time, 'When the execution started.'), 'always'),
    finishedAt: p(6, t.ref(Time, 'When the container last terminated.'), 'always'),
    containerID: p(7, s('Container ID, as <type>://<id>.')),
  }, 'A terminated container.', { required: ['exitCode'] })), 'Details of a terminated container.')),
}, 'The state of a container: at most one member is set.'));

const ContainerStatus = define(core('ContainerStatus'), t.object({
  name: p(1, s('Name of the container in the spec.')),
  state: p(2, t.ref(ContainerState, 'Current state.'), 'always'),
  lastState: p(3, t.ref(ContainerState, 'Last termination state.'), 'always'),
  ready: p(4, t.bool('Whether the container passes its readiness probe.'), 'always'),
  restartCount: p(5, t.int32('Times the container was restarted.'), 'always'),
  image: p(6, s('The image the container runs.')),
  imageID: p(7, s('The image\'s ID.')),
  containerID: p(8, s('Container ID, as <type>://<id>.')),
  started: p(9, t.bool('Whether the container passed its startup probe.')),
  allocatedResources: p(10, resourceList('Resources the node allocated to the container.')),
  resources: p(11, t.ref(ResourceRequirements, 'Resources the container runtime reports as applied.')),
  volumeMounts: p(12, mergedBy('mountPath', t.ref(define(core('VolumeMountStatus'), t.object({
    name: p(1, s('Name of the volume.')), mountPath: p(2, s('Path of the mount.')), readOnly: p(3, t.bool('Read-only mount.')),
    recursiveReadOnly: p(4, s('Disabled or Enabled.')),
  }, 'A volume mount as mounted.', { required: ['name', 'mountPath'] }))), 'Volume mounts as mounted.')),
  user: p(13, t.ref(define(core('ContainerUser'), t.object({
    linux: p(1, t.ref(define(core('LinuxContainerUser'), t.object({
      uid: p(1, t.int64('UID of the first process.'), 'always'), gid: p(2, t.int64('GID of the first process.'), 'always'),
      supplementalGroups: p(3, t.array(t.int64(), 'Supplemental groups of the first process.', { listType: 'atomic' })),
    }, 'Linux identity of the first process.', { required: ['uid', 'gid'] })), 'Linux identity.')),
  }, 'Identity of the container\'s first process.')), 'Identity of the first process.')),
  allocatedResourcesStatus: p(14, t.array(t.ref(define(core('ResourceStatus'), t.object({
    name: p(1, s('Name of the resource.')),
    resources: p(2, t.array(t.ref(define(core('ResourceHealth'), t.object({
      resourceID: p(1, s('ID of the resource.')), health: p(2, s('Healthy, Unhealthy or Unknown.')),
    }, 'Health of one resource.', { required: ['resourceID'] }))), 'Health of each resource.', { listType: 'map', listMapKeys: ['resourceID'] })),
  }, 'Health of the resources allocated to a container.', { required: ['name'] }))), 'Health of allocated resources.', {
    patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'],
  })),
}, 'Status of one container.', { required: ['name', 'ready', 'restartCount', 'image', 'imageID'] }));

const ip = (name: string, description: string) => define(core(name), t.object({ ip: p(1, s('An IP address.')) }, description, { required: ['ip'] }));
const statuses = (description: string) => t.array(t.ref(ContainerStatus), description, { listType: 'atomic' });

export const PodStatus = define(core('PodStatus'), t.object({
  phase: p(1, s('Pending, Running, Succeeded, Failed or Unknown.', { enum: ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'] })),
  conditions: p(2, mergedBy('type', t.ref(PodCondition), 'Current service state of the pod.')),
  message: p(3, s('Why the pod is in this condition.')),
  reason: p(4, s('Brief CamelCase reason, e.g. Evicted.')),
  nominatedNodeName: p(11, s('Node the pod may be scheduled to once preemption frees it.')),
  hostIP: p(5, s('IP address of the pod\'s node.')),
  hostIPs: p(16, t.array(t.ref(ip('HostIP', 'An IP address of the host.')), 'IP addresses of the host.', { patchMergeKey: 'ip', patchStrategy: 'merge', listType: 'atomic' })),
  podIP: p(6, s('IP address of the pod.')),
  podIPs: p(12, mergedBy('ip', t.ref(ip('PodIP', 'An IP address of the pod.')), 'IP addresses of the pod (IPv4, IPv6).')),
  startTime: p(7, t.ref(Time, 'When the node acknowledged the pod.')),
  initContainerStatuses: p(10, statuses('Statuses of the init containers.')),
  containerStatuses: p(8, statuses('Statuses of the containers.')),
  qosClass: p(9, s('Guaranteed, Burstable or BestEffort.', { enum: ['BestEffort', 'Burstable', 'Guaranteed'] })),
  ephemeralContainerStatuses: p(13, statuses('Statuses of the ephemeral containers.')),
  resize: p(14, s('Status of a resize: Proposed, InProgress, Deferred or Infeasible.')),
  resourceClaimStatuses: p(15, mergedBy('name', t.ref(define(core('PodResourceClaimStatus'), t.object({
    name: p(1, s('Name of the entry of spec.resourceClaims.')), resourceClaimName: p(2, s('Name of the ResourceClaim made for it.')),
  }, 'The ResourceClaim made for one entry of spec.resourceClaims.', { required: ['name'] }))), 'Claims made for the pod.', 'merge,retainKeys')),
}, 'Most recently observed status of a pod.'));

const schema = kindSchema('A collection of containers run together on one host.', {
  spec: p(2, t.ref(PodSpec, 'Desired behaviour of the pod.'), 'always'),
  status: p(3, t.ref(PodStatus, 'Most recently observed status; read-only for clients.'), 'always'),
});

type Obj = Record<string, any>;

/** An image with the latest tag or no tag is pulled always; others if not present, as upstream. */
function pullPolicyFor(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  const tag = colon < 0 ? '' : lastSegment.slice(colon + 1);
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(probe: Obj | undefined): void {
  if (!probe) return;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (probe.httpGet) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
}

function defaultContainer(c: Obj, hostNetwork: boolean): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.imagePullPolicy ??= pullPolicyFor(c.image);
  for (const port of c.ports ?? []) {
    port.protocol ??= 'TCP';
    if (hostNetwork && !port.hostPort) port.hostPort = port.containerPort;
  }
  for (const env of c.env ?? []) if (env.valueFrom?.fieldRef) env.valueFrom.fieldRef.apiVersion ??= 'v1';
  // Requests default to limits, per resource.
  const limits = c.resources?.limits;
  if (limits && Object.keys(limits).length) {
    c.resources.requests ??= {};
    for (const [name, value] of Object.entries(limits)) if (!Object.hasOwn(c.resources.requests, name)) setOwn(c.resources.requests, name, value);
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  for (const hook of [c.lifecycle?.postStart, c.lifecycle?.preStop]) {
    if (hook?.httpGet) {
      hook.httpGet.path ??= '/';
      hook.httpGet.scheme ??= 'HTTP';
    }
  }
}

/** Modes of files made from keys, 0644 (420) unless given, as upstream. */
const defaultFileMode = 420;

function defaultVolume(v: Obj): void {
  if (v.secret) v.secret.defaultMode ??= defaultFileMode;
  if (v.configMap) v.configMap.defaultMode ??= defaultFileMode;
  if (v.downwardAPI) v.downwardAPI.defaultMode ??= defaultFileMode;
  if (v.projected) {
    v.projected.defaultMode ??= defaultFileMode;
    for (const src of v.projected.sources ?? []) if (src.serviceAccountToken) src.serviceAccountToken.expirationSeconds ??= 3600;
  }
  for (const item of v.downwardAPI?.items ?? []) if (item.fieldRef) item.fieldRef.apiVersion ??= 'v1';
  if (v.hostPath) v.hostPath.type ??= '';
  if (v.iscsi) v.iscsi.iscsiInterface ??= 'default';
  if (v.rbd) {
    v.rbd.pool ??= 'rbd';
    v.rbd.user ??= 'admin';
    v.rbd.keyring ??= '/etc/ceph/keyring';
  }
  if (v.azureDisk) {
    v.azureDisk.cachingMode ??= 'ReadWrite';
    v.azureDisk.fsType ??= 'ext4';
    v.azureDisk.readOnly ??= false;
    v.azureDisk.kind ??= 'Shared';
  }
  if (v.ephemeral?.volumeClaimTemplate?.spec) v.ephemeral.volumeClaimTemplate.spec.volumeMode ??= 'Filesystem';
}

/** Upstream's defaults of a pod spec (pods and pod templates). */
export function defaultPodSpec(spec: Obj | undefined): void {
  if (!spec) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  // serviceAccount is the deprecated name of serviceAccountName: both carry the same value.
  if (!spec.serviceAccountName && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  const hostNetwork = spec.hostNetwork === true;
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) for (const c of list ?? []) defaultContainer(c, hostNetwork);
  for (const v of spec.volumes ?? []) defaultVolume(v);
}

const qosResources = ['cpu', 'memory'];

/** The pod's quality-of-service class, as upstream computes it from requests and limits. */
export function qosClassOf(spec: Obj | undefined): string {
  const containers: Obj[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests: Obj = c.resources?.requests ?? {};
    const limits: Obj = c.resources?.limits ?? {};
    for (const r of qosResources) {
      const req = requests[r] !== undefined ? parseQuantity(String(requests[r])).nanos : 0n;
      const lim = limits[r] !== undefined ? parseQuantity(String(limits[r])).nanos : 0n;
      if (req !== 0n || lim !== 0n) any = true;
      if (lim === 0n || req !== lim) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Adds ephemeral containers; a write of the main resource that changes them is refused by the spec's update rule, as upstream. */
const ephemeralContainers: PartSubresource = {
  owns: [],
  verbs: ['get', 'update', 'patch'],
  merge(sent, stored) {
    const next = structuredClone(stored);
    next.spec = { ...next.spec, ephemeralContainers: sent.spec?.ephemeralContainers };
    if (next.spec.ephemeralContainers === undefined) delete next.spec.ephemeralContainers;
    return next;
  },
  validateUpdate(pod, old) {
    const errs = validatePodSpec(pod.spec).filter((e) => e.field.startsWith('spec.ephemeralContainers'));
    const added = new Map<string, Obj>((pod.spec?.ephemeralContainers ?? []).map((c: Obj) => [c.name, c]));
    for (const before of (old.spec?.ephemeralContainers ?? []) as Obj[]) {
      const now = added.get(before.name);
      if (!now) errs.push(fieldErrors.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${before.name}" may not be removed\n`));
      else if (!deepEqual(now, before)) errs.push(fieldErrors.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${before.name}" may not be changed\n`));
    }
    return errs;
  },
};

/** resize changes the resources (and resize policy) of containers, nothing else. */
const resize: PartSubresource = {
  owns: [],
  verbs: ['get', 'update', 'patch'],
  merge(sent, stored) {
    const next = structuredClone(stored);
    const asked = new Map<string, Obj>((sent.spec?.containers ?? []).map((c: Obj) => [c.name, c]));
    for (const c of (next.spec?.containers ?? []) as Obj[]) {
      const a = asked.get(c.name);
      if (!a) continue;
      c.resources = a.resources ?? {};
      if (a.resizePolicy) c.resizePolicy = a.resizePolicy;
    }
    return next;
  },
  validateUpdate(pod, old) {
    const errs = validatePodSpec(pod.spec).filter((e) => /^spec\.containers\[\d+\]\.resources/.test(e.field));
    if (qosClassOf(pod.spec) !== (old.status?.qosClass ?? qosClassOf(old.spec))) errs.push(fieldErrors.invalid('spec', qosClassOf(pod.spec), 'Pod QOS Class may not change as a result of resizing'));
    return errs;
  },
};

/** What a binding writes (registry/pods.ts builds it from the live pod): node name, annotations, the PodScheduled condition. */
const binding: PartSubresource = {
  owns: [],
  verbs: [],
  merge: (sent) => sent,
  validateUpdate: () => [],
};

function validatePod(pod: KubeObject): FieldError[] {
  return validatePodSpec(pod.spec);
}

function validatePodUpdate(pod: KubeObject, old: KubeObject): FieldError[] {
  return [...validatePodSpec(pod.spec), ...validatePodSpecUpdate(pod, old)];
}

// ---- printing, as upstream's printPod ----

function podStatusSummary(pod: KubeObject): { reason: string; ready: number; total: number; restarts: number } {
  const status: Obj = pod.status ?? {};
  let reason: string = status.reason || status.phase || '';
  for (const c of (status.conditions ?? []) as Obj[]) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  let restarts = 0;
  let ready = 0;
  let initializing = false;
  const initStatuses: Obj[] = status.initContainerStatuses ?? [];
  initStatuses.forEach((c, i) => {
    restarts += c.restartCount ?? 0;
    const term = c.state?.terminated;
    if (term && term.exitCode === 0) return;
    initializing = true;
    if (term) reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${(pod.spec?.initContainers ?? []).length}`;
  });
  const initialized = (status.conditions ?? []).some((c: Obj) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = 0;
    let running = false;
    const statuses: Obj[] = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += c.restartCount ?? 0;
      const term = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode}`;
      else if (c.ready && c.state?.running) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) reason = (status.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return { reason, ready, total: (pod.spec?.containers ?? []).length, restarts };
}

function readinessGates(pod: KubeObject): string {
  const gates: Obj[] = pod.spec?.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  const trueConditions = gates.filter((g) => (pod.status?.conditions ?? []).some((c: Obj) => c.type === g.conditionType && c.status === 'True')).length;
  return `${trueConditions}/${gates.length}`;
}

const orNone = (v: unknown) => (v === undefined || v === '' ? '<none>' : v);

/**
 * Upstream's CheckGracefulDelete of pods: the request's period, else the
 * pod's terminationGracePeriodSeconds; a pod no node runs, or one that has
 * finished, goes at once.
 */
function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  if (!pod.spec?.nodeName) return 0;
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return 0;
  const period = requested ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
  return period < 0 ? 1 : period;
}

export const pods = defineKind({
  group: '', version: 'v1', kind: 'Pod', plural: 'pods', shortNames: ['po'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('Pod'), schema),
  deleteReturnsObject: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validatePodStatusUpdate }, ephemeralcontainers: ephemeralContainers, resize, binding },
  strategy: {
    defaults(pod) {
      defaultPodSpec(pod.spec);
    },
    prepareForCreate(pod) {
      pod.status = { phase: 'Pending', qosClass: qosClassOf(pod.spec) };
    },
    validate: validatePod,
    validateUpdate: validatePodUpdate,
    gracePeriod: podGracePeriod,
  },
  fieldSelectors: {
    'spec.nodeName': (pod) => pod.spec?.nodeName ?? '',
    'spec.restartPolicy': (pod) => pod.spec?.restartPolicy ?? '',
    'spec.schedulerName': (pod) => pod.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (pod) => pod.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (pod) => String(pod.spec?.hostNetwork === true),
    'status.phase': (pod) => pod.status?.phase ?? '',
    'status.podIP': (pod) => pod.status?.podIP ?? '',
    'status.nominatedNodeName': (pod) => pod.status?.nominatedNodeName ?? '',
  },
  // Upstream's watch cache indexes pods by node (every node agent lists and watches its own).
  indexedFieldSelectors: ['spec.nodeName'],
  printerColumns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', value: (pod) => { const s = podStatusSummary(pod); return `${s.ready}/${s.total}`; } },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', value: (pod) => podStatusSummary(pod).reason },
    { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', value: (pod) => String(podStatusSummary(pod).restarts) },
    ageColumn,
    { name: 'IP', type: 'string', priority: 1, description: 'The IP address of the pod.', value: (pod) => orNone(pod.status?.podIP) },
    { name: 'Node', type: 'string', priority: 1, description: 'The name of the node the pod is assigned to.', value: (pod) => orNone(pod.spec?.nodeName) },
    { name: 'Nominated Node', type: 'string', priority: 1, description: 'The node the pod is nominated to run on once preemption frees it.', value: (pod) => orNone(pod.status?.nominatedNodeName) },
    { name: 'Readiness Gates', type: 'string', priority: 1, description: 'Pod readiness gates: how many hold, of how many.', value: readinessGates },
  ],
});


