// Upstream's enumerated fields of a pod spec and its containers beyond the
// policies podvalidation.ts checks inline (restart, DNS, pull, termination
// message, port protocols): each refused with upstream's Required or
// Unsupported value, at upstream's path (a few point at the parent, as
// upstream's do), listing the values in upstream's order: a Go set's sorted,
// a literal list as written.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { fieldPath } from '../../../machinery/validation.js';
import { optionalEnum } from '../../sharedrules.js';

type Obj = Record<string, any>;

const mountPropagations = ['Bidirectional', 'HostToContainer', 'None'];
const httpSchemes = ['HTTP', 'HTTPS'];
const procMounts = ['Default', 'Unmasked'];
const seccompTypes = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const appArmorTypes = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const resizeResources = ['cpu', 'memory'];
const resizeRestartPolicies = ['NotRequired', 'RestartContainer'];
const sidecarRestartPolicies = ['Always'];
const preemptionPolicies = ['PreemptLowerPriority', 'Never'];
const fsGroupChangePolicies = ['Always', 'OnRootMismatch'];
const operatingSystems = ['linux', 'windows'];
const tolerationOperators = ['Equal', 'Exists'];
const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const scheduleActions = ['DoNotSchedule', 'ScheduleAnyway'];
const nodeInclusionPolicies = ['Honor', 'Ignore'];

const isSet = (v: unknown) => v !== undefined && v !== null;

/** A profile's `type` (seccomp, AppArmor): required once the profile is given. */
function profileType(profile: Obj | undefined, at: string, what: string, supported: readonly string[]): FieldError[] {
  if (!profile || typeof profile !== 'object') return [];
  if (!profile.type) return [fieldErrors.required(`${at}.type`, `type is required when ${what} is set`)];
  return optionalEnum(profile.type, `${at}.type`, supported);
}

/** The security context of a container or of the pod (`pod` adds the pod-only fields). */
function securityContextErrors(sc: Obj | undefined, at: string, pod: boolean): FieldError[] {
  if (!sc || typeof sc !== 'object') return [];
  const errs = [
    ...profileType(sc.seccompProfile, `${at}.seccompProfile`, 'seccompProfile', seccompTypes),
    ...profileType(sc.appArmorProfile, `${at}.appArmorProfile`, 'appArmorProfile', appArmorTypes),
  ];
  if (pod) errs.push(...optionalEnum(sc.fsGroupChangePolicy, `${at}.fsGroupChangePolicy`, fsGroupChangePolicies));
  else errs.push(...optionalEnum(sc.procMount, `${at}.procMount`, procMounts));
  return errs;
}

/** The HTTP scheme of a probe's or a hook's httpGet (defaulted to HTTP, so only a value sent is refused). */
function handlerErrors(handler: Obj | undefined, at: string): FieldError[] {
  if (!handler?.httpGet || typeof handler.httpGet !== 'object') return [];
  return optionalEnum(handler.httpGet.scheme, `${at}.httpGet.scheme`, httpSchemes);
}

export type ContainerList = 'initContainers' | 'containers' | 'ephemeralContainers';

/** The enumerated fields of one container of `list`, at `at`. */
export function containerEnumErrors(c: Obj, at: string, list: ContainerList): FieldError[] {
  const errs: FieldError[] = [];
  (Array.isArray(c.volumeMounts) ? c.volumeMounts : []).forEach((m: Obj, i: number) => {
    errs.push(...optionalEnum(m?.mountPropagation, `${fieldPath(`${at}.volumeMounts`, i)}.mountPropagation`, mountPropagations));
  });
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) errs.push(...handlerErrors(c[probe], `${at}.${probe}`));
  for (const hook of ['postStart', 'preStop']) errs.push(...handlerErrors(c.lifecycle?.[hook], `${at}.lifecycle.${hook}`));
  errs.push(...securityContextErrors(c.securityContext, `${at}.securityContext`, false));
  // Upstream files both of a resize policy's errors under the list itself.
  for (const policy of (Array.isArray(c.resizePolicy) ? c.resizePolicy : []) as Obj[]) {
    if (!policy?.resourceName) errs.push(fieldErrors.required(`${at}.resizePolicy`));
    else errs.push(...optionalEnum(policy.resourceName, `${at}.resizePolicy`, resizeResources));
    if (!policy?.restartPolicy) errs.push(fieldErrors.required(`${at}.resizePolicy`));
    else errs.push(...optionalEnum(policy.restartPolicy, `${at}.resizePolicy`, resizeRestartPolicies));
  }
  if (isSet(c.restartPolicy)) {
    if (list === 'initContainers') errs.push(...optionalEnum(c.restartPolicy, `${at}.restartPolicy`, sidecarRestartPolicies));
    else if (list === 'containers') errs.push(fieldErrors.forbidden(`${at}.restartPolicy`, 'may not be set for non-init containers'));
  }
  return errs;
}

/** The pod-level enumerated fields of a spec at `base`. */
export function podSpecEnumErrors(spec: Obj, base: string): FieldError[] {
  const at = (f: string) => `${base}.${f}`;
  const errs: FieldError[] = [];
  if (isSet(spec.preemptionPolicy)) {
    if (spec.preemptionPolicy === '') errs.push(fieldErrors.required(at('preemptionPolicy')));
    else errs.push(...optionalEnum(spec.preemptionPolicy, at('preemptionPolicy'), preemptionPolicies));
  }
  errs.push(...securityContextErrors(spec.securityContext, at('securityContext'), true));
  if (spec.os && typeof spec.os === 'object') {
    // Upstream names the os field itself, not its name, in the Unsupported value.
    if (!spec.os.name) errs.push(fieldErrors.required(at('os.name'), 'cannot be empty'));
    else errs.push(...optionalEnum(spec.os.name, at('os'), operatingSystems));
  }
  (Array.isArray(spec.tolerations) ? spec.tolerations : []).forEach((tol: Obj, i: number) => {
    const ti = fieldPath(at('tolerations'), i);
    // An empty operator is Equal, an empty effect every effect.
    if (tol?.operator) errs.push(...optionalEnum(tol.operator, `${ti}.operator`, tolerationOperators));
    if (tol?.effect) errs.push(...optionalEnum(tol.effect, `${ti}.effect`, taintEffects));
  });
  (Array.isArray(spec.topologySpreadConstraints) ? spec.topologySpreadConstraints : []).forEach((c: Obj, i: number) => {
    const ci = fieldPath(at('topologySpreadConstraints'), i);
    // No default: an empty action is refused as it is.
    errs.push(...optionalEnum(c?.whenUnsatisfiable ?? '', `${ci}.whenUnsatisfiable`, scheduleActions));
    errs.push(...optionalEnum(c?.nodeAffinityPolicy, `${ci}.nodeAffinityPolicy`, nodeInclusionPolicies));
    errs.push(...optionalEnum(c?.nodeTaintsPolicy, `${ci}.nodeTaintsPolicy`, nodeInclusionPolicies));
  });
  return errs;
}
