// SecurityContextDeny (the spec keeps it; upstream removed it in v1.30 in
// favour of PodSecurity): a pod may not set the pod-level supplemental
// groups, SELinux options, user or fsGroup, nor a container's SELinux
// options or user. Validating phase, creates and updates of pods; the first
// field found is named in a 403.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { containersOf, podWritten } from './pods.js';

const podFields = [
  ['supplementalGroups', 'SupplementalGroups'], ['seLinuxOptions', 'SELinuxOptions'], ['runAsUser', 'RunAsUser'], ['fsGroup', 'FSGroup'],
] as const;
const containerFields = [['seLinuxOptions', 'SELinuxOptions'], ['runAsUser', 'RunAsUser']] as const;

const isSet = (v: unknown) => v !== undefined && v !== null;

export class SecurityContextDeny implements AdmissionPlugin {
  readonly name = 'SecurityContextDeny';

  validate(r: AdmissionRequest): void {
    const pod = podWritten(r);
    if (!pod) return;
    const refuse = (why: string) => errors.forbidden({ group: '', resource: 'pods' }, pod.metadata?.name ?? r.name, why);
    const podContext = pod.spec?.securityContext;
    if (podContext && typeof podContext === 'object') {
      for (const [field, shown] of podFields) if (isSet(podContext[field])) throw refuse(`pod.Spec.SecurityContext.${shown} is forbidden`);
    }
    for (const [container] of containersOf(pod.spec)) {
      const context = container.securityContext;
      if (!context || typeof context !== 'object') continue;
      for (const [field, shown] of containerFields) if (isSet(context[field])) throw refuse(`SecurityContext.${shown} is forbidden`);
    }
  }
}
