// Service (core v1): upstream 1.32's fields, defaults, validation with
// upstream's messages (ports, types, immutable cluster IPs), columns and the
// status part. Cluster IPs and node ports are handed out by the registry's
// allocators (registry/services.ts) before validation sees the object.

import { define, p, t } from '../../schema.js';
import { validateServiceStatusUpdate } from './statusvalidation.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Label, isDns1123Subdomain, isDns1035Label } from '../../../machinery/validation.js';
import { validateLabels } from '../../../machinery/objectmeta.js';
import { isIP } from 'node:net';
import { Condition } from '../../meta/v1.js';
import { core, kindSchema, nameColumn, ageColumn } from './common.js';
import { portNameErrors, validatePortNumber } from './podvalidation.js';
import { selectorText } from './replicationcontroller.js';
import { optionalEnum, requiredEnum } from '../../sharedrules.js';

const s = t.string;
type Obj = Record<string, any>;

const ServicePort = define(core('ServicePort'), t.object({
  name: p(1, s('Name of the port (a DNS label), unique within the service; required with more than one port.')),
  protocol: p(2, s('TCP, UDP or SCTP; TCP when unset.', { enum: ['SCTP', 'TCP', 'UDP'], default: 'TCP' })),
  appProtocol: p(6, s('Application protocol of the port.')),
  port: p(3, t.int32('Port the service exposes.'), 'always'),
  targetPort: p(4, t.intOrString('Port number or name on the pods; the port when unset.'), 'always'),
  nodePort: p(5, t.int32('Port on every node (NodePort, LoadBalancer); allocated when unset.')),
}, 'A port of a service.', { required: ['port'] }));

const ServiceSpec = define(core('ServiceSpec'), t.object({
  ports: p(1, t.array(t.ref(ServicePort), 'Ports the service exposes.', { patchMergeKey: 'port', patchStrategy: 'merge', listType: 'map', listMapKeys: ['port', 'protocol'] })),
  selector: p(2, { ...t.map(s(), 'Labels of the pods traffic is routed to.'), mapType: 'atomic' }),
  clusterIP: p(3, s('IP address of the service, allocated when unset; None for a headless service.')),
  clusterIPs: p(18, t.array(s(), 'IP addresses of the service, one per family; the first is clusterIP.', { listType: 'atomic' })),
  type: p(4, s('ClusterIP, NodePort, LoadBalancer or ExternalName; ClusterIP when unset.', { enum: ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] })),
  externalIPs: p(5, t.array(s(), 'More IP addresses nodes accept traffic for.', { listType: 'atomic' })),
  sessionAffinity: p(7, s('ClientIP or None; None when unset.', { enum: ['ClientIP', 'None'] })),
  loadBalancerIP: p(8, s('Deprecated: address asked of the load balancer.')),
  loadBalancerSourceRanges: p(9, t.array(s(), 'Client ranges the load balancer accepts.', { listType: 'atomic' })),
  externalName: p(10, s('DNS name the service is an alias of (type ExternalName).')),
  externalTrafficPolicy: p(11, s('Cluster or Local.', { enum: ['Cluster', 'Local'] })),
  healthCheckNodePort: p(12, t.int32('Health check node port (LoadBalancer with policy Local).')),
  publishNotReadyAddresses: p(13, t.bool('Publishes addresses of pods that are not ready.')),
  sessionAffinityConfig: p(14, t.ref(define(core('SessionAffinityConfig'), t.object({
    clientIP: p(1, t.ref(define(core('ClientIPConfig'), t.object({
      timeoutSeconds: p(1, t.int32('Seconds a ClientIP affinity lasts (1-86400); 10800 when unset.')),
    }, 'Client IP affinity settings.')), 'Client IP affinity settings.')),
  }, 'Session affinity settings.')), 'Session affinity settings.')),
  ipFamilies: p(19, t.array(s(), 'IPv4 and/or IPv6, in the order of clusterIPs.', { listType: 'atomic' })),
  ipFamilyPolicy: p(17, s('SingleStack, PreferDualStack or RequireDualStack.', { enum: ['PreferDualStack', 'RequireDualStack', 'SingleStack'] })),
  allocateLoadBalancerNodePorts: p(20, t.bool('Whether node ports are allocated for a LoadBalancer; true when unset.')),
  loadBalancerClass: p(21, s('Class of the load balancer implementation.')),
  internalTrafficPolicy: p(22, s('Cluster or Local.', { enum: ['Cluster', 'Local'] })),
  trafficDistribution: p(23, s('How traffic is preferably distributed (PreferClose).')),
}, 'Desired state of a service.'));

const ServiceStatus = define(core('ServiceStatus'), t.object({
  loadBalancer: p(1, t.ref(define(core('LoadBalancerStatus'), t.object({
    ingress: p(1, t.array(t.ref(define(core('LoadBalancerIngress'), t.object({
      ip: p(1, s('IP of the ingress point.')), hostname: p(2, s('Hostname of the ingress point.')), ipMode: p(3, s('VIP or Proxy.')),
      ports: p(4, t.array(t.ref(define(core('PortStatus'), t.object({
        port: p(1, t.int32('Port number.'), 'always'), protocol: p(2, s('TCP, UDP or SCTP.')), error: p(3, s('Error of the port, if any.')),
      }, 'Status of one port.', { required: ['port', 'protocol'] }))), 'Ports of the ingress point.', { listType: 'atomic' })),
    }, 'An ingress point of a load balancer.'))), 'Ingress points of the load balancer.', { listType: 'atomic' })),
  }, 'Status of a load balancer.')), 'Status of the load balancer, if any.'), 'always'),
  conditions: p(2, t.array(t.ref(Condition), 'Current conditions of the service.', { patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type'] })),
}, 'Current status of a service.'));

const schema = kindSchema('A named abstraction of software service: a port and a selector of the pods behind it.', {
  spec: p(2, t.ref(ServiceSpec, 'Behaviour of the service.'), 'always'),
  status: p(3, t.ref(ServiceStatus, 'Most recently observed status; read-only.'), 'always'),
});

// Upstream's supported values, in the order its messages list them (a Go set's, sorted).
const types = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const protocols = ['SCTP', 'TCP', 'UDP'];
const sessionAffinities = ['ClientIP', 'None'];
const trafficPolicies = ['Cluster', 'Local'];
const ipFamilies = ['IPv4', 'IPv6'];
const ipFamilyPolicies = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const trafficDistributions = ['PreferClose'];
/** Upstream's ExternallyAccessible: node ports, a load balancer or external IPs reach the service from outside. */
const externallyAccessible = (spec: Obj) =>
  spec.type === 'LoadBalancer' || spec.type === 'NodePort' || ((spec.type ?? 'ClusterIP') === 'ClusterIP' && (spec.externalIPs ?? []).length > 0);
export const usesNodePorts = (spec: Obj) => spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
export const isHeadless = (spec: Obj) => spec.clusterIP === 'None';

/**
 * The address fields on their own: cluster IPs are addresses (or None), IP
 * families and the family policy upstream's values. Checked before the
 * server allocates (see registry/allocation), as upstream's
 * ValidateServiceClusterIPsRelatedFields.
 */
export function validateClusterIPs(svc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = svc.spec ?? {};
  ((spec.clusterIPs ?? []) as string[]).forEach((ip, i) => {
    if (ip !== 'None' && isIP(ip) === 0) errs.push(fieldErrors.invalid(fieldPath('spec.clusterIPs', i), ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) or "None"'));
  });
  const seen = new Set<unknown>();
  ((Array.isArray(spec.ipFamilies) ? spec.ipFamilies : []) as unknown[]).forEach((family, i) => {
    const at = fieldPath('spec.ipFamilies', i);
    errs.push(...optionalEnum(family, at, ipFamilies));
    if (seen.has(family)) errs.push(fieldErrors.duplicate(at, family));
    seen.add(family);
  });
  errs.push(...optionalEnum(spec.ipFamilyPolicy, 'spec.ipFamilyPolicy', ipFamilyPolicies));
  return errs;
}

/** Upstream's validateServiceExternalTrafficPolicy, for the policy's value: required (and one of two) where the service is reachable from outside. */
function validateExternalTrafficPolicy(spec: Obj): FieldError[] {
  if (!externallyAccessible(spec)) return [];
  return requiredEnum(spec.externalTrafficPolicy, 'spec.externalTrafficPolicy', trafficPolicies);
}

/** Upstream's validateServiceInternalTrafficFieldsValue: required for every type but ExternalName, one of two when set. */
function validateInternalTrafficPolicy(spec: Obj): FieldError[] {
  const type = spec.type ?? 'ClusterIP';
  if ((spec.internalTrafficPolicy === undefined || spec.internalTrafficPolicy === null) && (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP')) {
    return [fieldErrors.required('spec.internalTrafficPolicy')];
  }
  return optionalEnum(spec.internalTrafficPolicy, 'spec.internalTrafficPolicy', trafficPolicies);
}

function validateService(svc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = svc.spec ?? {};
  const type: string = spec.type ?? 'ClusterIP';
  errs.push(...requiredEnum(spec.type, 'spec.type', types));
  const ports: Obj[] = spec.ports ?? [];
  if (ports.length === 0 && type !== 'ExternalName' && !isHeadless(spec)) errs.push(fieldErrors.required('spec.ports'));
  const names = new Set<string>();
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const at = fieldPath('spec.ports', i);
    if (ports.length > 1 && !port.name) errs.push(fieldErrors.required(`${at}.name`));
    else if (port.name) {
      for (const m of isDns1123LabelMessages(port.name)) errs.push(fieldErrors.invalid(`${at}.name`, port.name, m));
      if (names.has(port.name)) errs.push(fieldErrors.duplicate(`${at}.name`, port.name));
      names.add(port.name);
    }
    errs.push(...validatePortNumber(port.port, `${at}.port`));
    if (!port.protocol) errs.push(fieldErrors.required(`${at}.protocol`));
    else if (!protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${at}.protocol`, port.protocol, protocols));
    if (typeof port.targetPort === 'number') errs.push(...validatePortNumber(port.targetPort, `${at}.targetPort`));
    else if (typeof port.targetPort === 'string') for (const m of portNameErrors(port.targetPort)) errs.push(fieldErrors.invalid(`${at}.targetPort`, port.targetPort, m));
    if (port.nodePort && type === 'ClusterIP') errs.push(fieldErrors.forbidden(`${at}.nodePort`, 'may not be used when `type` is \'ClusterIP\''));
    if (port.nodePort) errs.push(...validatePortNumber(port.nodePort, `${at}.nodePort`));
    const id = `${port.port}/${port.protocol}`;
    if (seen.has(id)) errs.push(fieldErrors.duplicate(at, { port: port.port, protocol: port.protocol }));
    seen.add(id);
  });
  if (type === 'ExternalName') {
    if (spec.clusterIP) errs.push(fieldErrors.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (!spec.externalName) errs.push(fieldErrors.required('spec.externalName'));
    else errs.push(...checkName(isDns1123Subdomain, 'spec.externalName', String(spec.externalName).replace(/\.$/, '')));
  }
  errs.push(...validateClusterIPs(svc));
  ((spec.externalIPs ?? []) as string[]).forEach((ip, i) => {
    if (isIP(ip) === 0) errs.push(fieldErrors.invalid(fieldPath('spec.externalIPs', i), ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  });
  if (spec.selector) errs.push(...validateLabels(spec.selector, 'spec.selector'));
  errs.push(...requiredEnum(spec.sessionAffinity, 'spec.sessionAffinity', sessionAffinities));
  errs.push(...validateExternalTrafficPolicy(spec));
  errs.push(...validateInternalTrafficPolicy(spec));
  errs.push(...optionalEnum(spec.trafficDistribution, 'spec.trafficDistribution', trafficDistributions));
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (spec.sessionAffinity === 'ClientIP' && timeout !== undefined && (timeout < 1 || timeout > 86400)) {
    errs.push(fieldErrors.invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', timeout, 'must be greater than 0 and less than 86400'));
  }
  return errs;
}

const isDns1123LabelMessages = (v: string) => isDns1123Label(v);

function validateServiceUpdate(svc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateService(svc);
  const before: string[] = old.spec?.clusterIPs ?? [];
  const after: string[] = svc.spec?.clusterIPs ?? [];
  // A cluster IP stays as allocated, unless the service becomes an ExternalName (which has none).
  if (svc.spec?.type !== 'ExternalName' && before.length && before[0] !== after[0]) {
    errs.push(fieldErrors.invalid('spec.clusterIPs[0]', after[0] ?? '', 'may not change once set'));
  }
  return errs;
}

function externalIPText(svc: KubeObject): string {
  const spec: Obj = svc.spec ?? {};
  const external: string[] = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ExternalName': return spec.externalName ?? '<none>';
    case 'LoadBalancer': {
      const ingress = ((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map((i) => i.ip || i.hostname).filter(Boolean);
      const all = [...ingress, ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    default: return external.length ? external.join(',') : '<none>';
  }
}

function portsText(svc: KubeObject): string {
  const ports: Obj[] = svc.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',');
}

export const services = defineKind({
  group: '', version: 'v1', kind: 'Service', plural: 'services', shortNames: ['svc'], categories: ['all'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('Service'), schema),
  nameCheck: isDns1035Label,
  deleteReturnsObject: true,
  subresources: { status: { ...statusSubresource, validateUpdate: validateServiceStatusUpdate } },
  strategy: {
    defaults(svc) {
      const spec: Obj = (svc.spec ??= {});
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (spec.sessionAffinity === 'ClientIP') {
        spec.sessionAffinityConfig ??= {};
        spec.sessionAffinityConfig.clientIP ??= {};
        spec.sessionAffinityConfig.clientIP.timeoutSeconds ??= 10800;
      }
      for (const port of (spec.ports ?? []) as Obj[]) {
        port.protocol ??= 'TCP';
        // A zero node port is none (Go's omitempty drops it): the allocator fills it when the type needs one.
        if (port.nodePort === 0) delete port.nodePort;
        if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
      }
      if (externallyAccessible(spec)) spec.externalTrafficPolicy ??= 'Cluster';
      if (spec.type !== 'ExternalName') spec.internalTrafficPolicy ??= 'Cluster';
      if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
      if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
      svc.status ??= {};
      svc.status.loadBalancer ??= {};
      // As upstream (LoadBalancerIPMode): an ingress point of a load balancer with an address is a VIP unless it says otherwise.
      if (spec.type === 'LoadBalancer') for (const point of (svc.status.loadBalancer.ingress ?? []) as Obj[]) if (point.ip && point.ipMode === undefined) point.ipMode = 'VIP';
    },
    validate: validateService,
    validateUpdate: validateServiceUpdate,
  },
  fieldSelectors: { 'spec.clusterIP': (svc) => svc.spec?.clusterIP ?? '', 'spec.type': (svc) => svc.spec?.type ?? '' },
  printerColumns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'The type of the service.', value: (svc) => svc.spec?.type },
    { name: 'Cluster-IP', type: 'string', description: 'The cluster IP of the service.', value: (svc) => svc.spec?.clusterIP || '<none>' },
    { name: 'External-IP', type: 'string', description: 'External addresses of the service.', value: externalIPText },
    { name: 'Port(s)', type: 'string', description: 'Ports of the service (port:nodePort/protocol).', value: portsText },
    ageColumn,
    { name: 'Selector', type: 'string', priority: 1, description: 'Label selector of the pods behind the service.', value: (svc) => selectorText(svc.spec?.selector) || '<none>' },
  ],
});
