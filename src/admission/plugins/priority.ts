// Priority: a new pod's `priorityClassName` becomes its `spec.priority` and
// `spec.preemptionPolicy`; a pod naming no class takes the global default
// class (the lowest, should several be marked), or priority 0 and
// PreemptLowerPriority when there is none. A class that does not exist, or a
// priority or policy the pod sets that differs from its class's, refuses the
// pod (403). On update the priority the pod had is kept. A PriorityClass
// marked `globalDefault` is refused while another one is. As upstream since
// 1.17, the system classes may be used in any namespace (a quota limits them
// where an administrator wants). Classes come from the informer's cache.

import type { KubeObject } from '../../api/kind.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { MaybePromise } from '../../machinery/maybe-async.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { podOf } from './podutil.js';

type Obj = Record<string, any>;

export class Priority implements AdmissionPlugin {
  readonly name = 'Priority';

  constructor(private readonly classes: Lister, private readonly liveGet: (name: string) => Promise<KubeObject | undefined>) {}

  mutate(r: AdmissionRequest): MaybePromise<void> {
    const pod = podOf(r);
    if (!pod) return;
    const spec = (pod.spec ??= {}) as Obj;
    if (r.operation === 'UPDATE') {
      // The priority was set on create; an update that drops it keeps it.
      const old = (r.oldObject?.spec ?? {}) as Obj;
      if (spec.priority == null && old.priority != null) spec.priority = old.priority;
      if (spec.preemptionPolicy == null && old.preemptionPolicy != null) spec.preemptionPolicy = old.preemptionPolicy;
      return;
    }
    if (r.operation !== 'CREATE') return;
    if (!spec.priorityClassName) return this.admitNew(r, spec, undefined);
    // The cache may not hold a class created a moment ago.
    const pc = this.classes.get(undefined, spec.priorityClassName);
    return pc ? this.admitNew(r, spec, pc) : this.liveGet(spec.priorityClassName).then((live) => this.admitNew(r, spec, live));
  }

  /** Sets a new pod's priority and policy from its class (`pc`: the class it names, undefined when it names none or that one is missing). */
  private admitNew(r: AdmissionRequest, spec: Obj, pc: KubeObject | undefined): void {
    let priority = 0;
    let policy: string | undefined;
    if (!spec.priorityClassName) {
      const chosen = this.defaultClass();
      if (chosen) {
        spec.priorityClassName = chosen.metadata?.name;
        priority = chosen.value ?? 0;
        policy = chosen.preemptionPolicy;
      } else {
        policy = 'PreemptLowerPriority';
      }
    } else {
      if (!pc) throw forbiddenRequest(r, `no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = pc.value ?? 0;
      policy = pc.preemptionPolicy;
    }
    if (spec.priority != null && spec.priority !== priority) {
      throw forbiddenRequest(r, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
    }
    spec.priority = priority;
    if (policy !== undefined) {
      if (spec.preemptionPolicy != null && spec.preemptionPolicy !== policy) {
        throw forbiddenRequest(r, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
      }
      spec.preemptionPolicy = policy;
    }
  }

  validate(r: AdmissionRequest): void {
    if (r.subresource || r.kind.group !== vocabulary.schedulingGroup || r.kind.kind !== 'PriorityClass' || !r.object) return;
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    if (r.object.globalDefault !== true) return;
    const current = this.defaultClass();
    if (current && (r.operation === 'CREATE' || current.metadata?.name !== r.object.metadata?.name)) {
      throw forbiddenRequest(r, `PriorityClass ${current.metadata?.name} is already marked as default. Only one default can exist`);
    }
  }

  /** The global default class; the lowest when a race left several. */
  private defaultClass(): KubeObject | undefined {
    let chosen: KubeObject | undefined;
    for (const pc of this.classes.list()) {
      if (pc.globalDefault === true && (!chosen || (chosen.value ?? 0) > (pc.value ?? 0))) chosen = pc;
    }
    return chosen;
  }
}
