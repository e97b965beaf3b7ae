// DefaultTolerationSeconds: a pod that does not tolerate the not-ready and
// the unreachable NoExecute taints gets tolerations of both for the flags'
// seconds (300 each), so that its node's trouble evicts it after five minutes,
// not at once. A toleration with an empty key or an empty effect counts.

import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import { podOf } from './podutil.js';

type Obj = Record<string, any>;

export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';

  constructor(private readonly notReadySeconds: number, private readonly unreachableSeconds: number) {}

  mutate(r: AdmissionRequest): void {
    const pod = podOf(r);
    if (!pod || (r.operation !== 'CREATE' && r.operation !== 'UPDATE')) return;
    const spec = (pod.spec ??= {}) as Obj;
    const tolerations: Obj[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
    // One pass over the pod's tolerations for both taints.
    let notReady = false;
    let unreachable = false;
    for (const t of tolerations) {
      if (t?.effect && t.effect !== 'NoExecute') continue;
      if (!t?.key) notReady = unreachable = true;
      else if (t.key === vocabulary.notReadyTaint) notReady = true;
      else if (t.key === vocabulary.unreachableTaint) unreachable = true;
    }
    const added: Obj[] = [];
    if (!notReady) added.push({ key: vocabulary.notReadyTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.notReadySeconds });
    if (!unreachable) added.push({ key: vocabulary.unreachableTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.unreachableSeconds });
    if (added.length) spec.tolerations = [...tolerations, ...added];
  }
}
