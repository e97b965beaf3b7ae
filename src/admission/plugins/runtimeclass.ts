// RuntimeClass: a new pod naming a RuntimeClass takes the class's pod
// overhead into `spec.overhead` (a pod that set a different overhead is
// refused) and its scheduling: the class's node selector merged into the
// pod's (a key with another value is refused) and its tolerations merged with
// the pod's. A class that does not exist refuses the pod; a pod that sets an
// overhead without a class that defines one is refused too. All 403 with
// upstream's words. The class comes from the informer's cache, live on a miss.

import type { KubeObject } from '../../api/kind.js';
import { parseQuantity } from '../../machinery/quantity.js';
import type { MaybePromise } from '../../machinery/maybe-async.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { podOf } from './podutil.js';
import { mergeTolerations } from './tolerations.js';

type Obj = Record<string, any>;
type LiveGet = (name: string) => Promise<KubeObject | undefined>;

/** Whether two resource lists hold the same quantities (`1000m` equals `1`), as upstream's semantic equality. */
function sameResources(a: Obj | undefined, b: Obj | undefined): boolean {
  const left = Object.keys(a ?? {});
  const right = Object.keys(b ?? {});
  if (left.length !== right.length) return false;
  return left.every((key) => {
    if (!Object.prototype.hasOwnProperty.call(b ?? {}, key)) return false;
    try {
      return parseQuantity(String(a![key])).nanos === parseQuantity(String(b![key])).nanos;
    } catch {
      return a![key] === b![key];
    }
  });
}

const overheadMismatch = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

export class RuntimeClass implements AdmissionPlugin {
  readonly name = 'RuntimeClass';

  constructor(private readonly classes: Lister, private readonly liveGet: LiveGet) {}

  mutate(r: AdmissionRequest): MaybePromise<void> {
    const pod = podOf(r);
    // Most pods name no class: answered at once.
    if (!pod || r.operation !== 'CREATE' || !pod.spec?.runtimeClassName) return;
    return this.classOf(r, pod).then((rc) => this.apply(r, pod, rc));
  }

  private apply(r: AdmissionRequest, pod: KubeObject, rc: KubeObject | undefined): void {
    if (!rc) return;
    const spec = (pod.spec ??= {}) as Obj;
    const overhead = rc.overhead?.podFixed as Obj | undefined;
    if (overhead) {
      if (spec.overhead && Object.keys(spec.overhead).length > 0 && !sameResources(overhead, spec.overhead)) throw forbiddenRequest(r, overheadMismatch);
      spec.overhead = { ...overhead };
    }
    const scheduling = rc.scheduling as Obj | undefined;
    if (!scheduling) return;
    const classSelector = (scheduling.nodeSelector ?? {}) as Obj;
    if (!spec.nodeSelector) {
      if (scheduling.nodeSelector) spec.nodeSelector = { ...classSelector };
    } else {
      for (const [key, value] of Object.entries(classSelector)) {
        const podValue = spec.nodeSelector[key];
        if (podValue !== undefined && podValue !== value) {
          throw forbiddenRequest(r, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`);
        }
        spec.nodeSelector[key] = value;
      }
    }
    const merged = mergeTolerations(Array.isArray(spec.tolerations) ? spec.tolerations : [], Array.isArray(scheduling.tolerations) ? scheduling.tolerations : []);
    if (merged.length) spec.tolerations = merged;
  }

  validate(r: AdmissionRequest): MaybePromise<void> {
    const pod = podOf(r);
    if (!pod || r.operation !== 'CREATE') return;
    if (!pod.spec?.runtimeClassName) {
      if (pod.spec?.overhead != null) throw forbiddenRequest(r, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      return;
    }
    return this.classOf(r, pod).then((rc) => this.check(r, pod, rc));
  }

  private check(r: AdmissionRequest, pod: KubeObject, rc: KubeObject | undefined): void {
    const overhead = rc?.overhead?.podFixed as Obj | undefined;
    if (overhead) {
      if (!sameResources(overhead, pod.spec?.overhead)) throw forbiddenRequest(r, overheadMismatch);
    } else if (pod.spec?.overhead != null) {
      throw forbiddenRequest(r, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }

  private async classOf(r: AdmissionRequest, pod: KubeObject): Promise<KubeObject | undefined> {
    const name = pod.spec?.runtimeClassName;
    if (typeof name !== 'string' || name === '') return undefined;
    // The cache may not hold a class created a moment ago.
    const rc = this.classes.get(undefined, name) ?? await this.liveGet(name);
    if (!rc) throw forbiddenRequest(r, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  }
}
