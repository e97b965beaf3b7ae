// NamespaceLifecycle: no writes into a namespace that does not exist, no new
// content in one being terminated, and the reserved namespaces cannot be
// deleted. As upstream, it runs in the mutating phase, so these answers come
// before the object is validated. As upstream's, it reads the namespace from
// the server's cache without waiting for the cache to catch up (the store is
// asked when the cache does not hold it), and reads it live for a while after
// admitting its deletion, when the cache may still show it active.

import { ApiError, errors } from '../../machinery/errors.js';
import { reservedNamespaces } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
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

  constructor(private readonly getNamespace: NamespaceGetter) {}

  async mutate(r: AdmissionRequest): Promise<void> {
    if (r.kind.group === '' && r.kind.kind === 'Namespace') {
      if (r.operation === 'DELETE' && reservedNamespaces.includes(r.name)) {
        throw errors.forbidden(namespacesResource, r.name, 'this namespace may not be deleted');
      }
      if (r.operation === 'DELETE') this.rememberDeleted(r.name);
      return; // every other operation on namespaces themselves is allowed
    }
    // Cluster-scoped objects, and deletions anywhere, pass.
    if (!r.namespace || r.operation === 'DELETE') return;
    let ns = await this.getNamespace(r.namespace, false);
    if (ns && ns.status?.phase !== 'Terminating' && this.deletedRecently(r.namespace)) ns = await this.getNamespace(r.namespace, true);
    if (!ns) throw errors.notFound(namespacesResource, r.namespace);
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
