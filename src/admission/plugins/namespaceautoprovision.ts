// NamespaceAutoProvision: creating an object in a namespace that does not
// exist creates the namespace first (mutating phase, creates only). A dry
// run creates nothing, as upstream.

import { isApiError } from '../../machinery/errors.js';
import type { KubeObject } from '../../api/kind.js';
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import type { NamespaceGetter } from './namespacelifecycle.js';

/** Creates a namespace with this name (rejects with an ApiError on failure). */
export type NamespaceCreator = (name: string) => Promise<KubeObject>;

export class NamespaceAutoProvision implements AdmissionPlugin {
  readonly name = 'NamespaceAutoProvision';
  constructor(private readonly getNamespace: NamespaceGetter, private readonly createNamespace: NamespaceCreator) {}

  async mutate(r: AdmissionRequest): Promise<void> {
    if (r.operation !== 'CREATE' || !r.namespace || r.dryRun) return;
    if (r.kind.group === '' && r.kind.kind === 'Namespace') return;
    if (await this.getNamespace(r.namespace, false)) return;
    try {
      await this.createNamespace(r.namespace);
    } catch (e) {
      if (isApiError(e) && e.reason === 'AlreadyExists') return;
      throw forbiddenRequest(r, (e as Error).message);
    }
  }
}
