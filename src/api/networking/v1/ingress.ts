// networking/v1 Ingress: HTTP routes from hosts and paths to Services (or
// other objects), with upstream's validation; its status is the load
// balancer's addresses, written by whoever implements the class.

import { isIP } from 'node:net';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, statusSubresource, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors, GoLiteral } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1035Label, isDns1123Subdomain, isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { TypedLocalObjectReference } from '../../core/v1/volumes.js';
import { portNameErrors, validatePortNumber } from '../../core/v1/podvalidation.js';
import { definitionsOf, firstThree, validateHost } from '../../sharedrules.js';

type Obj = Record<string, any>;
const networking = definitionsOf('networking');
const s = t.string;

const IngressBackend = define(networking('IngressBackend'), t.object({
  service: p(4, t.ref(define(networking('IngressServiceBackend'), t.object({
    name: p(1, s('Name of the Service, in the Ingress\'s namespace.')),
    port: p(2, t.ref(define(networking('ServiceBackendPort'), t.object({
      name: p(1, s('Name of the Service\'s port; excludes number.')),
      number: p(2, t.int32('Number of the Service\'s port; excludes name.'), 'always'),
    }, 'A port of a Service, by name or number.')), 'The port of the Service.'), 'always'),
  }, 'A Service an Ingress routes to.', { required: ['name'] })), 'A Service to route to; excludes resource.')),
  resource: p(3, t.ref(TypedLocalObjectReference, 'Another object in the Ingress\'s namespace to route to; excludes service.')),
}, 'Where traffic goes: a Service or another object.'));

const IngressPortStatus = define(networking('IngressPortStatus'), t.object({
  port: p(1, t.int32('Port number.'), 'always'),
  protocol: p(2, s('TCP, UDP or SCTP.', { enum: ['SCTP', 'TCP', 'UDP'] })),
  error: p(3, s('Problem with the port, CamelCase reason or domain-prefixed.'), 'whenSet'),
}, 'The state of one port of a load balancer address.', { required: ['port', 'protocol'] }));

const ruleHttp = p(1, t.ref(define(networking('HTTPIngressRuleValue'), t.object({
  paths: p(1, t.array(t.ref(define(networking('HTTPIngressPath'), t.object({
    path: p(1, s('Path matched against the request\'s path; starts with `/`.')),
    pathType: p(3, s('Exact, Prefix or ImplementationSpecific.', { enum: ['Exact', 'ImplementationSpecific', 'Prefix'] }), 'whenSet'),
    backend: p(2, t.ref(IngressBackend, 'Where matching requests go.'), 'always'),
  }, 'A path and where its requests go.', { required: ['pathType', 'backend'] }))), 'Paths and their backends.', { listType: 'atomic' })),
}, 'HTTP paths of a rule.', { required: ['paths'] })), 'HTTP paths of the rule.'));

// A rule's `http` travels inside IngressRuleValue (field 2) on the wire, as upstream's embedded struct.
const IngressRule = define(networking('IngressRule'), t.object({
  host: p(1, s('Host the rule matches (a DNS name, maybe a `*.` wildcard); all hosts when empty.')),
  http: ruleHttp,
}, 'Rules for one host.', { protoInline: [{ proto: 2, schema: define(networking('IngressRuleValue'), t.object({ http: ruleHttp }, 'What a rule matches.')) }] }));

const schema = kindSchema('Routes HTTP from hosts and paths to Services: the rules a load balancer implements.', {
  spec: p(2, t.ref(define(networking('IngressSpec'), t.object({
    ingressClassName: p(4, s('Name of the IngressClass implementing this Ingress.'), 'whenSet'),
    defaultBackend: p(1, t.ref(IngressBackend, 'Where requests that match no rule go.')),
    tls: p(2, t.array(t.ref(define(networking('IngressTLS'), t.object({
      hosts: p(1, t.array(s(), 'Hosts the certificate covers.', { listType: 'atomic' })),
      secretName: p(2, s('Secret holding the certificate and key.')),
    }, 'TLS for some hosts.'))), 'TLS configuration.', { listType: 'atomic' })),
    rules: p(3, t.array(t.ref(IngressRule), 'Host rules; requests matching none go to defaultBackend.', { listType: 'atomic' })),
  }, 'Desired state of an Ingress.')), 'Desired state.'), 'always'),
  status: p(3, t.ref(define(networking('IngressStatus'), t.object({
    loadBalancer: p(1, t.ref(define(networking('IngressLoadBalancerStatus'), t.object({
      ingress: p(1, t.array(t.ref(define(networking('IngressLoadBalancerIngress'), t.object({
        ip: p(1, s('IP address of the load balancer.')),
        hostname: p(2, s('DNS name of the load balancer.')),
        ports: p(4, t.array(t.ref(IngressPortStatus), 'States of its ports.', { listType: 'atomic' })),
      }, 'One address of a load balancer.'))), 'Addresses of the load balancer.', { listType: 'atomic' })),
    }, 'A load balancer\'s state.')), 'The load balancer\'s addresses.'), 'always'),
  }, 'Observed state of an Ingress.')), 'Observed state.'), 'always'),
});

const pathTypes = ['Exact', 'ImplementationSpecific', 'Prefix'];
const invalidPathSequences = ['//', '/./', '/../', '%2f', '%2F'];
const invalidPathSuffixes = ['/..', '/.'];

function validateBackend(b: Obj, at: string): FieldError[] {
  const hasResource = b.resource != null;
  const hasService = b.service != null;
  if (hasResource && hasService) return [fieldErrors.invalid(at, '', 'cannot set both resource and service backends')];
  if (hasResource) {
    const r: Obj = b.resource;
    const errs: FieldError[] = [];
    if (!r.kind) errs.push(fieldErrors.required(`${at}.resource.kind`, ''));
    else errs.push(...checkName(isPathSegmentName, `${at}.resource.kind`, r.kind));
    if (!r.name) errs.push(fieldErrors.required(`${at}.resource.name`, ''));
    else errs.push(...checkName(isPathSegmentName, `${at}.resource.name`, r.name));
    if (r.apiGroup) errs.push(...checkName(isDns1123Subdomain, `${at}.resource.apiGroup`, r.apiGroup));
    return errs;
  }
  if (!hasService) return [fieldErrors.invalid(at, '', 'resource or service backend is required')];
  const svc: Obj = b.service;
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(fieldErrors.required(`${at}.service.name`, ''));
  else errs.push(...checkName(isDns1035Label, `${at}.service.name`, svc.name));
  const port: Obj = svc.port ?? {};
  const hasName = typeof port.name === 'string' && port.name.length > 0;
  const hasNumber = port.number !== undefined && port.number !== 0;
  if (hasName && hasNumber) errs.push(fieldErrors.invalid(at, '', 'cannot set both port name & port number'));
  else if (hasName) for (const m of portNameErrors(port.name)) errs.push(fieldErrors.invalid(`${at}.service.port.name`, port.name, m));
  else if (hasNumber) errs.push(...validatePortNumber(port.number, `${at}.service.port.number`));
  else errs.push(fieldErrors.required(at, 'port name or number is required'));
  return errs;
}

function validatePath(path: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const text: string = path.path ?? '';
  if (path.pathType === undefined || path.pathType === null) return [fieldErrors.required(`${at}.pathType`, 'pathType must be specified')];
  if (!pathTypes.includes(path.pathType)) {
    errs.push(fieldErrors.notSupported(`${at}.pathType`, path.pathType, pathTypes));
  } else if (path.pathType === 'ImplementationSpecific') {
    if (text.length > 0 && !text.startsWith('/')) errs.push(fieldErrors.invalid(`${at}.path`, text, 'must be an absolute path'));
  } else {
    if (!text.startsWith('/')) errs.push(fieldErrors.invalid(`${at}.path`, text, 'must be an absolute path'));
    if (text.length > 0) {
      for (const seq of invalidPathSequences) if (text.includes(seq)) errs.push(fieldErrors.invalid(`${at}.path`, text, `must not contain '${seq}'`));
      for (const suffix of invalidPathSuffixes) if (text.endsWith(suffix)) errs.push(fieldErrors.invalid(`${at}.path`, text, `cannot end with '${suffix}'`));
    }
  }
  errs.push(...validateBackend(path.backend ?? {}, `${at}.backend`));
  return errs;
}

function validateRules(rules: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const at = fieldPath('spec.rules', i);
    if (rule.host) {
      if (isIP(rule.host) !== 0) errs.push(fieldErrors.invalid(`${at}.host`, rule.host, 'must be a DNS name, not an IP address'));
      errs.push(...validateHost(rule.host, `${at}.host`));
    }
    if (rule.http) {
      const paths: Obj[] = rule.http.paths ?? [];
      if (paths.length === 0) errs.push(fieldErrors.required(`${at}.http.paths`, ''));
      paths.forEach((path, j) => errs.push(...validatePath(path, fieldPath(`${at}.http.paths`, j))));
    }
  });
  return errs;
}

function validateIngress(ing: KubeObject): FieldError[] {
  const spec: Obj = ing.spec ?? {};
  const errs: FieldError[] = [];
  const rules: Obj[] = spec.rules ?? [];
  if (rules.length === 0 && !spec.defaultBackend) {
    // Upstream prints the Go value of the empty rules.
    const shown = new GoLiteral(spec.rules ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)');
    errs.push(fieldErrors.invalid('spec', shown, 'either `defaultBackend` or `rules` must be specified'));
  }
  if (spec.defaultBackend) errs.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  errs.push(...validateRules(rules));
  ((spec.tls ?? []) as Obj[]).forEach((tls, i) => {
    ((tls.hosts ?? []) as string[]).forEach((host, j) => errs.push(...validateHost(host, fieldPath(`${fieldPath('spec.tls', i)}.hosts`, j))));
  });
  if (spec.ingressClassName) errs.push(...checkName(isDns1123Subdomain, 'spec.ingressClassName', spec.ingressClassName));
  return errs;
}

function validateIngressStatus(ing: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  ((ing.status?.loadBalancer?.ingress ?? []) as Obj[]).forEach((lb, i) => {
    const at = fieldPath('status.loadBalancer.ingress', i);
    if (lb.ip && isIP(lb.ip) === 0) errs.push(fieldErrors.invalid(`${at}.ip`, lb.ip, 'must be a valid IP address'));
    if (lb.hostname) {
      errs.push(...checkName(isDns1123Subdomain, `${at}.hostname`, lb.hostname));
      if (isIP(lb.hostname) !== 0) errs.push(fieldErrors.invalid(`${at}.hostname`, lb.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/** Hosts of the rules ("*" for a rule without one), as upstream's printer lists them. */
function formatHosts(ing: KubeObject): string {
  const hosts = ((ing.spec?.rules ?? []) as Obj[]).map((r) => r.host || '*');
  return firstThree(hosts, '*');
}

function loadBalancerAddresses(ing: KubeObject): string {
  return ((ing.status?.loadBalancer?.ingress ?? []) as Obj[]).map((lb) => lb.ip || lb.hostname).filter(Boolean).join(',');
}

export const ingresses = defineKind({
  group: vocabulary.networkingGroup, version: 'v1', kind: 'Ingress', plural: 'ingresses', shortNames: ['ing'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(networking('Ingress'), schema),
  tracksGeneration: true,
  subresources: { status: { ...statusSubresource, validateUpdate: (ing) => validateIngressStatus(ing) } },
  strategy: {
    validate: validateIngress,
    validateUpdate: (ing) => validateIngress(ing),
  },
  printerColumns: [
    nameColumn,
    { name: 'Class', type: 'string', description: 'The IngressClass of the Ingress.', value: (ing) => ing.spec?.ingressClassName ?? '<none>' },
    { name: 'Hosts', type: 'string', description: 'Hosts of the rules.', value: formatHosts },
    { name: 'Address', type: 'string', description: 'Addresses of the load balancer.', value: loadBalancerAddresses },
    { name: 'Ports', type: 'string', description: 'Ports of the Ingress.', value: (ing) => ((ing.spec?.tls ?? []).length ? '80, 443' : '80') },
    ageColumn,
  ],
});
