// Endpoints (core v1): the addresses that back a service, as subsets of
// addresses and ports, with upstream's validation and printer column.

import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Label } from '../../../machinery/validation.js';
import { isIP } from 'node:net';
import { core, kindSchema, nameColumn, ageColumn, ObjectReference } from './common.js';
import { validatePortNumber } from './podvalidation.js';

const s = t.string;
type Obj = Record<string, any>;

const EndpointAddress = define(core('EndpointAddress'), t.object({
  ip: p(1, s('IP address of the endpoint (not loopback, link-local or multicast).')),
  hostname: p(3, s('Hostname of the endpoint.')),
  nodeName: p(4, s('Node hosting the endpoint.')),
  targetRef: p(2, t.ref(ObjectReference, 'The object behind the endpoint (a pod).')),
}, 'One address of an endpoint.', { required: ['ip'], mapType: 'atomic' }));

const EndpointPort = define(core('EndpointPort'), t.object({
  name: p(1, s('Name of the port; must match the service port\'s name.')),
  port: p(2, t.int32('Port number.'), 'always'),
  protocol: p(3, s('TCP, UDP or SCTP; TCP when unset.', { enum: ['SCTP', 'TCP', 'UDP'] })),
  appProtocol: p(4, s('Application protocol of the port.')),
}, 'A port of an endpoint.', { required: ['port'], mapType: 'atomic' }));

const addressList = (description: string) => t.array(t.ref(EndpointAddress), description, { listType: 'atomic' });

const schema = kindSchema('The addresses that implement a service.', {
  subsets: p(2, t.array(t.ref(define(core('EndpointSubset'), t.object({
    addresses: p(1, addressList('Ready addresses.')),
    notReadyAddresses: p(2, addressList('Addresses not ready yet.')),
    ports: p(3, t.array(t.ref(EndpointPort), 'Ports of the addresses.', { listType: 'atomic' })),
  }, 'Addresses sharing one set of ports.'))), 'Groups of addresses with their ports.', { listType: 'atomic' })),
});

const protocols = ['SCTP', 'TCP', 'UDP'];

function validateAddress(a: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!a.ip || isIP(a.ip) === 0) errs.push(fieldErrors.invalid(`${at}.ip`, a.ip ?? '', 'must be a valid IP address'));
  else if (a.ip.startsWith('127.') || a.ip === '::1') errs.push(fieldErrors.invalid(`${at}.ip`, a.ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  else if (a.ip.startsWith('169.254.') || a.ip.toLowerCase().startsWith('fe80:')) errs.push(fieldErrors.invalid(`${at}.ip`, a.ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (a.hostname) errs.push(...checkName(isDns1123Label, `${at}.hostname`, a.hostname));
  return errs;
}

function validateEndpoints(ep: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  ((ep.subsets ?? []) as Obj[]).forEach((subset, i) => {
    const at = fieldPath('subsets', i);
    if (!(subset.addresses ?? []).length && !(subset.notReadyAddresses ?? []).length) {
      errs.push(fieldErrors.required(at, 'must specify `addresses` or `notReadyAddresses`'));
    }
    (subset.addresses ?? []).forEach((a: Obj, j: number) => errs.push(...validateAddress(a, fieldPath(`${at}.addresses`, j))));
    (subset.notReadyAddresses ?? []).forEach((a: Obj, j: number) => errs.push(...validateAddress(a, fieldPath(`${at}.notReadyAddresses`, j))));
    const names = new Set<string>();
    const ports: Obj[] = subset.ports ?? [];
    ports.forEach((port, j) => {
      const pat = fieldPath(`${at}.ports`, j);
      if (ports.length > 1 || port.name) {
        if (!port.name && ports.length > 1) errs.push(fieldErrors.required(`${pat}.name`));
        else if (port.name) for (const m of isDns1123Label(port.name)) errs.push(fieldErrors.invalid(`${pat}.name`, port.name, m));
        if (port.name && names.has(port.name)) errs.push(fieldErrors.duplicate(`${pat}.name`, port.name));
        names.add(port.name);
      }
      errs.push(...validatePortNumber(port.port, `${pat}.port`));
      if (!port.protocol) errs.push(fieldErrors.required(`${pat}.protocol`));
      else if (!protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${pat}.protocol`, port.protocol, protocols));
    });
  });
  return errs;
}

/** Up to three ip:port pairs, then "+ N more...", as upstream's printer formats them. */
export function formatEndpoints(ep: KubeObject): string {
  const pairs: string[] = [];
  let count = 0;
  for (const subset of (ep.subsets ?? []) as Obj[]) {
    const ports: Obj[] = subset.ports?.length ? subset.ports : [{}];
    for (const a of (subset.addresses ?? []) as Obj[]) {
      for (const port of ports) {
        count++;
        if (pairs.length < 3) pairs.push(port.port !== undefined ? `${a.ip}:${port.port}` : a.ip);
      }
    }
  }
  if (count === 0) return '<none>';
  return count > 3 ? `${pairs.join(',')} + ${count - 3} more...` : pairs.join(',');
}

export const endpoints = defineKind({
  group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', singular: 'endpoints', shortNames: ['ep'],
  listKind: 'EndpointsList',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('Endpoints'), schema),
  strategy: {
    defaults(ep) {
      for (const subset of (ep.subsets ?? []) as Obj[]) for (const port of subset.ports ?? []) port.protocol ??= 'TCP';
    },
    validate: validateEndpoints,
    validateUpdate: (ep) => validateEndpoints(ep),
  },
  printerColumns: [
    nameColumn,
    { name: 'Endpoints', type: 'string', description: 'Endpoints of the service (up to three, then a count).', value: formatEndpoints },
    ageColumn,
  ],
});
