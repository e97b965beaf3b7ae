// The default RBAC policy at start: created when missing and reconciled on
// every start (missing rules, subjects, labels and annotations added back;
// user additions kept; objects annotated autoupdate "false" left alone), as
// upstream's rbac/bootstrap-roles post-start hook. Several servers on one
// store may do it at once: a write that loses a race is computed again.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { ApiCallError } from '../client/types.js';
import { resources, resourceType, type ResourceHandle } from '../client/resources.js';
import { defaultClusterRoleBindings, defaultClusterRoles, defaultRoleBindings, defaultRoles } from '../auth/authz/bootstrappolicy.js';
import { reconcileBinding, reconcileRole, type Reconciled } from '../auth/authz/reconcile.js';

type Log = (msg: string, extra?: object) => void;

const attempts = 5;

/** A lost race: created, changed or deleted by someone else meanwhile. */
function raced(e: unknown): boolean {
  return e instanceof ApiCallError && (e.code === 409 || e.code === 404);
}

async function reconcileOne(client: ApiClient, type: ResourceType, expected: ApiObject, reconcile: (existing: ApiObject | undefined, expected: ApiObject) => Reconciled, log: Log): Promise<void> {
  const namespace: string | undefined = expected.metadata?.namespace;
  const name: string = expected.metadata!.name;
  for (let attempt = 1; ; attempt++) {
    try {
      const existing = await client.get(type, namespace, name);
      const result = reconcile(existing, expected);
      switch (result.operation) {
        case 'none': return;
        case 'create': await client.create(type, namespace, result.object); break;
        case 'update': await client.update(type, namespace, result.object); break;
        case 'recreate':
          await client.delete(type, namespace, name);
          await client.create(type, namespace, result.object);
          break;
      }
      log(`${result.operation === 'update' ? 'reconciled' : 'created'} default ${type.kind} ${namespace ? `${namespace}/` : ''}${name}`);
      return;
    } catch (e) {
      if (!raced(e) || attempt >= attempts) throw e;
    }
  }
}

/** Creates or reconciles every default role and binding; roles before the bindings that grant them. */
export async function reconcileDefaultPolicy(client: ApiClient, log: Log): Promise<void> {
  const type = (handle: ResourceHandle): ResourceType => resourceType(client, handle);
  const steps: [ResourceType, ApiObject[], typeof reconcileRole][] = [
    [type(resources.clusterRoles), defaultClusterRoles(), reconcileRole],
    [type(resources.clusterRoleBindings), defaultClusterRoleBindings(), reconcileBinding],
    [type(resources.roles), defaultRoles(), reconcileRole],
    [type(resources.roleBindings), defaultRoleBindings(), reconcileBinding],
  ];
  for (const [t, objects, reconcile] of steps) {
    for (const expected of objects) await reconcileOne(client, t, expected, reconcile, log);
  }
}
