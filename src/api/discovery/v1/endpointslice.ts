// discovery/v1 EndpointSlice: a part of the endpoints of a Service (at most
// 100 per slice when the endpoint-slice controller writes them), of one
// address type, with each endpoint's conditions. controllers/endpointslice.ts
// writes the slices of Services with a selector.

import { isIPv4, isIPv6 } from 'node:net';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Label, isDns1123Subdomain, isQualifiedName } from '../../../machinery/validation.js';
import { kindSchema, nameColumn, ageColumn, ObjectReference } from '../../core/v1/common.js';
import { definitionsOf, firstThree, immutable } from '../../sharedrules.js';

type Obj = Record<string, any>;
const discovery = definitionsOf('discovery');
const s = t.string;

const Endpoint = define(discovery('Endpoint'), t.object({
  addresses: p(1, t.array(s(), 'Addresses of the endpoint, of the slice\'s address type; consumers use the first.', { listType: 'set' })),
  conditions: p(2, t.ref(define(discovery('EndpointConditions'), t.object({
    ready: p(1, t.bool('Whether the endpoint takes traffic (serving and not terminating, unless the Service publishes not-ready addresses).')),
    serving: p(2, t.bool('Whether the endpoint answers, terminating or not.')),
    terminating: p(3, t.bool('Whether the endpoint is terminating.')),
  }, 'The state of an endpoint.')), 'The state of the endpoint.'), 'always'),
  hostname: p(3, s('Hostname of the endpoint (a DNS label).'), 'whenSet'),
  targetRef: p(4, t.ref(ObjectReference, 'The object behind the endpoint (a pod).')),
  deprecatedTopology: p(5, t.map(s(), 'Topology of the endpoint (deprecated; zone and nodeName replace it).')),
  nodeName: p(6, s('Node hosting the endpoint.'), 'whenSet'),
  zone: p(7, s('Zone of the endpoint.'), 'whenSet'),
  hints: p(8, t.ref(define(discovery('EndpointHints'), t.object({
    forZones: p(1, t.array(t.ref(define(discovery('ForZone'), t.object({
      name: p(1, s('Name of the zone.')),
    }, 'A zone that should consume the endpoint.', { required: ['name'] }))), 'Zones that should consume the endpoint.', { listType: 'atomic' })),
  }, 'Hints for consumers of an endpoint.')), 'Hints for consumers of the endpoint.')),
}, 'One endpoint of a Service.', { required: ['addresses'] }));

const EndpointPort = define(discovery('EndpointPort'), t.object({
  name: p(1, s('Name of the port (a Service port\'s name); empty when the Service has one unnamed port.'), 'whenSet'),
  protocol: p(2, s('TCP, UDP or SCTP; TCP when unset.'), 'whenSet'),
  port: p(3, t.int32('Port number; every port when unset.')),
  appProtocol: p(4, s('Application protocol of the port.'), 'whenSet'),
}, 'A port of the endpoints of a slice.', { mapType: 'atomic' }));

const schema = kindSchema('A part of the endpoints of a Service, of one address type.', {
  addressType: p(4, s('IPv4, IPv6 or FQDN: the type of every address of the slice; immutable.', { enum: ['FQDN', 'IPv4', 'IPv6'] })),
  endpoints: p(2, t.array(t.ref(Endpoint), 'Endpoints of the slice; at most 1000.', { listType: 'atomic' }), 'always'),
  ports: p(3, t.array(t.ref(EndpointPort), 'Ports every endpoint of the slice offers; at most 20000.', { listType: 'atomic' })),
}, ['addressType', 'endpoints']);

export const addressTypes = ['FQDN', 'IPv4', 'IPv6'];
const protocols = ['SCTP', 'TCP', 'UDP'];
const maxEndpoints = 1000;
const maxAddresses = 100;
const maxPorts = 20000;
const maxZoneHints = 8;

/** Upstream's ValidateEndpointIP: addresses no endpoint may have. */
export function endpointIPErrors(ip: string): string[] {
  const lower = ip.toLowerCase();
  if (ip === '0.0.0.0' || lower === '::') return ['may not be unspecified (0.0.0.0, ::)'];
  if (ip.startsWith('127.') || lower === '::1') return ['may not be in the loopback range (127.0.0.0/8, ::1/128)'];
  if (ip.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/.test(lower)) return ['may not be in the link-local range (169.254.0.0/16, fe80::/10)'];
  if (ip.startsWith('224.0.0.') || lower.startsWith('ff02:')) return ['may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'];
  return [];
}

/** Upstream's IsFullyQualifiedDomainName. */
function fqdnErrors(name: string): string[] {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  if (trimmed.length === 0) return ['Required value'];
  const errs = isDns1123Subdomain(trimmed).map(() => 'each part must start and end with lower case alphanumeric characters and contain only lower case alphanumeric characters or \'-\'');
  if (!errs.length && trimmed.split('.').length < 2) errs.push('should be a domain with at least two segments separated by dots');
  return errs;
}

function validateAddress(address: string, type: string, at: string): FieldError[] {
  if (type === 'IPv4') return isIPv4(address) ? endpointIPErrors(address).map((m) => fieldErrors.invalid(at, address, m)) : [fieldErrors.invalid(at, address, 'must be a valid IPv4 address')];
  if (type === 'IPv6') return isIPv6(address) ? endpointIPErrors(address).map((m) => fieldErrors.invalid(at, address, m)) : [fieldErrors.invalid(at, address, 'must be a valid IPv6 address')];
  if (type === 'FQDN') return fqdnErrors(address).map((m) => fieldErrors.invalid(at, address, m));
  return [];
}

function validateEndpoints(endpoints: Obj[], type: string): FieldError[] {
  const errs: FieldError[] = [];
  if (endpoints.length > maxEndpoints) errs.push(fieldErrors.tooMany('endpoints', endpoints.length, maxEndpoints));
  endpoints.forEach((ep, i) => {
    const at = fieldPath('endpoints', i);
    const addresses: string[] = ep.addresses ?? [];
    if (addresses.length === 0) errs.push(fieldErrors.required(`${at}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > maxAddresses) errs.push(fieldErrors.tooMany(`${at}.addresses`, addresses.length, maxAddresses));
    addresses.forEach((a, j) => errs.push(...validateAddress(a, type, fieldPath(`${at}.addresses`, j))));
    if (ep.nodeName != null) errs.push(...checkName(isDns1123Subdomain, `${at}.nodeName`, ep.nodeName));
    if (ep.hostname != null) errs.push(...checkName(isDns1123Label, `${at}.hostname`, ep.hostname));
    const zones: Obj[] = ep.hints?.forZones ?? [];
    if (zones.length > maxZoneHints) errs.push(fieldErrors.tooMany(`${at}.hints.forZones`, zones.length, maxZoneHints));
    const seen = new Set<string>();
    zones.forEach((z, j) => {
      if (seen.has(z.name)) errs.push(fieldErrors.duplicate(`${fieldPath(`${at}.hints.forZones`, j)}.name`, z.name));
      seen.add(z.name);
    });
  });
  return errs;
}

function validatePorts(ports: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  if (ports.length > maxPorts) errs.push(fieldErrors.tooMany('ports', ports.length, maxPorts));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = fieldPath('ports', i);
    const name: string = port.name ?? '';
    if (name) errs.push(...checkName(isDns1123Label, `${at}.name`, name));
    if (names.has(name)) errs.push(fieldErrors.duplicate(`${at}.name`, name));
    names.add(name);
    if (port.protocol == null) errs.push(fieldErrors.required(`${at}.protocol`, ''));
    else if (!protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${at}.protocol`, port.protocol, protocols));
    if (port.appProtocol != null) errs.push(...checkName(isQualifiedName, `${at}.appProtocol`, port.appProtocol));
  });
  return errs;
}

function validateSlice(slice: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const type = slice.addressType;
  if (!type) errs.push(fieldErrors.required('addressType', ''));
  else if (!addressTypes.includes(type)) errs.push(fieldErrors.notSupported('addressType', type, addressTypes));
  errs.push(...validateEndpoints(slice.endpoints ?? [], type), ...validatePorts(slice.ports ?? []));
  return errs;
}

function formatPorts(slice: KubeObject): string {
  const ports: Obj[] = slice.ports ?? [];
  if (ports.length === 0) return '<unset>';
  return firstThree(ports.map((port) => (port.port == null ? '<unset>' : String(port.port))));
}

function formatEndpoints(slice: KubeObject): string {
  return firstThree(((slice.endpoints ?? []) as Obj[]).flatMap((ep) => (ep.addresses ?? []) as string[]), '<unset>');
}

export const endpointSlices = defineKind({
  group: vocabulary.endpointDiscoveryGroup, version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(discovery('EndpointSlice'), schema),
  tracksGeneration: true,
  strategy: {
    defaults(slice) {
      for (const port of (slice.ports ?? []) as Obj[]) {
        port.name ??= '';
        port.protocol ??= 'TCP';
      }
    },
    validate: validateSlice,
    validateUpdate: (slice, old) => [...validateSlice(slice), ...(addressTypes.includes(old.addressType) ? immutable(slice.addressType, old.addressType, 'addressType') : [])],
  },
  printerColumns: [
    nameColumn,
    { name: 'AddressType', type: 'string', description: 'The type of the addresses of the slice.', value: (slice) => slice.addressType ?? '' },
    { name: 'Ports', type: 'string', description: 'Ports of the endpoints.', value: formatPorts },
    { name: 'Endpoints', type: 'string', description: 'Addresses of the endpoints (up to three, then a count).', value: formatEndpoints },
    ageColumn,
  ],
});

export const discoveryV1Kinds = [endpointSlices];
