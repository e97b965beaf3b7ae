// LimitPodHardAntiAffinityTopology: a pod's required anti-affinity may only
// spread over single nodes (the hostname label), so that one pod cannot keep
// a whole zone from others. Validating phase, creates and updates of pods.

import { errors } from '../../machinery/errors.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { podWritten } from './pods.js';

export class LimitPodHardAntiAffinityTopology implements AdmissionPlugin {
  readonly name = 'LimitPodHardAntiAffinityTopology';

  validate(r: AdmissionRequest): void {
    const pod = podWritten(r);
    const terms: unknown = pod?.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (!Array.isArray(terms)) return;
    for (const term of terms) {
      const key = (term as { topologyKey?: unknown } | null)?.topologyKey ?? '';
      if (key === vocabulary.hostnameLabel) continue;
      throw errors.forbidden({ group: '', resource: 'pods' }, pod?.metadata?.name ?? r.name,
        `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${String(key)} but only key ${vocabulary.hostnameLabel} is allowed`);
    }
  }
}
