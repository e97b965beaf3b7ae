// The live look-aside of plugins that read a namespace's objects from a
// lister (LimitRanger's LimitRanges, ResourceQuota's quotas): when the
// lister holds none, the object may have been created a moment ago and not
// reached the informer yet, so the namespace is listed live once and the
// answer trusted for a while (upstream's liveLookupCache and liveTTL).
// Simultaneous misses in one namespace share one list (upstream's
// singleflight); a failed list is not remembered.

import type { KubeObject } from '../api/kind.js';
import { BoundedMap } from '../machinery/boundedmap.js';

export interface LiveLookupOptions {
  /** Lists the namespace's objects (a consistent read). */
  list: (namespace: string) => Promise<KubeObject[]>;
  /** How long a live answer is trusted (upstream: 30 s). */
  ttlMs: number;
  /** How many namespaces' answers are kept (oldest forgotten first). */
  size: number;
  now?: () => number;
}

export class LiveLookup {
  private readonly answers: BoundedMap<string, { expires: number; items: KubeObject[] }>;
  private readonly inFlight = new Map<string, Promise<KubeObject[]>>();
  private readonly now: () => number;

  constructor(private readonly options: LiveLookupOptions) {
    this.now = options.now ?? Date.now;
    this.answers = new BoundedMap(options.size);
  }

  /** The namespace's last live answer while it is trusted, else undefined. */
  fresh(namespace: string): readonly KubeObject[] | undefined {
    const answer = this.answers.get(namespace);
    return answer && answer.expires >= this.now() ? answer.items : undefined;
  }

  /** The trusted answer, or a new live list (one at a time per namespace). */
  async items(namespace: string): Promise<readonly KubeObject[]> {
    const known = this.fresh(namespace);
    if (known) return known;
    let pending = this.inFlight.get(namespace);
    if (!pending) {
      pending = this.options.list(namespace).then((items) => {
        this.remember(namespace, items);
        return items;
      }).finally(() => this.inFlight.delete(namespace));
      this.inFlight.set(namespace, pending);
    }
    return pending;
  }

  /** Drops the namespace's answer (an object in it is known gone). */
  forget(namespace: string): void {
    this.answers.delete(namespace);
  }

  private remember(namespace: string, items: KubeObject[]): void {
    this.answers.set(namespace, { expires: this.now() + this.options.ttlMs, items });
  }
}
