// NamespaceLifecycle: no writes into a namespace that does not exist, no new
// content in one being terminated, and the reserved namespaces cannot be
// deleted. As upstream, it runs in the mutating phase, so these answers come
// before the object is validated.

import { ApiError, errors } from '../../machinery/errors.js';
import { reservedNamespaces } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { qualifiedOf } from '../errors.js';

export type NamespaceGetter = (name: string) => Promise<KubeObject | undefined>;

const namespacesResource = { group: '', resource: 'namespaces' };

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  constructor(private readonly getNamespace: NamespaceGetter) {}

  async mutate(r: AdmissionRequest): Promise<void> {
    if (r.kind.group === '' && r.kind.kind === 'Namespace') {
      if (r.operation === 'DELETE' && reservedNamespaces.includes(r.name)) {
        throw errors.forbidden(namespacesResource, r.name, 'this namespace may not be deleted');
      }
      return; // every other operation on namespaces themselves is allowed
    }
    // Cluster-scoped objects, and deletions anywhere, pass.
    if (!r.namespace || r.operation === 'DELETE') return;
    const ns = await this.getNamespace(r.namespace);
    if (!ns) throw errors.notFound(namespacesResource, r.namespace);
    if (r.operation !== 'CREATE' || ns.status?.phase !== 'Terminating') return;
    const err = errors.forbidden(qualifiedOf(r), r.name,
      `unable to create new content in namespace ${r.namespace} because it is being terminated`);
    throw new ApiError(err.code, err.reason, err.message, {
      ...err.details,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${r.namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }
}
