// Node (core v1, cluster-scoped): upstream 1.32's fields, printer columns
// (normal and wide), the status part (written by a node agent; status is
// accepted on create, as upstream lets an agent register with it) and
// `spec.unschedulable` for cordon. Its proxy sub-resource answers without
// dialing (registry/nodes.ts).

import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isQualifiedName, isLabelValue } from '../../../machinery/validation.js';
import { Time } from '../../meta/v1.js';
import { core, kindSchema, nameColumn, ageColumn } from './common.js';
import { mergedBy, resourceList } from './containers.js';
import { validateResourceList } from './podvalidation.js';
import { vocabulary } from '../../../machinery/vocabulary.js';

const s = t.string;
type Obj = Record<string, any>;

const Taint = define(core('Taint'), t.object({
  key: p(1, s('Taint key applied to the node.')),
  value: p(2, s('Taint value for the key.')),
  effect: p(3, s('NoSchedule, PreferNoSchedule or NoExecute.', { enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] })),
  timeAdded: p(4, t.ref(Time, 'When a NoExecute taint was added.')),
}, 'Keeps pods that do not tolerate it off the node.', { required: ['key', 'effect'] }));

const configMapSource = define(core('ConfigMapNodeConfigSource'), t.object({
  namespace: p(1, s('Namespace of the ConfigMap.')), name: p(2, s('Name of the ConfigMap.')), uid: p(3, s('UID of the ConfigMap.')),
  resourceVersion: p(4, s('resourceVersion of the ConfigMap.')), kubeletConfigKey: p(5, s('Key of the kubelet\'s configuration.')),
}, 'Deprecated: a ConfigMap holding a node\'s configuration.', { required: ['namespace', 'name', 'kubeletConfigKey'] }));
const NodeConfigSource = define(core('NodeConfigSource'), t.object({
  configMap: p(2, t.ref(configMapSource, 'The ConfigMap.')),
}, 'Deprecated: where a node\'s configuration comes from.'));

const NodeSpec = define(core('NodeSpec'), t.object({
  podCIDR: p(1, s('Range of pod IPs of the node.')),
  podCIDRs: p(7, t.array(s(), 'Pod IP ranges of the node (one per IP family).', { patchStrategy: 'merge', listType: 'set' })),
  providerID: p(3, s('ID of the node at its cloud provider.')),
  unschedulable: p(4, t.bool('Keeps new pods off the node (cordon).')),
  taints: p(5, t.array(t.ref(Taint), 'Taints of the node.', { listType: 'atomic' })),
  configSource: p(6, t.ref(NodeConfigSource, 'Deprecated; no longer used.')),
  externalID: p(2, s('Deprecated; not set by new agents.')),
}, 'Desired state of a node.'));

const NodeStatus = define(core('NodeStatus'), t.object({
  capacity: p(1, resourceList('Total resources of the node.')),
  allocatable: p(2, resourceList('Resources available for scheduling; capacity when unset.')),
  phase: p(3, s('Deprecated: Pending, Running or Terminated.')),
  conditions: p(4, mergedBy('type', t.ref(define(core('NodeCondition'), t.object({
    type: p(1, s('Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.')),
    status: p(2, s('True, False or Unknown.')),
    lastHeartbeatTime: p(3, t.ref(Time, 'When the condition was last reported.'), 'always'),
    lastTransitionTime: p(4, t.ref(Time, 'When the status last changed.'), 'always'),
    reason: p(5, s('Machine-readable reason of the last change.')),
    message: p(6, s('Human-readable details.')),
  }, 'A condition of a node.', { required: ['type', 'status'] }))), 'Current conditions of the node.')),
  addresses: p(5, mergedBy('type', t.ref(define(core('NodeAddress'), t.object({
    type: p(1, s('Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.')),
    address: p(2, s('The address.')),
  }, 'An address of a node.', { required: ['type', 'address'] }))), 'Addresses of the node.')),
  daemonEndpoints: p(6, t.ref(define(core('NodeDaemonEndpoints'), t.object({
    kubeletEndpoint: p(1, t.ref(define(core('DaemonEndpoint'), t.object({
      Port: p(1, t.int32('Port number.'), 'always'),
    }, 'A port a daemon of the node listens on.', { required: ['Port'] })), 'The node agent\'s endpoint.'), 'always'),
  }, 'Ports of the daemons of the node.')), 'Endpoints of the daemons of the node.'), 'always'),
  nodeInfo: p(7, t.ref(define(core('NodeSystemInfo'), t.object({
    machineID: p(1, s('Machine ID.')), systemUUID: p(2, s('System UUID.')), bootID: p(3, s('Boot ID.')),
    kernelVersion: p(4, s('Kernel version (uname -r).')), osImage: p(5, s('OS image (from /etc/os-release).')),
    containerRuntimeVersion: p(6, s('Container runtime version, as <runtime>://<version>.')),
    kubeletVersion: p(7, s('Node agent version.')), kubeProxyVersion: p(8, s('Deprecated.')),
    operatingSystem: p(9, s('Operating system.')), architecture: p(10, s('Architecture.')),
  }, 'Identifiers of the node.', {
    required: ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'],
  })), 'Identifiers of the node.'), 'always'),
  images: p(8, t.array(t.ref(define(core('ContainerImage'), t.object({
    names: p(1, t.array(s(), 'Names of the image.', { listType: 'atomic' })), sizeBytes: p(2, t.int64('Size of the image.')),
  }, 'An image on the node.'))), 'Images on the node.', { listType: 'atomic' })),
  volumesInUse: p(9, t.array(s(), 'Volumes in use (mounted).', { listType: 'atomic' })),
  volumesAttached: p(10, t.array(t.ref(define(core('AttachedVolume'), t.object({
    name: p(1, s('Name of the volume.')), devicePath: p(2, s('Device path.')),
  }, 'A volume attached to the node.', { required: ['name', 'devicePath'] }))), 'Volumes attached to the node.', { listType: 'atomic' })),
  config: p(11, t.ref(define(core('NodeConfigStatus'), t.object({
    assigned: p(1, t.ref(NodeConfigSource, 'Assigned config.')), active: p(2, t.ref(NodeConfigSource, 'Active config.')),
    lastKnownGood: p(3, t.ref(NodeConfigSource, 'Last known good config.')), error: p(4, s('Error of the config.')),
  }, 'Deprecated: status of the node\'s configuration.')), 'Deprecated.')),
  runtimeHandlers: p(12, t.array(t.ref(define(core('NodeRuntimeHandler'), t.object({
    name: p(1, s('Name of the handler; empty for the default.', { default: '' })),
    features: p(2, t.ref(define(core('NodeRuntimeHandlerFeatures'), t.object({
      recursiveReadOnlyMounts: p(1, t.bool('Recursive read-only mounts supported.')), userNamespaces: p(2, t.bool('User namespaces supported.')),
    }, 'Features of a runtime handler.')), 'Features of the handler.')),
  }, 'A runtime handler of the node.'))), 'Runtime handlers of the node.', { listType: 'atomic' })),
  features: p(13, t.ref(define(core('NodeFeatures'), t.object({
    supplementalGroupsPolicy: p(1, t.bool('supplementalGroupsPolicy supported.')),
  }, 'Features the node supports.')), 'Features the node supports.')),
}, 'Most recently observed status of a node.'));

const schema = kindSchema('A worker machine that runs pods.', {
  spec: p(2, t.ref(NodeSpec, 'Behaviour of the node.'), 'always'),
  status: p(3, t.ref(NodeStatus, 'Most recently observed status of the node.'), 'always'),
});

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function validateNode(node: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  ((node.spec?.taints ?? []) as Obj[]).forEach((taint, i) => {
    const at = fieldPath('spec.taints', i);
    errs.push(...checkName(isQualifiedName, `${at}.key`, taint.key ?? ''));
    if (taint.value) errs.push(...checkName(isLabelValue, `${at}.value`, taint.value));
    if (!taint.effect) errs.push(fieldErrors.required(`${at}.effect`));
    else if (!taintEffects.includes(taint.effect)) errs.push(fieldErrors.notSupported(`${at}.effect`, taint.effect, taintEffects));
    const id = `${taint.key}\u0000${taint.effect}`;
    if (seen.has(id)) errs.push(fieldErrors.duplicate(at, taint));
    seen.add(id);
  });
  errs.push(...validateNodeResources(node));
  return errs;
}

/** Upstream's validateNodeResources: capacity and allocatable quantities, at `status.capacity.<name>`. */
function validateNodeResources(node: KubeObject): FieldError[] {
  return ['capacity', 'allocatable'].flatMap((list) => {
    const { parsed } = validateResourceList(node.status?.[list], `status.${list}`, false);
    return [...parsed].flatMap(([name, q]) => {
      const at = `status.${list}.${name}`;
      const value = node.status[list][name];
      if (q.nanos < 0n) return [fieldErrors.invalid(at, String(value), 'must be greater than or equal to 0')];
      const integer = name.includes('/') || name.startsWith('hugepages-');
      return integer && q.nanos % 1_000_000_000n !== 0n ? [fieldErrors.invalid(at, String(value), 'must be an integer')] : [];
    });
  });
}

function validateNodeUpdate(node: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateNode(node);
  // As upstream, the same address twice in the status is refused on updates (a node agent's status writes).
  const addresses = new Set<string>();
  ((node.status?.addresses ?? []) as Obj[]).forEach((a, i) => {
    const id = `${a.type}\u0000${a.address}`;
    if (addresses.has(id)) errs.push(fieldErrors.duplicate(fieldPath('status.addresses', i), a));
    addresses.add(id);
  });
  const oldCidrs: string[] = old.spec?.podCIDRs ?? [];
  if (oldCidrs.length && JSON.stringify(oldCidrs) !== JSON.stringify(node.spec?.podCIDRs ?? [])) {
    errs.push(fieldErrors.forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  if (old.spec?.providerID && old.spec.providerID !== node.spec?.providerID) {
    errs.push(fieldErrors.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  return errs;
}

/** Roles from the node-role label prefix and the legacy role label, as upstream's printer finds them. */
function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries((node.metadata?.labels ?? {}) as Record<string, string>)) {
    if (key.startsWith(vocabulary.nodeRoleLabelPrefix)) {
      const role = key.slice(vocabulary.nodeRoleLabelPrefix.length);
      if (role) roles.add(role);
    } else if (key === vocabulary.legacyNodeRoleLabel && value) roles.add(value);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

/** Ready / NotReady / Unknown, then SchedulingDisabled when cordoned. */
export function nodeStatusText(node: KubeObject): string {
  const ready = ((node.status?.conditions ?? []) as Obj[]).find((c) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

const addressOf = (type: string) => (node: KubeObject) => ((node.status?.addresses ?? []) as Obj[]).find((a) => a.type === type)?.address ?? '<none>';
const infoOf = (field: string) => (node: KubeObject) => node.status?.nodeInfo?.[field] || '<unknown>';

export const nodes = defineKind({
  group: '', version: 'v1', kind: 'Node', plural: 'nodes', shortNames: ['no'],
  protobuf: true,
  scope: 'Cluster',
  schema: define(core('Node'), schema),
  deleteReturnsObject: true,
  // Status may come with a create: a node agent registers its node with it, as upstream allows.
  subresources: { status: { ...statusSubresource, resetOnCreate: false } },
  strategy: {
    defaults(node) {
      const status = node.status;
      if (status?.capacity && !status.allocatable) status.allocatable = { ...status.capacity };
    },
    validate: validateNode,
    validateUpdate: validateNodeUpdate,
  },
  fieldSelectors: { 'spec.unschedulable': (node) => String(node.spec?.unschedulable === true) },
  printerColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the node.', value: nodeStatusText },
    { name: 'Roles', type: 'string', description: 'The roles of the node.', value: nodeRoles },
    ageColumn,
    { name: 'Version', type: 'string', description: 'Version of the node agent.', value: (node) => node.status?.nodeInfo?.kubeletVersion ?? '' },
    { name: 'Internal-IP', type: 'string', priority: 1, description: 'The first internal IP of the node.', value: addressOf('InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, description: 'The first external IP of the node.', value: addressOf('ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, description: 'OS image reported by the node.', value: infoOf('osImage') },
    { name: 'Kernel-Version', type: 'string', priority: 1, description: 'Kernel version reported by the node.', value: infoOf('kernelVersion') },
    { name: 'Container-Runtime', type: 'string', priority: 1, description: 'Container runtime reported by the node.', value: infoOf('containerRuntimeVersion') },
  ],
});
