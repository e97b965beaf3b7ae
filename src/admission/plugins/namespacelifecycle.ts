// NamespaceLifecycle: no writes into a namespace that does not exist, no new
// content in one being terminated, and the reserved namespaces cannot be
// deleted. As upstream, it runs in the mutating phase, so these answers come
// before the object is validated. As upstream's, it reads the namespace from
// an informer-fed lister (answering without a promise), asks the server's
// cache and then the store when the lister does not hold it (a namespace
// created a moment ago), and reads it live for a while after admitting its
// deletion, when the caches may still show it active.

import { ApiError, errors } from '../../machinery/errors.js';
import { reservedNamespaces } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { qualifiedOf } from '../errors.js';

/** The namespace from the cache (`live` false: the store only on a miss) or by a consistent read (`live` true). */
export type NamespaceGetter = (name: string, live: boolean) => Promise<KubeObject | undefined>;

const namespacesResource = { group: '', resource: 'namespaces' };
/** How long after admitting a namespace's deletion writes into it read the namespace live (upstream's forceLiveLookupTTL). */
const liveAfterDeleteMs = 30_000;

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  /** Namespaces whose deletion this plugin admitted, and until when they are read live. */
  private readonly deletedLately = new Map<string, number>();

  /** `namespaces`: the informer-fed lister read first; without one every lookup goes through `getNamespace`. */
  constructor(private readonly getNamespace: NamespaceGetter, private readonly namespaces?: Lister) {}

  mutate(r: AdmissionRequest): MaybePromise<void> {
    if (r.kind.group === '' && r.kind.kind === 'Namespace') {
      if (r.operation === 'DELETE' && reservedNamespaces.includes(r.name)) {
        throw errors.forbidden(namespacesResource, r.name, 'this namespace may not be deleted');
      }
      if (r.operation === 'DELETE') this.rememberDeleted(r.name);
      return; // every other operation on namespaces themselves is allowed
    }
    // Cluster-scoped objects, and deletions anywhere, pass.
    if (!r.namespace || r.operation === 'DELETE') return;
    const name = r.namespace;
    const known = this.namespaces?.get(undefined, name) ?? this.getNamespace(name, false);
    const current = andThen(known, (ns) => (ns && ns.status?.phase !== 'Terminating' && this.deletedRecently(name) ? this.getNamespace(name, true) : ns));
    return andThen(current, (ns) => this.admit(r, ns));
  }

  private admit(r: AdmissionRequest, ns: KubeObject | undefined): void {
    if (!ns) throw errors.notFound(namespacesResource, r.namespace!);
    if (r.operation !== 'CREATE' || ns.status?.phase !== 'Terminating') return;
    const err = errors.forbidden(qualifiedOf(r), r.name,
      `unable to create new content in namespace ${r.namespace} because it is being terminated`);
    throw new ApiError(err.code, err.reason, err.message, {
      ...err.details,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${r.namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }

  private rememberDeleted(name: string): void {
    const now = Date.now();
    for (const [known, until] of this.deletedLately) if (until <= now) this.deletedLately.delete(known);
    this.deletedLately.set(name, now + liveAfterDeleteMs);
  }

  private deletedRecently(name: string): boolean {
    const until = this.deletedLately.get(name);
    return until !== undefined && until > Date.now();
  }
}
