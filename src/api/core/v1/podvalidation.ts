// Upstream's rules for a pod spec that a schema cannot say, with upstream's
// messages: names unique across containers, volumes and ports, port ranges,
// resource quantities, restart and DNS policies, one source per volume,
// mounts that name a volume, and the few fields an update may change.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, fieldPath, isDns1123Label, isDns1123Subdomain, isQualifiedName, keyPath } from '../../../machinery/validation.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { parseQuantity, type Quantity } from '../../../machinery/quantity.js';
import type { KubeObject } from '../../kind.js';
import { VolumeSource } from './volumes.js';
import { containerEnumErrors, podSpecEnumErrors, type ContainerList } from './podenums.js';

type Obj = Record<string, any>;

const portNameChars = /^[-a-z0-9]+$/;
const hasLetter = /[a-z]/;
const envVarName = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const volumeSourceNames = Object.keys(VolumeSource.properties ?? {});

/** IANA_SVC_NAME, as upstream's IsValidPortName. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!portNameChars.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!hasLetter.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export const portRangeMessage = 'must be between 1 and 65535, inclusive';

/** A port number field: 1-65535. */
export function validatePortNumber(port: unknown, field: string): FieldError[] {
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [fieldErrors.invalid(field, port, portRangeMessage)];
}

const standardResources = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage']);

/** Resource names and quantities of a requests or limits map (non-negative, qualified names, hugepages and extended resources whole). */
export function validateResourceList(list: Obj | undefined, field: string, computeResources = true): { errs: FieldError[]; parsed: Map<string, Quantity> } {
  const errs: FieldError[] = [];
  const parsed = new Map<string, Quantity>();
  for (const [name, value] of Object.entries(list ?? {})) {
    // The standard names are valid qualified names: only others are checked (most lists hold nothing else).
    const standard = standardResources.has(name);
    if (!standard) {
      const at = keyPath(field, name);
      errs.push(...checkName(isQualifiedName, at, name));
      if (computeResources && !name.includes('/') && !name.startsWith('hugepages-') && !name.startsWith('requests.')) {
        errs.push(fieldErrors.invalid(at, name, 'must be a standard resource type or fully qualified'));
      }
    }
    let q: Quantity;
    try {
      q = parseQuantity(String(value));
    } catch {
      continue; // the decoder refused it already
    }
    parsed.set(name, q);
    if (q.nanos < 0n) errs.push(fieldErrors.invalid(keyPath(field, name), String(value), 'must be greater than or equal to 0'));
    if (!standard && (name.includes('/') || name.startsWith('hugepages-')) && q.nanos % 1_000_000_000n !== 0n) {
      errs.push(fieldErrors.invalid(keyPath(field, name), String(value), 'must be an integer'));
    }
  }
  return { errs, parsed };
}

function validateResources(r: Obj | undefined, field: string): FieldError[] {
  if (!r) return [];
  const limits = validateResourceList(r.limits, `${field}.limits`);
  const requests = validateResourceList(r.requests, `${field}.requests`);
  const errs = [...limits.errs, ...requests.errs];
  for (const [name, request] of requests.parsed) {
    const limit = limits.parsed.get(name);
    if (limit && request.nanos > limit.nanos) {
      errs.push(fieldErrors.invalid(keyPath(`${field}.requests`, name), r.requests[name], `must be less than or equal to ${name} limit of ${r.limits[name]}`));
    }
  }
  return errs;
}

const protocols = ['SCTP', 'TCP', 'UDP'];

function validatePorts(ports: Obj[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (ports ?? []).forEach((port, i) => {
    const at = fieldPath(field, i);
    if (port.name) {
      for (const m of portNameErrors(port.name)) errs.push(fieldErrors.invalid(`${at}.name`, port.name, m));
      if (names.has(port.name)) errs.push(fieldErrors.duplicate(`${at}.name`, port.name));
      names.add(port.name);
    }
    if (!port.containerPort) errs.push(fieldErrors.required(`${at}.containerPort`));
    else errs.push(...validatePortNumber(port.containerPort, `${at}.containerPort`));
    if (port.hostPort) errs.push(...validatePortNumber(port.hostPort, `${at}.hostPort`));
    if (!port.protocol) errs.push(fieldErrors.required(`${at}.protocol`));
    else if (!protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${at}.protocol`, port.protocol, protocols));
  });
  return errs;
}

function validateEnv(env: Obj[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  (env ?? []).forEach((v, i) => {
    const at = fieldPath(field, i);
    if (!v.name) errs.push(fieldErrors.required(`${at}.name`));
    else if (!envVarName.test(v.name)) {
      errs.push(fieldErrors.invalid(`${at}.name`, v.name, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"));
    }
    if (v.valueFrom) {
      const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((k) => v.valueFrom[k]);
      if (sources.length === 0) errs.push(fieldErrors.invalid(`${at}.valueFrom`, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
      else if (sources.length > 1) errs.push(fieldErrors.invalid(`${at}.valueFrom`, '', 'may not have more than one field specified at a time'));
      if (v.value) errs.push(fieldErrors.invalid(`${at}.valueFrom`, '', 'may not be specified when `value` is not empty'));
    }
  });
  return errs;
}

function validateMounts(mounts: Obj[] | undefined, volumes: Set<string>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  (mounts ?? []).forEach((m, i) => {
    // Its path, built only for an error (every container mounts several).
    const at = () => fieldPath(field, i);
    if (!m.name) errs.push(fieldErrors.required(`${at()}.name`));
    else if (!volumes.has(m.name)) errs.push(fieldErrors.notFound(`${at()}.name`, m.name));
    if (!m.mountPath) errs.push(fieldErrors.required(`${at()}.mountPath`));
    else if (paths.has(m.mountPath)) errs.push(fieldErrors.invalid(`${at()}.mountPath`, m.mountPath, 'must be unique'));
    if (m.mountPath) paths.add(m.mountPath);
    if (m.subPath && m.subPathExpr) errs.push(fieldErrors.invalid(`${at()}.subPathExpr`, m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
  });
  return errs;
}

const pullPolicies = ['Always', 'IfNotPresent', 'Never'];
const messagePolicies = ['File', 'FallbackToLogsOnError'];

/** One container; `names` collects names across every container list of the pod. */
function validateContainer(c: Obj, at: string, names: Set<string>, volumes: Set<string>, list: ContainerList): FieldError[] {
  const ephemeral = list === 'ephemeralContainers';
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldErrors.required(`${at}.name`));
  else {
    errs.push(...checkName(isDns1123Label, `${at}.name`, c.name));
    if (names.has(c.name)) errs.push(fieldErrors.duplicate(`${at}.name`, c.name));
    names.add(c.name);
  }
  if (!c.image) errs.push(fieldErrors.required(`${at}.image`));
  else if (c.image.trim() !== c.image) errs.push(fieldErrors.invalid(`${at}.image`, c.image, 'must not have leading or trailing whitespace'));
  if (!c.terminationMessagePolicy) errs.push(fieldErrors.required(`${at}.terminationMessagePolicy`));
  else if (!messagePolicies.includes(c.terminationMessagePolicy)) errs.push(fieldErrors.notSupported(`${at}.terminationMessagePolicy`, c.terminationMessagePolicy, messagePolicies));
  if (!c.imagePullPolicy) errs.push(fieldErrors.required(`${at}.imagePullPolicy`));
  else if (!pullPolicies.includes(c.imagePullPolicy)) errs.push(fieldErrors.notSupported(`${at}.imagePullPolicy`, c.imagePullPolicy, pullPolicies));
  if (ephemeral) {
    for (const forbidden of ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle']) {
      if (c[forbidden] !== undefined) errs.push(fieldErrors.forbidden(`${at}.${forbidden}`, `cannot be set for an Ephemeral Container`));
    }
  } else {
    errs.push(...validatePorts(c.ports, `${at}.ports`));
  }
  errs.push(...validateEnv(c.env, `${at}.env`));
  errs.push(...validateMounts(c.volumeMounts, volumes, `${at}.volumeMounts`));
  errs.push(...validateResources(c.resources, `${at}.resources`));
  if (c.stdinOnce && !c.stdin) errs.push(fieldErrors.forbidden(`${at}.stdinOnce`, 'stdinOnce requires stdin to be enabled'));
  errs.push(...containerEnumErrors(c, at, list));
  return errs;
}

function validateVolumes(volumes: Obj[] | undefined): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (volumes ?? []).forEach((v, i) => {
    const at = fieldPath('spec.volumes', i);
    if (!v.name) errs.push(fieldErrors.required(`${at}.name`));
    else {
      errs.push(...checkName(isDns1123Label, `${at}.name`, v.name));
      if (names.has(v.name)) errs.push(fieldErrors.duplicate(`${at}.name`, v.name));
      names.add(v.name);
    }
    let sources = 0;
    for (const k of volumeSourceNames) {
      if (v[k] === undefined) continue;
      if (sources++ > 0) errs.push(fieldErrors.forbidden(`${at}.${k}`, 'may not specify more than 1 volume type'));
    }
    if (sources === 0) errs.push(fieldErrors.required(at, 'must specify a volume type'));
    if (v.persistentVolumeClaim && !v.persistentVolumeClaim.claimName) errs.push(fieldErrors.required(`${at}.persistentVolumeClaim.claimName`));
    if (v.hostPath && !v.hostPath.path) errs.push(fieldErrors.required(`${at}.hostPath.path`));
    if (v.configMap && !v.configMap.name) errs.push(fieldErrors.required(`${at}.configMap.name`));
    if (v.secret && !v.secret.secretName) errs.push(fieldErrors.required(`${at}.secret.secretName`));
  });
  return { errs, names };
}

const restartPolicies = ['Always', 'OnFailure', 'Never'];
const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

/** The spec of a pod (or of a pod template: `base` names where it is). */
export function validatePodSpec(spec: Obj | undefined, base = 'spec'): FieldError[] {
  if (!spec) return [fieldErrors.required(base)];
  const at = (f: string) => `${base}.${f}`;
  const { errs, names: volumes } = validateVolumes(spec.volumes);
  if (base !== 'spec') errs.forEach((e, i) => (errs[i] = new FieldError(e.type, e.field.replace(/^spec\./, `${base}.`), e.detail, e.badValue, e.hasValue)));
  const names = new Set<string>();
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) errs.push(fieldErrors.required(at('containers')));
  for (const list of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    (spec[list] ?? []).forEach((c: Obj, i: number) => errs.push(...validateContainer(c, fieldPath(at(list), i), names, volumes, list)));
  }
  if (!spec.restartPolicy) errs.push(fieldErrors.required(at('restartPolicy')));
  else if (!restartPolicies.includes(spec.restartPolicy)) errs.push(fieldErrors.notSupported(at('restartPolicy'), spec.restartPolicy, restartPolicies));
  if (!spec.dnsPolicy) errs.push(fieldErrors.required(at('dnsPolicy')));
  else if (!dnsPolicies.includes(spec.dnsPolicy)) errs.push(fieldErrors.notSupported(at('dnsPolicy'), spec.dnsPolicy, dnsPolicies));
  if (spec.dnsPolicy === 'None' && !spec.dnsConfig) errs.push(fieldErrors.required(at('dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  if (spec.activeDeadlineSeconds !== undefined && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > 2147483647)) {
    errs.push(fieldErrors.invalid(at('activeDeadlineSeconds'), spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  if (spec.terminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds < 0) {
    errs.push(fieldErrors.invalid(at('terminationGracePeriodSeconds'), spec.terminationGracePeriodSeconds, 'must be greater than or equal to 0'));
  }
  for (const [key, value] of Object.entries((spec.nodeSelector ?? {}) as Record<string, string>)) {
    errs.push(...checkName(isQualifiedName, keyPath(at('nodeSelector'), key), key));
    if (value.length > 63) errs.push(fieldErrors.invalid(keyPath(at('nodeSelector'), key), value, 'must be no more than 63 characters'));
  }
  if (spec.serviceAccountName) errs.push(...checkName(isDns1123Subdomain, at('serviceAccountName'), spec.serviceAccountName));
  if (spec.nodeName) errs.push(...checkName(isDns1123Subdomain, at('nodeName'), spec.nodeName));
  if (spec.hostname) errs.push(...checkName(isDns1123Label, at('hostname'), spec.hostname));
  if (spec.subdomain) errs.push(...checkName(isDns1123Label, at('subdomain'), spec.subdomain));
  (spec.topologySpreadConstraints ?? []).forEach((c: Obj, i: number) => {
    const ci = fieldPath(at('topologySpreadConstraints'), i);
    if (!(c.maxSkew >= 1)) errs.push(fieldErrors.invalid(`${ci}.maxSkew`, c.maxSkew ?? 0, 'must be greater than zero'));
    errs.push(...validateLabelSelector(c.labelSelector, `${ci}.labelSelector`));
  });
  errs.push(...podSpecEnumErrors(spec, base));
  (spec.tolerations ?? []).forEach((tol: Obj, i: number) => {
    const ti = fieldPath(at('tolerations'), i);
    if (tol.operator === 'Exists' && tol.value) errs.push(fieldErrors.invalid(`${ti}.operator`, tol.value, 'value must be empty when `operator` is \'Exists\''));
    if (tol.tolerationSeconds !== undefined && tol.effect !== 'NoExecute') {
      errs.push(fieldErrors.invalid(`${ti}.effect`, tol.effect ?? '', 'effect must be \'NoExecute\' when `tolerationSeconds` is set'));
    }
  });
  return errs;
}

/** What an update may change in a pod's spec: images, a shorter deadline, more tolerations, a negative grace period to 1. */
const mutableFieldsMessage = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** Paths under `base` where two values differ, for the forbidden-update message. */
function differences(a: unknown, b: unknown, base: string, out: string[]): void {
  if (deepEqual(a, b)) return;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const seg = Array.isArray(a) ? `[${k}]` : `.${k}`;
      differences((a as Obj)[k], (b as Obj)[k], `${base}${seg}`, out);
    }
    return;
  }
  out.push(`${base}: ${JSON.stringify(b ?? null)} -> ${JSON.stringify(a ?? null)}`);
}

export function validatePodSpecUpdate(pod: KubeObject, old: KubeObject): FieldError[] {
  const spec = pod.spec ?? {};
  const oldSpec = old.spec ?? {};
  const errs: FieldError[] = [];
  if ((spec.containers ?? []).length !== (oldSpec.containers ?? []).length) {
    errs.push(fieldErrors.forbidden('spec.containers', 'pod updates may not add or remove containers'));
    return errs;
  }
  if (oldSpec.activeDeadlineSeconds !== undefined) {
    if (spec.activeDeadlineSeconds === undefined) errs.push(fieldErrors.invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
    else if (spec.activeDeadlineSeconds > oldSpec.activeDeadlineSeconds) {
      errs.push(fieldErrors.invalid('spec.activeDeadlineSeconds', spec.activeDeadlineSeconds, 'must be less than or equal to previous value'));
    }
  }
  const oldTolerations: Obj[] = oldSpec.tolerations ?? [];
  const kept = oldTolerations.every((t) => (spec.tolerations ?? []).some((n: Obj) => deepEqual(n, t)));
  if (!kept) errs.push(fieldErrors.forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
  // Everything else must stay: compare with the mutable fields taken from the old spec.
  const munged: Obj = structuredClone(spec);
  const withOldImage = (list: Obj[] | undefined, from: Obj[] | undefined) => (list ?? []).forEach((c, i) => { if (from?.[i]) c.image = from[i].image; });
  withOldImage(munged.containers, oldSpec.containers);
  withOldImage(munged.initContainers, oldSpec.initContainers);
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.tolerations = oldSpec.tolerations;
  if (oldSpec.terminationGracePeriodSeconds < 0 && spec.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  for (const k of Object.keys(munged)) if (munged[k] === undefined) delete munged[k];
  if (!deepEqual(munged, oldSpec)) {
    const diff: string[] = [];
    differences(munged, oldSpec, 'spec', diff);
    errs.push(fieldErrors.forbidden('spec', `${mutableFieldsMessage}\n${diff.join('\n')}`));
  }
  return errs;
}
