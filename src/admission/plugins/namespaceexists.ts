// NamespaceExists: a write into a namespace that does not exist is refused
// with 404 for the namespace (validating phase, every operation), as upstream.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import type { NamespaceGetter } from './namespacelifecycle.js';

const namespacesResource = { group: '', resource: 'namespaces' };

export class NamespaceExists implements AdmissionPlugin {
  readonly name = 'NamespaceExists';
  constructor(private readonly getNamespace: NamespaceGetter) {}

  async validate(r: AdmissionRequest): Promise<void> {
    if (!r.namespace || (r.kind.group === '' && r.kind.kind === 'Namespace')) return;
    if (!(await this.getNamespace(r.namespace, false))) throw errors.notFound(namespacesResource, r.namespace);
  }
}
