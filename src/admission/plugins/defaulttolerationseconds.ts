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
    const tolerates = (key: string) => tolerations.some((t) => (!t?.key || t.key === key) && (!t?.effect || t.effect === 'NoExecute'));
    const added: Obj[] = [];
    if (!tolerates(vocabulary.notReadyTaint)) {
      added.push({ key: vocabulary.notReadyTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.notReadySeconds });
    }
    if (!tolerates(vocabulary.unreachableTaint)) {
      added.push({ key: vocabulary.unreachableTaint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.unreachableSeconds });
    }
    if (added.length) spec.tolerations = [...tolerations, ...added];
  }
}
