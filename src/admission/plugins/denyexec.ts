// DenyEscalatingExec and DenyExecOnPrivileged (deprecated upstream, as the
// specification says): an exec or attach into a pod with elevated host
// access is refused, 403, with upstream's messages. DenyExecOnPrivileged
// checks privileged containers only; DenyEscalatingExec also host network,
// host PID and host IPC. Validating phase, CONNECT of pods/exec and pods/attach.

import { ApiError, errors } from '../../machinery/errors.js';
import type { KubeObject } from '../../api/kind.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';

/** A pod by namespace and name from the server's store, or undefined. */
export type PodGetter = (namespace: string, name: string) => Promise<KubeObject | undefined>;

const podsResource = { group: '', resource: 'pods' };

function privileged(pod: KubeObject): boolean {
  return ['containers', 'initContainers'].some((list) => ((pod.spec?.[list] ?? []) as KubeObject[]).some((c) => c.securityContext?.privileged === true));
}

export class DenyExec implements AdmissionPlugin {
  /** `escalating`: DenyEscalatingExec (host namespaces too); otherwise DenyExecOnPrivileged. */
  constructor(readonly name: 'DenyEscalatingExec' | 'DenyExecOnPrivileged', private readonly getPod: PodGetter) {}

  async validate(r: AdmissionRequest): Promise<void> {
    if (r.operation !== 'CONNECT' || r.kind.group !== '' || r.kind.plural !== 'pods') return;
    if (r.subresource !== 'exec' && r.subresource !== 'attach') return;
    const refuse = (why: string) => errors.forbidden(podsResource, r.name, why);
    let pod: KubeObject | undefined;
    try {
      pod = await this.getPod(r.namespace ?? '', r.name);
    } catch (e) {
      throw refuse(e instanceof ApiError ? e.message : String(e));
    }
    if (!pod) throw refuse(`pods "${r.name}" not found`);
    const escalating = this.name === 'DenyEscalatingExec';
    if (escalating && pod.spec?.hostNetwork) throw refuse('cannot exec into or attach to a container using host network');
    if (escalating && pod.spec?.hostPID) throw refuse('cannot exec into or attach to a container using host pid');
    if (escalating && pod.spec?.hostIPC) throw refuse('cannot exec into or attach to a container using host ipc');
    if (privileged(pod)) throw refuse('cannot exec into or attach to a privileged container');
  }
}
