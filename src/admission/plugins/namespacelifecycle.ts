// NamespaceLifecycle: no new content in a namespace that is missing or being
// terminated, and the reserved namespaces cannot be deleted.

import { ApiError, errors } from '../../machinery/errors.js';
import { reservedNamespaces } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';

export type NamespaceGetter = (name: string) => Promise<KubeObject | undefined>;

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  constructor(private readonly getNamespace: NamespaceGetter) {}

  async validate(r: AdmissionRequest): Promise<void> {
    const isNamespace = r.kind.group === '' && r.kind.plural === 'namespaces';
    if (isNamespace) {
      if (r.operation === 'DELETE' && reservedNamespaces.includes(r.name)) {
        throw errors.forbidden({ group: '', resource: 'namespaces' }, r.name, 'this namespace may not be deleted');
      }
      return;
    }
    if (r.operation !== 'CREATE' || r.kind.scope !== 'Namespaced' || !r.namespace) return;
    const ns = await this.getNamespace(r.namespace);
    if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, r.namespace);
    if (ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp) {
      const message = `unable to create new content in namespace ${r.namespace} because it is being terminated`;
      const err = errors.forbidden({ group: r.kind.group, resource: r.kind.plural }, r.name, message);
      throw new ApiError(err.code, err.reason, err.message, {
        ...err.details,
        causes: [{ reason: 'NamespaceTerminating', message, field: 'metadata.namespace' }],
      });
    }
  }
}
