// The system priority classes (system-node-critical, system-cluster-critical),
// created at start when missing, as upstream's
// scheduling/bootstrap-system-priority-classes post-start hook. One that
// exists is left as it is: its value cannot change anyway.

import { ApiCallError, type ApiClient } from '../client/types.js';
import { resources, resourceType } from '../client/resources.js';
import { systemPriorityClasses } from '../api/scheduling/v1/priorityclass.js';

export async function ensureSystemPriorityClasses(client: ApiClient): Promise<void> {
  const type = resourceType(client, resources.priorityClasses);
  for (const c of systemPriorityClasses) {
    if (await client.get(type, undefined, c.name)) continue;
    try {
      await client.create(type, undefined, {
        apiVersion: `${type.group}/${type.version}`, kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description,
      });
    } catch (e) {
      if (!(e instanceof ApiCallError && e.code === 409)) throw e;
    }
  }
}
