// What a write through the `status` sub-resource may hold, as upstream's
// ValidateXStatusUpdate functions say, with their messages. The spec is the
// stored one already (a status write changes only status: kind.ts's parts),
// so these look at the status and at what the spec says of it. Upstream's
// "resourceVersion: Required value" of quota, claim and volume status writes
// never shows through the API (an unconditional update is given the stored
// version first), so it is not repeated here; a volume's status has no rules.

import { isIP } from 'node:net';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Subdomain, isQualifiedName } from '../../../machinery/validation.js';
import type { KubeObject } from '../../kind.js';
import { validateConditions } from '../../meta/conditions.js';
import { validateResourceList } from './podvalidation.js';

type Obj = Record<string, any>;

const ipMessage = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const notNegative = 'must be greater than or equal to 0';

/** podIPs or hostIPs: valid addresses, at most one of each family, no repeats. */
function validateIPList(list: Obj[], base: string): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((entry, i) => { if (isIP(String(entry.ip ?? '')) === 0) errs.push(fieldErrors.invalid(fieldPath(base, i), entry.ip ?? '', ipMessage)); });
  if (list.length > 1) {
    const families = list.map((entry) => isIP(String(entry.ip ?? '')));
    const dualStack = families.every((f) => f !== 0) && families.includes(4) && families.includes(6);
    if (!dualStack || list.length > 2) errs.push(fieldErrors.invalid(base, list, 'may specify no more than one IP for each IP family'));
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (seen.has(entry.ip)) errs.push(fieldErrors.duplicate(fieldPath(base, i), entry));
      seen.add(entry.ip);
    });
  }
  return errs;
}

/** A container that left the terminated state although the pod does not restart it. */
function stateTransitions(statuses: Obj[] | undefined, old: Obj[] | undefined, base: string, restartPolicy: string, restartable = (_name: string) => false): FieldError[] {
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  (old ?? []).forEach((was, i) => {
    const terminated = was.state?.terminated;
    if (!terminated) return;
    if ((terminated.exitCode ?? 0) !== 0 && restartPolicy === 'OnFailure') return;
    if (restartable(was.name)) return;
    for (const now of statuses ?? []) {
      if (now.name === was.name && !now.state?.terminated) errs.push(fieldErrors.forbidden(`${fieldPath(base, i)}.state`, 'may not be transitioned to non-terminated state'));
    }
  });
  return errs;
}

const systemPodConditions = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** Upstream's ValidatePodStatusUpdate (its condition types are reported under metadata, as upstream does). */
export function validatePodStatusUpdate(pod: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const status: Obj = pod.status ?? {};
  ((status.conditions ?? []) as Obj[]).forEach((c, i) => {
    if (!systemPodConditions.has(c.type)) errs.push(...checkName(isQualifiedName, `${fieldPath('metadata.conditions', i)}.Type`, String(c.type ?? '')));
  });
  if ((pod.spec?.nodeName ?? '') !== (old.spec?.nodeName ?? '')) errs.push(fieldErrors.forbidden('status.nodeName', 'may not be changed directly'));
  const nominated = status.nominatedNodeName ?? '';
  if (nominated && nominated !== (old.status?.nominatedNodeName ?? '')) errs.push(...checkName(isDns1123Subdomain, 'status.nominatedNodeName', nominated));
  const policy: string = old.spec?.restartPolicy ?? 'Always';
  const restartableInit = (name: string) => ((old.spec?.initContainers ?? []) as Obj[]).some((c) => c.name === name && c.restartPolicy === 'Always');
  errs.push(...stateTransitions(status.containerStatuses, old.status?.containerStatuses, 'status.containerStatuses', policy));
  errs.push(...stateTransitions(status.initContainerStatuses, old.status?.initContainerStatuses, 'status.initContainerStatuses', policy, restartableInit));
  errs.push(...stateTransitions(status.ephemeralContainerStatuses, old.status?.ephemeralContainerStatuses, 'status.ephemeralContainerStatuses', 'Never'));
  errs.push(...validateIPList(status.podIPs ?? [], 'status.podIPs'));
  const hostIPs: Obj[] = status.hostIPs ?? [];
  if (hostIPs.length && (status.hostIP ?? '') !== hostIPs[0]!.ip) errs.push(fieldErrors.invalid('status.hostIPs[0].ip', hostIPs[0]!.ip ?? '', 'must be equal to `hostIP`'));
  errs.push(...validateIPList(hostIPs, 'status.hostIPs'));
  return errs;
}

const ipModes = ['Proxy', 'VIP'];

/** Upstream's ValidateServiceStatusUpdate: load balancer ingress points and conditions. */
export function validateServiceStatusUpdate(svc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ingress: Obj[] = svc.status?.loadBalancer?.ingress ?? [];
  if (svc.spec?.type !== 'LoadBalancer' && ingress.length) {
    errs.push(fieldErrors.forbidden('status.loadBalancer.ingress', "may only be used when `spec.type` is 'LoadBalancer'"));
  } else {
    ingress.forEach((point, i) => {
      const at = fieldPath('status.loadBalancer.ingress', i);
      if (point.ip && isIP(point.ip) === 0) errs.push(fieldErrors.invalid(`${at}.ip`, point.ip, ipMessage));
      if (point.ipMode !== undefined && !point.ip) errs.push(fieldErrors.forbidden(`${at}.ipMode`, 'may not be specified when `ip` is not'));
      else if (point.ipMode !== undefined && !ipModes.includes(point.ipMode)) errs.push(fieldErrors.notSupported(`${at}.ipMode`, point.ipMode, ipModes));
      else if (point.ipMode === undefined && point.ip) errs.push(fieldErrors.required(`${at}.ipMode`, 'must be specified when `ip` is set'));
      if (point.hostname) {
        errs.push(...checkName(isDns1123Subdomain, `${at}.hostname`, point.hostname));
        if (isIP(point.hostname) !== 0) errs.push(fieldErrors.invalid(`${at}.hostname`, point.hostname, 'must be a DNS name, not an IP address'));
      }
    });
  }
  errs.push(...validateConditions(svc.status?.conditions, 'status.conditions'));
  return errs;
}

/** Counts that may not be negative, each at `base.<name>`. */
export function nonNegative(status: Obj, base: string, names: string[]): FieldError[] {
  return names.filter((n) => typeof status[n] === 'number' && status[n] < 0).map((n) => fieldErrors.invalid(`${base}.${n}`, status[n], notNegative));
}

/** Upstream's ValidateReplicationControllerStatus. */
export function validateReplicationControllerStatusUpdate(rc: KubeObject): FieldError[] {
  const status: Obj = rc.status ?? {};
  const errs = nonNegative(status, 'status', ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']);
  const count = (n: string): number => status[n] ?? 0;
  const above = 'cannot be greater than status.replicas';
  if (count('fullyLabeledReplicas') > count('replicas')) errs.push(fieldErrors.invalid('status.fullyLabeledReplicas', count('fullyLabeledReplicas'), above));
  if (count('readyReplicas') > count('replicas')) errs.push(fieldErrors.invalid('status.readyReplicas', count('readyReplicas'), above));
  if (count('availableReplicas') > count('replicas')) errs.push(fieldErrors.invalid('status.availableReplicas', count('availableReplicas'), above));
  if (count('availableReplicas') > count('readyReplicas')) errs.push(fieldErrors.invalid('status.availableReplicas', count('availableReplicas'), 'cannot be greater than readyReplicas'));
  return errs;
}

/** Upstream's ValidateResourceQuotaStatusUpdate: the names and quantities of status.hard and status.used. */
export function validateResourceQuotaStatusUpdate(quota: KubeObject): FieldError[] {
  return [
    ...validateResourceList(quota.status?.hard, 'status.hard', false).errs,
    ...validateResourceList(quota.status?.used, 'status.used', false).errs,
  ];
}

/** A quantity that is no resource quantity at all: negative (upstream's validateBasicResource). */
function basicResources(list: Obj | undefined, base: string): FieldError[] {
  const { parsed } = validateResourceList(list, base, false);
  return [...parsed].filter(([, q]) => q.nanos < 0n).map(([name, q]) => fieldErrors.invalid(`${base}[${name}]`, Number(q.nanos / 1_000_000_000n), 'must be a valid resource quantity'));
}

const allocatedResourceStatuses = ['ControllerResizeInProgress', 'ControllerResizeInfeasible', 'NodeResizeInProgress', 'NodeResizeInfeasible', 'NodeResizePending'];

/** Upstream's ValidatePersistentVolumeClaimStatusUpdate. */
export function validatePersistentVolumeClaimStatusUpdate(pvc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!(pvc.spec?.accessModes ?? []).length) errs.push(fieldErrors.required('Spec.accessModes'));
  errs.push(...basicResources(pvc.status?.capacity, 'status.capacity'));
  for (const [name, state] of Object.entries((pvc.status?.allocatedResourceStatuses ?? {}) as Obj)) {
    if (name !== 'storage') errs.push(fieldErrors.notSupported('status.allocatedResourceStatuses', name, ['storage']));
    else if (!allocatedResourceStatuses.includes(state)) errs.push(fieldErrors.notSupported('status.allocatedResourceStatuses', state, allocatedResourceStatuses));
  }
  const allocated: Obj = pvc.status?.allocatedResources ?? {};
  for (const name of Object.keys(allocated)) {
    if (name !== 'storage') errs.push(fieldErrors.notSupported('status.allocatedResources', name, ['storage']));
  }
  if (allocated.storage !== undefined) errs.push(...basicResources({ storage: allocated.storage }, 'status.allocatedResources'));
  return errs;
}
