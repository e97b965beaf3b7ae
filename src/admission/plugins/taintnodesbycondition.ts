// TaintNodesByCondition: a new node starts with the not-ready NoSchedule
// taint, so nothing is scheduled there before its agent reports it ready
// (the node lifecycle controller then takes the taint off).

import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { vocabulary } from '../../machinery/vocabulary.js';

type Obj = Record<string, any>;

export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = 'TaintNodesByCondition';

  mutate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' || r.subresource || r.kind.group !== '' || r.kind.kind !== 'Node' || !r.object) return;
    const spec = (r.object.spec ??= {}) as Obj;
    const taints: Obj[] = Array.isArray(spec.taints) ? spec.taints : [];
    if (taints.some((t) => t?.key === vocabulary.notReadyTaint && t?.effect === 'NoSchedule')) return;
    spec.taints = [...taints, { key: vocabulary.notReadyTaint, effect: 'NoSchedule' }];
  }
}
