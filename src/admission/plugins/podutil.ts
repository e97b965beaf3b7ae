// What several pod plugins ask of a request: is it a pod's own write (not a
// sub-resource's), and is the pod a node agent's mirror of a static manifest.

import type { KubeObject } from '../../api/kind.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { AdmissionRequest } from '../types.js';

type Obj = Record<string, any>;

/** The pod of a create or update of a pod itself (sub-resources pass unless named in `subresources`). */
export function podOf(r: AdmissionRequest, subresources: readonly string[] = []): KubeObject | undefined {
  if (r.kind.group !== '' || r.kind.kind !== 'Pod' || !r.object) return undefined;
  if (r.subresource && !subresources.includes(r.subresource)) return undefined;
  return r.object;
}

export function isMirrorPod(pod: KubeObject): boolean {
  const annotations = pod.metadata?.annotations as Obj | undefined;
  return !!annotations && Object.prototype.hasOwnProperty.call(annotations, vocabulary.mirrorPodAnnotation);
}

/** The pod's containers then its init containers. */
export function podContainers(pod: KubeObject): { list: 'initContainers' | 'containers'; container: Obj }[] {
  const out: { list: 'initContainers' | 'containers'; container: Obj }[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    const items = pod.spec?.[list];
    if (Array.isArray(items)) for (const container of items) if (container && typeof container === 'object') out.push({ list, container });
  }
  return out;
}

/** Resolves after `ms` (a plugin's retry pause, as upstream's). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
