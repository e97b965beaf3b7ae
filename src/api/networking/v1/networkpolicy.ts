// networking/v1 NetworkPolicy: which traffic pods of a selection may receive
// and send, by port and peer (pods, namespaces, CIDR blocks). Nothing here
// enforces it; a network plugin reads it.

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors, GoLiteral } from '../../../machinery/errors.js';
import { fieldPath } from '../../../machinery/validation.js';
import { labelSelectorOf, validateLabelSelector } from '../../../machinery/selectors.js';
import { parseCIDR } from '../../../machinery/ipnet.js';
import { LabelSelector } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { portNameErrors, portRangeMessage } from '../../core/v1/podvalidation.js';
import { definitionsOf } from '../../sharedrules.js';

type Obj = Record<string, any>;
const networking = definitionsOf('networking');
const s = t.string;

const NetworkPolicyPort = define(networking('NetworkPolicyPort'), t.object({
  protocol: p(1, s('TCP, UDP or SCTP; TCP when unset.', { enum: ['SCTP', 'TCP', 'UDP'] }), 'whenSet'),
  port: p(2, { ...t.intOrString('Port number or name; every port when unset.'), protoMessage: 'intOrString' }),
  endPort: p(3, t.int32('Last port of a range starting at port.')),
}, 'A port (or range) traffic is allowed on.'));

const NetworkPolicyPeer = define(networking('NetworkPolicyPeer'), t.object({
  podSelector: p(1, t.ref(LabelSelector, 'Pods (in the namespaces of namespaceSelector, or the policy\'s own).')),
  namespaceSelector: p(2, t.ref(LabelSelector, 'Namespaces whose pods are peers.')),
  ipBlock: p(3, t.ref(define(networking('IPBlock'), t.object({
    cidr: p(1, s('The block, as a CIDR.')),
    except: p(2, t.array(s(), 'CIDRs inside the block that are not peers.', { listType: 'atomic' })),
  }, 'A block of addresses.', { required: ['cidr'] })), 'Addresses that are peers; excludes the selectors.')),
}, 'A peer traffic may come from or go to.'));

const ports = (d: string) => p(1, t.array(t.ref(NetworkPolicyPort), d, { listType: 'atomic' }));
const peers = (d: string) => p(2, t.array(t.ref(NetworkPolicyPeer), d, { listType: 'atomic' }));

const schema = kindSchema('What traffic a set of pods may receive and send.', {
  spec: p(2, t.ref(define(networking('NetworkPolicySpec'), t.object({
    podSelector: p(1, t.ref(LabelSelector, 'The pods the policy applies to; empty: every pod of the namespace.'), 'always'),
    ingress: p(2, t.array(t.ref(define(networking('NetworkPolicyIngressRule'), t.object({
      ports: ports('Ports allowed; all when empty.'), from: peers('Peers allowed; all when empty.'),
    }, 'Traffic allowed in.'))), 'Rules for incoming traffic.', { listType: 'atomic' })),
    egress: p(3, t.array(t.ref(define(networking('NetworkPolicyEgressRule'), t.object({
      ports: ports('Ports allowed; all when empty.'), to: peers('Peers allowed; all when empty.'),
    }, 'Traffic allowed out.'))), 'Rules for outgoing traffic.', { listType: 'atomic' })),
    policyTypes: p(4, t.array(s(undefined, { enum: ['Egress', 'Ingress'] }), 'Ingress, Egress or both: the directions the policy governs.', { listType: 'atomic' })),
  }, 'Desired state of a NetworkPolicy.')), 'Desired state.'), 'always'),
});

const protocols = ['SCTP', 'TCP', 'UDP'];
const policyTypes = ['Egress', 'Ingress'];
const cidrMessage = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

function validatePort(port: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (port.protocol != null && !protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${at}.protocol`, port.protocol, protocols));
  if (port.port == null) {
    if (port.endPort != null) errs.push(fieldErrors.required(`${at}.port`, 'must specify port when endPort is specified'));
    return errs;
  }
  if (typeof port.port === 'number') {
    if (port.port < 1 || port.port > 65535) errs.push(fieldErrors.invalid(`${at}.port`, port.port, portRangeMessage));
    if (port.endPort != null) {
      if (port.endPort < port.port) errs.push(fieldErrors.invalid(`${at}.endPort`, port.endPort, 'must be greater than or equal to `port`'));
      else if (port.endPort > 65535) errs.push(fieldErrors.invalid(`${at}.endPort`, port.endPort, portRangeMessage));
    }
  } else {
    if (port.endPort != null) errs.push(fieldErrors.forbidden(`${at}.endPort`, 'may not be specified when `port` is non-numeric'));
    for (const m of portNameErrors(String(port.port))) errs.push(fieldErrors.invalid(`${at}.port`, port.port, m));
  }
  return errs;
}

function validateIPBlock(block: Obj, at: string): FieldError[] {
  if (!block.cidr) return [fieldErrors.required(`${at}.cidr`, '')];
  const cidr = parseCIDR(block.cidr);
  if (!cidr) return [fieldErrors.invalid(`${at}.cidr`, block.cidr, cidrMessage)];
  const errs: FieldError[] = [];
  ((block.except ?? []) as string[]).forEach((text, i) => {
    const field = fieldPath(`${at}.except`, i);
    const except = parseCIDR(text);
    if (!except) { errs.push(fieldErrors.invalid(field, text, cidrMessage)); return; }
    const inside = except.family === cidr.family && except.prefix > cidr.prefix
      && (except.network >> BigInt(cidr.bits - cidr.prefix)) === (cidr.network >> BigInt(cidr.bits - cidr.prefix));
    if (!inside) errs.push(fieldErrors.invalid(field, text, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

function validatePeer(peer: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const count = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => peer[k] != null).length;
  if (count === 0) errs.push(fieldErrors.required(at, 'must specify a peer'));
  else if (count > 1 && peer.ipBlock != null) errs.push(fieldErrors.forbidden(at, 'may not specify both ipBlock and another peer'));
  errs.push(...validateLabelSelector(peer.podSelector, `${at}.podSelector`), ...validateLabelSelector(peer.namespaceSelector, `${at}.namespaceSelector`));
  if (peer.ipBlock != null) errs.push(...validateIPBlock(peer.ipBlock, `${at}.ipBlock`));
  return errs;
}

function validateRules(rules: Obj[] | undefined, base: string, peerField: 'from' | 'to'): FieldError[] {
  const errs: FieldError[] = [];
  (rules ?? []).forEach((rule, i) => {
    const at = fieldPath(base, i);
    ((rule.ports ?? []) as Obj[]).forEach((port, j) => errs.push(...validatePort(port, fieldPath(`${at}.ports`, j))));
    ((rule[peerField] ?? []) as Obj[]).forEach((peer, j) => errs.push(...validatePeer(peer, fieldPath(`${at}.${peerField}`, j))));
  });
  return errs;
}

function validateNetworkPolicy(np: KubeObject): FieldError[] {
  const spec: Obj = np.spec ?? {};
  const errs = validateLabelSelector(spec.podSelector, 'spec.podSelector');
  errs.push(...validateRules(spec.ingress, 'spec.ingress', 'from'), ...validateRules(spec.egress, 'spec.egress', 'to'));
  const types: string[] = spec.policyTypes ?? [];
  types.forEach((type, i) => { if (!policyTypes.includes(type)) errs.push(fieldErrors.notSupported(fieldPath('spec.policyTypes', i), type, policyTypes)); });
  if (types.length > policyTypes.length) errs.push(fieldErrors.invalid('spec.policyTypes', GoLiteral.strings(types), 'may not specify more than two policyTypes'));
  return errs;
}

/** A selector as upstream's FormatLabelSelector prints it; `<none>` when it selects everything. */
function formatSelector(selector: Obj | undefined): string {
  try {
    const text = labelSelectorOf(selector as never).toString();
    return text === '' ? '<none>' : text;
  } catch {
    return '<error>';
  }
}

export const networkPolicies = defineKind({
  group: vocabulary.networkingGroup, version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', shortNames: ['netpol'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(networking('NetworkPolicy'), schema),
  tracksGeneration: true,
  strategy: {
    defaults(np) {
      const spec: Obj | undefined = np.spec;
      if (!spec) return;
      for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])] as Obj[]) for (const port of rule.ports ?? []) port.protocol ??= 'TCP';
      if (!spec.policyTypes?.length) spec.policyTypes = spec.egress?.length ? ['Ingress', 'Egress'] : ['Ingress'];
    },
    validate: validateNetworkPolicy,
    validateUpdate: (np) => validateNetworkPolicy(np),
  },
  printerColumns: [
    nameColumn,
    { name: 'Pod-Selector', type: 'string', description: 'The pods the policy applies to.', value: (np) => formatSelector(np.spec?.podSelector) },
    ageColumn,
  ],
});
