// The checks of the Pod Security Standards, as upstream 1.32's
// pod-security-admission defines them: each belongs to the baseline or the
// restricted level and has one or more revisions, each applying from a
// policy version on (the version that introduced the field or the rule), so
// that a namespace pinned to `v1.22` is judged as it was then. A restricted
// revision may stand in for baseline checks it makes stricter (overrides).
//
// A check answers nothing when the pod passes, or a short reason (`hostPort`)
// and a detail naming the offending containers and values, worded as
// upstream's so that users and tools recognise them.

import { goQuote } from '../../../machinery/goquote.js';
import { ownValue } from '../../../machinery/ownkeys.js';
import { productGroup } from '../../../machinery/vocabulary.js';

type Obj = Record<string, any>;

/** The pod (or template) metadata and spec a check reads. */
export interface PodParts {
  metadata: Obj;
  spec: Obj;
}

export interface Violation {
  reason: string;
  /** Which containers and values; may be empty. */
  detail: string;
}

export type CheckFn = (pod: PodParts) => Violation | undefined;

export interface CheckRevision {
  /** The first policy version (1.<since>) this revision applies to. */
  since: number;
  check: CheckFn;
  /** Baseline checks this (restricted) revision replaces. */
  overrides?: readonly string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Revisions by increasing `since`. */
  revisions: readonly CheckRevision[];
}

function list(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter((v): v is Obj => typeof v === 'object' && v !== null) : [];
}

function object(value: unknown): Obj | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Obj : undefined;
}

/** Init containers, containers and ephemeral containers, in that order (upstream's visit order). */
function containers(spec: Obj): Obj[] {
  return [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)];
}

function nameOf(container: Obj): string {
  return typeof container.name === 'string' ? container.name : '';
}

function securityContext(holder: Obj): Obj | undefined {
  return object(holder.securityContext);
}

function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `"a", "b"` (upstream's joinQuote: plain quotes, no escaping). */
function joinQuote(items: readonly string[]): string {
  return items.length ? `"${items.join('", "')}"` : '';
}

/** `container "a"` / `containers "a", "b"`. */
function containersText(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** Distinct values, sorted as Go sorts strings (by code unit, which is byte order for what these hold). */
function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function isWindows(spec: Obj): boolean {
  return object(spec.os)?.name === 'windows';
}

/** A revision that lets pods declaring `os.name: windows` through (from 1.25: those fields do not apply to them). */
function exceptWindows(check: CheckFn): CheckFn {
  return (pod) => (isWindows(pod.spec) ? undefined : check(pod));
}

// --- baseline ---

function privileged({ spec }: PodParts): Violation | undefined {
  const bad = containers(spec).filter((c) => securityContext(c)?.privileged === true).map(nameOf);
  if (!bad.length) return undefined;
  return { reason: 'privileged', detail: `${containersText(bad)} must not set securityContext.privileged=true` };
}

function hostNamespaces({ spec }: PodParts): Violation | undefined {
  const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true).map((f) => `${f}=true`);
  return set.length ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
}

function hostPorts({ spec }: PodParts): Violation | undefined {
  const bad: string[] = [];
  const ports = new Set<string>();
  for (const c of containers(spec)) {
    let uses = false;
    for (const port of list(c.ports)) {
      if (typeof port.hostPort === 'number' && port.hostPort !== 0) {
        uses = true;
        ports.add(String(port.hostPort));
      }
    }
    if (uses) bad.push(nameOf(c));
  }
  if (!bad.length) return undefined;
  const sorted = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: `${containersText(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', sorted.length)} ${sorted.join(', ')}`,
  };
}

function hostPathVolumes({ spec }: PodParts): Violation | undefined {
  const bad = list(spec.volumes).filter((v) => object(v.hostPath) !== undefined).map(nameOf);
  if (!bad.length) return undefined;
  return { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` };
}

const defaultCapabilities = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

function capabilitiesOf(c: Obj): Obj | undefined {
  return object(securityContext(c)?.capabilities);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function capabilitiesBaseline({ spec }: PodParts): Violation | undefined {
  const bad: string[] = [];
  const added = new Set<string>();
  for (const c of containers(spec)) {
    const extra = strings(capabilitiesOf(c)?.add).filter((cap) => !defaultCapabilities.has(cap));
    if (!extra.length) continue;
    bad.push(nameOf(c));
    for (const cap of extra) added.add(cap);
  }
  if (!bad.length) return undefined;
  return { reason: 'non-default capabilities', detail: `${containersText(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add` };
}

// AppArmor: the beta annotations (upstream's and ours) and the 1.30 fields.
const appArmorAnnotationPrefixes = ['container.apparmor.security.beta.kubernetes.io/', `${productGroup('container.apparmor.security.beta')}/`];

function allowedAppArmorAnnotation(value: string): boolean {
  return value === '' || value === 'runtime/default' || value.startsWith('localhost/');
}

function allowedAppArmorType(type: unknown): boolean {
  return type === 'RuntimeDefault' || type === 'Localhost';
}

function appArmorProfile({ metadata, spec }: PodParts): Violation | undefined {
  const setters: string[] = [];
  const badValues = new Set<string>();
  const podProfile = object(securityContext(spec)?.appArmorProfile);
  if (podProfile && !allowedAppArmorType(podProfile.type)) {
    setters.push('pod');
    badValues.add(String(podProfile.type ?? ''));
  }
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = object(securityContext(c)?.appArmorProfile);
    if (profile && !allowedAppArmorType(profile.type)) {
      bad.push(nameOf(c));
      badValues.add(String(profile.type ?? ''));
    }
  }
  if (bad.length) setters.push(containersText(bad));
  const annotations = object(metadata.annotations) ?? {};
  const forbidden: string[] = [];
  for (const [key, value] of Object.entries(annotations)) {
    if (typeof value !== 'string') continue;
    if (appArmorAnnotationPrefixes.some((p) => key.startsWith(p)) && !allowedAppArmorAnnotation(value)) forbidden.push(`${key}=${goQuote(value)}`);
  }
  const values = sortedSet(badValues);
  if (forbidden.length) {
    values.push(...sortedSet(forbidden));
    setters.push(pluralize('annotation', 'annotations', forbidden.length));
  }
  if (!setters.length) return undefined;
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
}

function seLinuxOptionsWith(allowedTypes: ReadonlySet<string>): CheckFn {
  return ({ spec }) => {
    const setters: string[] = [];
    const badTypes = new Set<string>();
    let userSet = false;
    let roleSet = false;
    const valid = (opts: Obj): boolean => {
      let ok = true;
      const type = typeof opts.type === 'string' ? opts.type : '';
      if (!allowedTypes.has(type)) {
        ok = false;
        badTypes.add(type);
      }
      if (typeof opts.user === 'string' && opts.user !== '') {
        ok = false;
        userSet = true;
      }
      if (typeof opts.role === 'string' && opts.role !== '') {
        ok = false;
        roleSet = true;
      }
      return ok;
    };
    const podOptions = object(securityContext(spec)?.seLinuxOptions);
    if (podOptions && !valid(podOptions)) setters.push('pod');
    const bad: string[] = [];
    for (const c of containers(spec)) {
      const options = object(securityContext(c)?.seLinuxOptions);
      if (options && !valid(options)) bad.push(nameOf(c));
    }
    if (bad.length) setters.push(containersText(bad));
    if (!setters.length) return undefined;
    const what: string[] = [];
    if (badTypes.size) {
      const types = sortedSet(badTypes);
      what.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    }
    if (userSet) what.push('user may not be set');
    if (roleSet) what.push('role may not be set');
    return { reason: 'seLinuxOptions', detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${what.join('; ')}` };
  };
}

const seLinuxTypes1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const seLinuxTypes1_31 = new Set([...seLinuxTypes1_0, 'container_engine_t']);

function procMount({ spec }: PodParts): Violation | undefined {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const c of containers(spec)) {
    const value = securityContext(c)?.procMount;
    if (value === undefined || value === null || value === 'Default') continue;
    bad.push(nameOf(c));
    types.add(String(value));
  }
  if (!bad.length) return undefined;
  return { reason: 'procMount', detail: `${containersText(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
}

// Seccomp: before 1.19 the alpha annotations, from 1.19 the fields.
const seccompPodAnnotation = 'seccomp.security.alpha.kubernetes.io/pod';
const seccompContainerAnnotationPrefix = 'container.seccomp.security.alpha.kubernetes.io/';

function allowedSeccompAnnotation(value: string): boolean {
  return value === 'runtime/default' || value === 'docker/default' || value.startsWith('localhost/');
}

function allowedSeccompType(type: unknown): boolean {
  return type === 'Localhost' || type === 'RuntimeDefault';
}

function seccompBaseline1_0({ metadata, spec }: PodParts): Violation | undefined {
  const annotations = object(metadata.annotations) ?? {};
  const forbidden = new Set<string>();
  const judge = (key: string) => {
    const value = ownValue(annotations, key);
    if (typeof value === 'string' && !allowedSeccompAnnotation(value)) forbidden.add(`${key}=${goQuote(value)}`);
  };
  judge(seccompPodAnnotation);
  for (const c of containers(spec)) judge(seccompContainerAnnotationPrefix + nameOf(c));
  if (!forbidden.size) return undefined;
  const sorted = sortedSet(forbidden);
  return { reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', sorted.length)} ${sorted.join(', ')}` };
}

/** Seccomp fields: `requireSet` (restricted) also refuses containers left unconfined by an unset pod and container profile. */
function seccompFields(requireSet: boolean): CheckFn {
  return ({ spec }) => {
    const setters: string[] = [];
    const badValues = new Set<string>();
    let podSet = false;
    const podProfile = object(securityContext(spec)?.seccompProfile);
    if (podProfile) {
      if (!allowedSeccompType(podProfile.type)) {
        setters.push('pod');
        badValues.add(String(podProfile.type ?? ''));
      } else podSet = true;
    }
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const profile = object(securityContext(c)?.seccompProfile);
      if (profile) {
        if (!allowedSeccompType(profile.type)) {
          explicit.push(nameOf(c));
          badValues.add(String(profile.type ?? ''));
        }
      } else if (!podSet) implicit.push(nameOf(c));
    }
    if (explicit.length) setters.push(containersText(explicit));
    if (setters.length) {
      return { reason: 'seccompProfile', detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
    }
    if (requireSet && implicit.length) {
      return { reason: 'seccompProfile', detail: `pod or ${containersText(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
    }
    return undefined;
  };
}

const sysctls1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const sysctls1_27 = [...sysctls1_0, 'net.ipv4.ip_local_reserved_ports'];
const sysctls1_29 = [...sysctls1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const sysctls1_32 = [...sysctls1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctlsAllowing(names: readonly string[]): CheckFn {
  const allowed = new Set(names);
  return ({ spec }) => {
    const forbidden = list(securityContext(spec)?.sysctls).map(nameOf).filter((n) => !allowed.has(n));
    return forbidden.length ? { reason: 'forbidden sysctls', detail: forbidden.join(', ') } : undefined;
  };
}

function windowsHostProcess({ spec }: PodParts): Violation | undefined {
  const hostProcess = (holder: Obj) => object(securityContext(holder)?.windowsOptions)?.hostProcess === true;
  const setters: string[] = [];
  if (hostProcess(spec)) setters.push('pod');
  const bad = containers(spec).filter(hostProcess).map(nameOf);
  if (bad.length) setters.push(containersText(bad));
  if (!setters.length) return undefined;
  return { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
}

// --- restricted ---

function allowPrivilegeEscalation({ spec }: PodParts): Violation | undefined {
  const bad = containers(spec).filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false).map(nameOf);
  if (!bad.length) return undefined;
  return { reason: 'allowPrivilegeEscalation != false', detail: `${containersText(bad)} must set securityContext.allowPrivilegeEscalation=false` };
}

function capabilitiesRestricted({ spec }: PodParts): Violation | undefined {
  const missingDropAll: string[] = [];
  const adding: string[] = [];
  const forbidden = new Set<string>();
  for (const c of containers(spec)) {
    const caps = capabilitiesOf(c);
    if (!caps) {
      missingDropAll.push(nameOf(c));
      continue;
    }
    if (!strings(caps.drop).includes('ALL')) missingDropAll.push(nameOf(c));
    const extra = strings(caps.add).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length) {
      adding.push(nameOf(c));
      for (const cap of extra) forbidden.add(cap);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersText(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) details.push(`${containersText(adding)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
  return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
}

/** The inline volume sources restricted pods may use. */
const allowedVolumeSources = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
/** The ones they may not, in upstream's order of precedence when a volume names several. */
const restrictedVolumeSources = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume',
  'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos'];

function restrictedVolumes({ spec }: PodParts): Violation | undefined {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const volume of list(spec.volumes)) {
    if (allowedVolumeSources.some((s) => object(ownValue(volume, s)) !== undefined)) continue;
    // A volume naming no source at all is an emptyDir (the API server's defaulting gives it one).
    if (!Object.keys(volume).some((k) => k !== 'name' && volume[k] !== null && volume[k] !== undefined)) continue;
    bad.push(nameOf(volume));
    types.add(restrictedVolumeSources.find((s) => object(ownValue(volume, s)) !== undefined) ?? 'unknown');
  }
  if (!bad.length) return undefined;
  const sorted = sortedSet(types);
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', sorted.length)} ${joinQuote(sorted)}`,
  };
}

function runAsNonRoot({ spec }: PodParts): Violation | undefined {
  const setters: string[] = [];
  let podNonRoot = false;
  const podValue = securityContext(spec)?.runAsNonRoot;
  if (podValue === false) setters.push('pod');
  else if (podValue === true) podNonRoot = true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const value = securityContext(c)?.runAsNonRoot;
    if (value === true || value === false) {
      if (value === false) explicit.push(nameOf(c));
    } else if (!podNonRoot) implicit.push(nameOf(c));
  }
  if (explicit.length) setters.push(containersText(explicit));
  if (setters.length) return { reason: 'runAsNonRoot != true', detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length) return { reason: 'runAsNonRoot != true', detail: `pod or ${containersText(implicit)} must set securityContext.runAsNonRoot=true` };
  return undefined;
}

function runAsUser({ spec }: PodParts): Violation | undefined {
  const setters: string[] = [];
  if (securityContext(spec)?.runAsUser === 0) setters.push('pod');
  const bad = containers(spec).filter((c) => securityContext(c)?.runAsUser === 0).map(nameOf);
  if (bad.length) setters.push(containersText(bad));
  return setters.length ? { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` } : undefined;
}

const capabilitiesBaselineId = 'capabilities_baseline';
const hostPathVolumesId = 'hostPathVolumes';
const seccompBaselineId = 'seccompProfile_baseline';

/** Every check upstream 1.32 enables by default, with the versions each revision applies from. */
export const checks: readonly Check[] = [
  { id: 'privileged', level: 'baseline', revisions: [{ since: 0, check: privileged }] },
  { id: 'hostNamespaces', level: 'baseline', revisions: [{ since: 0, check: hostNamespaces }] },
  { id: 'hostPorts', level: 'baseline', revisions: [{ since: 0, check: hostPorts }] },
  { id: hostPathVolumesId, level: 'baseline', revisions: [{ since: 0, check: hostPathVolumes }] },
  { id: capabilitiesBaselineId, level: 'baseline', revisions: [{ since: 0, check: capabilitiesBaseline }] },
  { id: 'appArmorProfile', level: 'baseline', revisions: [{ since: 0, check: appArmorProfile }] },
  { id: 'seLinuxOptions', level: 'baseline', revisions: [{ since: 0, check: seLinuxOptionsWith(seLinuxTypes1_0) }, { since: 31, check: seLinuxOptionsWith(seLinuxTypes1_31) }] },
  { id: 'procMount', level: 'baseline', revisions: [{ since: 0, check: procMount }] },
  { id: seccompBaselineId, level: 'baseline', revisions: [{ since: 0, check: seccompBaseline1_0 }, { since: 19, check: seccompFields(false) }] },
  {
    id: 'sysctls', level: 'baseline',
    revisions: [{ since: 0, check: sysctlsAllowing(sysctls1_0) }, { since: 27, check: sysctlsAllowing(sysctls1_27) }, { since: 29, check: sysctlsAllowing(sysctls1_29) }, { since: 32, check: sysctlsAllowing(sysctls1_32) }],
  },
  { id: 'windowsHostProcess', level: 'baseline', revisions: [{ since: 0, check: windowsHostProcess }] },
  { id: 'allowPrivilegeEscalation', level: 'restricted', revisions: [{ since: 8, check: allowPrivilegeEscalation }, { since: 25, check: exceptWindows(allowPrivilegeEscalation) }] },
  {
    id: 'capabilities_restricted', level: 'restricted',
    revisions: [
      { since: 22, check: capabilitiesRestricted, overrides: [capabilitiesBaselineId] },
      { since: 25, check: exceptWindows(capabilitiesRestricted), overrides: [capabilitiesBaselineId] },
    ],
  },
  { id: 'restrictedVolumes', level: 'restricted', revisions: [{ since: 0, check: restrictedVolumes, overrides: [hostPathVolumesId] }] },
  { id: 'runAsNonRoot', level: 'restricted', revisions: [{ since: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', revisions: [{ since: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted', level: 'restricted',
    revisions: [
      { since: 19, check: seccompFields(true), overrides: [seccompBaselineId] },
      { since: 25, check: exceptWindows(seccompFields(true)), overrides: [seccompBaselineId] },
    ],
  },
];
