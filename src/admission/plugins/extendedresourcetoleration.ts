// ExtendedResourceToleration: nodes with extended resources (GPUs and such)
// are tainted with the resource's name so that only pods asking for it land
// there; a pod requesting one gets the matching NoSchedule toleration.
// Mutating phase, creates and updates of pods.

import { product } from '../../machinery/vocabulary.js';
import { isQualifiedName } from '../../machinery/validation.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { addOrUpdateToleration, podWritten } from './pods.js';

/** Resource names in these domains (and unprefixed ones) are the system's own, not extended. */
const nativeDomains = [`${product.domain}/`, 'kubernetes.io/'];

/** Upstream's IsExtendedResourceName: prefixed outside the native domains, not a quota `requests.` name. */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || nativeDomains.some((d) => name.includes(d))) return false;
  if (name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

export class ExtendedResourceToleration implements AdmissionPlugin {
  readonly name = 'ExtendedResourceToleration';

  mutate(r: AdmissionRequest): void {
    const pod = podWritten(r);
    if (!pod?.spec) return;
    const names = new Set<string>();
    for (const list of ['containers', 'initContainers']) {
      const containers: unknown = pod.spec[list];
      if (!Array.isArray(containers)) continue;
      for (const c of containers) {
        const requests: unknown = c?.resources?.requests;
        if (!requests || typeof requests !== 'object') continue;
        for (const name of Object.keys(requests)) if (isExtendedResourceName(name)) names.add(name);
      }
    }
    // Sorted, as upstream, so the tolerations come in a stable order.
    for (const name of [...names].sort()) addOrUpdateToleration(pod.spec, { key: name, operator: 'Exists', effect: 'NoSchedule' });
  }
}
