// componentstatuses: upstream probes its scheduler, controller manager and
// etcd members over HTTP. Here nothing is dialed: the store answers its own
// check, the controllers run in this process, and no scheduler exists.

import { errors } from '../machinery/errors.js';
import type { KubeObject } from '../api/kind.js';
import { componentStatuses } from '../api/core/v1/componentstatus.js';
import type { Backend } from '../storage/backend.js';
import type { RestObject } from './rest.js';

async function probe(backend: Backend): Promise<KubeObject[]> {
  const item = (name: string, healthy: boolean, message: string, error?: string): KubeObject => ({
    apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name },
    conditions: [{ type: 'Healthy', status: healthy ? 'True' : 'False', ...(message ? { message } : {}), ...(error ? { error } : {}) }],
  });
  const store = await backend.check().then(() => item('etcd-0', true, 'ok'), (e: Error) => item('etcd-0', false, '', e.message));
  return [
    item('controller-manager', true, 'ok'),
    item('scheduler', false, '', 'no scheduler runs with this server'),
    store,
  ];
}

export function componentStatusRest(backend: Backend): RestObject {
  return {
    describe: { group: '', version: 'v1', resource: 'componentstatuses', namespaced: false, kind: componentStatuses, parentKind: componentStatuses, deleteAnswersObject: false, stored: false },
    get: async (path) => {
      const found = (await probe(backend)).find((c) => c.metadata?.name === path.name);
      if (!found) throw errors.notFound({ group: '', resource: 'componentstatuses' }, path.name!);
      return found;
    },
    list: async () => ({ apiVersion: 'v1', kind: 'ComponentStatusList', metadata: {}, items: (await probe(backend)).map(({ apiVersion: _a, kind: _k, ...rest }) => rest) }),
  };
}
