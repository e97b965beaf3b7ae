// Who may do what: the authorizer union of --authorization-mode, in order,
// behind the privileged group (system:masters), as upstream builds it. RBAC
// reads roles and bindings from informers of the server's own, which run on
// every server (not only on the one leading the controllers).

import type { ServerOptions } from './options.js';
import type { Registry } from '../registry/registry.js';
import { InProcessClient } from './inprocess.js';
import { InformerFactory, type InformerSubscription } from '../client/informer.js';
import type { ApiObject, ResourceType } from '../client/types.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupsAuthorizer, UnionAuthorizer, type Authorizer } from '../auth/authz/authorizer.js';
import { authorizationOptionsProblem, type AuthorizationMode } from '../auth/authz/modes.js';
import { RbacIndex } from '../auth/authz/rbacindex.js';
import { RbacAuthorizer } from '../auth/authz/rbac.js';

/** A bad authorization option or file given to startServer (the CLI reports it in one line). */
export class AuthorizationConfigError extends Error {
  override name = 'AuthorizationConfigError';
}

/** What is read from the options' files before anything else starts, so a bad option or file stops the start early. */
export interface AuthorizationFiles {
  modes: AuthorizationMode[];
}

export async function readAuthorizationFiles(options: ServerOptions): Promise<AuthorizationFiles> {
  const problem = authorizationOptionsProblem({
    modes: options.authorizationMode, policyFile: options.authorizationPolicyFile, webhookConfigFile: options.authorizationWebhookConfigFile,
  });
  if (problem) throw new AuthorizationConfigError(problem);
  return { modes: options.authorizationMode as AuthorizationMode[] };
}

export interface AuthorizationParts {
  /** Asked by the filters and the access reviews. */
  authorizer: UnionAuthorizer;
  /** The RBAC module, when a mode: escalation checks read the rules users hold from it. */
  rbac?: RbacAuthorizer;
  /** Resolves once the modules that read objects have them all in memory. */
  synced: Promise<void>;
  stop(): void;
}

/** Informers of the RBAC objects feeding the index. */
function feedRbacIndex(registry: Registry, index: RbacIndex): { informers: InformerFactory; subscriptions: InformerSubscription[] } {
  const client = new InProcessClient(registry, `${product.name}-apiserver`);
  const informers = new InformerFactory(client);
  const type = (resource: string): ResourceType => {
    const found = client.resources().find((r) => r.group === vocabulary.rbacGroup && r.version === 'v1' && r.resource === resource);
    if (!found) throw new Error(`the catalog declares no ${resource}.${vocabulary.rbacGroup}`);
    return found;
  };
  const feed = (put: (o: ApiObject) => void, remove: (o: ApiObject) => void) => ({ onAdd: put, onUpdate: (_old: ApiObject, o: ApiObject) => put(o), onDelete: remove });
  const subscriptions = [
    informers.subscribe(type('clusterroles'), feed((o) => index.putClusterRole(o), (o) => index.removeClusterRole(o))),
    informers.subscribe(type('roles'), feed((o) => index.putRole(o), (o) => index.removeRole(o))),
    informers.subscribe(type('clusterrolebindings'), feed((o) => index.putBinding('ClusterRoleBinding', o), (o) => index.removeBinding('ClusterRoleBinding', o))),
    informers.subscribe(type('rolebindings'), feed((o) => index.putBinding('RoleBinding', o), (o) => index.removeBinding('RoleBinding', o))),
  ];
  return { informers, subscriptions };
}

export function buildAuthorization(files: AuthorizationFiles, registry: Registry): AuthorizationParts {
  const modules: Authorizer[] = [new PrivilegedGroupsAuthorizer()];
  const stops: (() => void)[] = [];
  const syncs: Promise<void>[] = [];
  let rbac: RbacAuthorizer | undefined;
  for (const mode of files.modes) {
    switch (mode) {
      case 'AlwaysAllow': modules.push(new AlwaysAllowAuthorizer()); break;
      case 'AlwaysDeny': modules.push(new AlwaysDenyAuthorizer()); break;
      case 'RBAC': {
        const index = new RbacIndex();
        const { informers, subscriptions } = feedRbacIndex(registry, index);
        syncs.push(...subscriptions.map((s) => s.start()));
        stops.push(() => informers.stopAll());
        modules.push((rbac = new RbacAuthorizer(index)));
        break;
      }
      default: throw new AuthorizationConfigError(`authorization-mode ${mode} is not built yet`);
    }
  }
  return {
    authorizer: new UnionAuthorizer(modules), rbac,
    synced: Promise.all(syncs).then(() => undefined),
    stop: () => { for (const stop of stops) stop(); },
  };
}
