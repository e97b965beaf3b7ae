// Who may do what: the authorizer union of --authorization-mode, in order,
// behind the privileged group (system:masters), as upstream builds it. RBAC
// reads roles and bindings from informers of the server's own, which run on
// every server (not only on the one leading the controllers).

import { readFile } from 'node:fs/promises';
import type { ServerOptions } from '../server/options.js';
import type { Registry } from '../registry/registry.js';
import type { InformerFactory, InformerSubscription } from '../client/informer.js';
import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { resources, resourceType, type ResourceHandle } from '../client/resources.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupsAuthorizer, UnionAuthorizer, type Authorizer } from '../auth/authz/authorizer.js';
import { authorizationOptionsProblem, type AuthorizationMode } from '../auth/authz/modes.js';
import { RbacIndex } from '../auth/authz/rbacindex.js';
import { RbacAuthorizer } from '../auth/authz/rbac.js';
import { NodeAuthorizer } from '../auth/authz/node.js';
import { NodeGraph } from '../auth/authz/nodegraph.js';
import { AbacAuthorizer, parsePolicyFile, PolicyFileError, type AbacPolicy } from '../auth/authz/abac.js';
import { WebhookAuthorizer, type WebhookAuthorizerOptions } from '../auth/authz/webhook.js';
import { readKubeconfigEndpoint } from '../client/kubeconfig.js';
import { EscalationCheck, type RbacWrite } from '../auth/authz/escalation.js';
import type { AdmissionPlugin } from '../admission/types.js';
import { accessReviewRests } from '../registry/authorization.js';

/** A bad authorization option or file given to startServer (the CLI reports it in one line). */
export class AuthorizationConfigError extends Error {
  override name = 'AuthorizationConfigError';
}

/** What is read from the options' files before anything else starts, so a bad option or file stops the start early. */
export interface AuthorizationFiles {
  modes: AuthorizationMode[];
  /** ABAC's policies, when a mode. */
  abac?: AbacPolicy[];
  /** The webhook and how to ask it, when a mode. */
  webhook?: WebhookAuthorizerOptions;
}

async function readPolicyFile(path: string): Promise<AbacPolicy[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthorizationConfigError(`error reading policy file ${path}: ${(e as Error).message}`);
  }
  try {
    return parsePolicyFile(path, text);
  } catch (e) {
    if (e instanceof PolicyFileError) throw new AuthorizationConfigError(e.message);
    throw e;
  }
}

export async function readAuthorizationFiles(options: ServerOptions): Promise<AuthorizationFiles> {
  const problem = authorizationOptionsProblem({
    modes: options.authorizationMode, policyFile: options.authorizationPolicyFile, webhookConfigFile: options.authorizationWebhookConfigFile,
  });
  if (problem) throw new AuthorizationConfigError(problem);
  const files: AuthorizationFiles = { modes: options.authorizationMode as AuthorizationMode[] };
  if (options.authorizationPolicyFile) files.abac = await readPolicyFile(options.authorizationPolicyFile);
  if (options.authorizationWebhookConfigFile) {
    let endpoint;
    try {
      endpoint = await readKubeconfigEndpoint(options.authorizationWebhookConfigFile);
    } catch (e) {
      throw new AuthorizationConfigError(`--authorization-webhook-config-file ${options.authorizationWebhookConfigFile}: ${(e as Error).message}`);
    }
    files.webhook = {
      endpoint, version: options.authorizationWebhookVersion,
      authorizedTtlMs: options.authorizationWebhookCacheAuthorizedTtlMs,
      unauthorizedTtlMs: options.authorizationWebhookCacheUnauthorizedTtlMs,
      // A request never waits on the webhook longer than it may wait at all.
      timeoutMs: Math.min(options.authorizationWebhookTimeoutMs, options.requestTimeoutMs),
    };
  }
  return files;
}

export interface AuthorizationParts {
  /** Asked by the filters and the access reviews. */
  authorizer: UnionAuthorizer;
  /** The admission plugin that refuses role and binding writes granting what the writer does not hold. */
  escalation: AdmissionPlugin;
  /** Serves the access reviews and subscribes the RBAC index to the shared informers; resolves once they hold every object. */
  start(registry: Registry, informers: InformerFactory, client: ApiClient): Promise<void>;
  stop(): void;
}

/** The RBAC objects feed the index from the process's shared informers. */
function feedRbacIndex(informers: InformerFactory, client: ApiClient, index: RbacIndex): InformerSubscription[] {
  const type = (handle: ResourceHandle): ResourceType => resourceType(client, handle);
  const feed = (put: (o: ApiObject) => void, remove: (o: ApiObject) => void) => ({ onAdd: put, onUpdate: (_old: ApiObject, o: ApiObject) => put(o), onDelete: remove });
  return [
    informers.subscribe(type(resources.clusterRoles), feed((o) => index.putClusterRole(o), (o) => index.removeClusterRole(o))),
    informers.subscribe(type(resources.roles), feed((o) => index.putRole(o), (o) => index.removeRole(o))),
    informers.subscribe(type(resources.clusterRoleBindings), feed((o) => index.putBinding('ClusterRoleBinding', o), (o) => index.removeBinding('ClusterRoleBinding', o))),
    informers.subscribe(type(resources.roleBindings), feed((o) => index.putBinding('RoleBinding', o), (o) => index.removeBinding('RoleBinding', o))),
  ];
}

/** Pods, volumes and attachments feed the Node authorizer's graph (only when the mode is on: every pod is held). */
function feedNodeGraph(informers: InformerFactory, client: ApiClient, graph: NodeGraph): InformerSubscription[] {
  const name = (o: ApiObject) => String(o.metadata?.name ?? '');
  return [
    informers.subscribe(resourceType(client, resources.pods), {
      onAdd: (o) => graph.setPod(o), onUpdate: (_old, o) => graph.setPod(o), onDelete: (o) => graph.removePod(String(o.metadata?.namespace ?? ''), name(o)),
    }),
    informers.subscribe(resourceType(client, resources.persistentVolumes), {
      onAdd: (o) => graph.setVolume(o), onUpdate: (_old, o) => graph.setVolume(o), onDelete: (o) => graph.removeVolume(name(o)),
    }),
    informers.subscribe(resourceType(client, resources.volumeAttachments), {
      onAdd: (o) => graph.setAttachment(o), onUpdate: (_old, o) => graph.setAttachment(o), onDelete: (o) => graph.removeAttachment(name(o)),
    }),
  ];
}

const rbacKinds = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** Escalation prevention on writes of RBAC objects, as upstream's RBAC storage does it before the write. */
function escalationPlugin(check: EscalationCheck): AdmissionPlugin {
  return {
    name: 'RBACEscalation',
    async validate(request) {
      const { kind } = request;
      if (kind.group !== vocabulary.rbacGroup || !rbacKinds.has(kind.kind) || request.subresource !== undefined) return;
      if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
      await check.check({
        kind: kind.kind as RbacWrite['kind'], operation: request.operation, resource: kind.plural, namespace: request.namespace,
        object: request.object!, oldObject: request.oldObject, user: request.user,
      });
    },
  };
}

/**
 * The modules in order behind the privileged group. RBAC's index is built
 * whatever the modes: escalation checks read the rules users hold from it,
 * as upstream's RBAC storage does under every mode.
 */
export function buildAuthorization(files: AuthorizationFiles, log?: (message: string, extra: object) => void): AuthorizationParts {
  const index = new RbacIndex();
  const rbac = new RbacAuthorizer(index);
  const modules: Authorizer[] = [new PrivilegedGroupsAuthorizer()];
  const nodeGraph = files.modes.includes('Node') ? new NodeGraph() : undefined;
  for (const mode of files.modes) {
    switch (mode) {
      case 'AlwaysAllow': modules.push(new AlwaysAllowAuthorizer()); break;
      case 'AlwaysDeny': modules.push(new AlwaysDenyAuthorizer()); break;
      case 'RBAC': modules.push(rbac); break;
      case 'Node': modules.push(new NodeAuthorizer(nodeGraph!)); break;
      case 'ABAC': modules.push(new AbacAuthorizer(files.abac!)); break;
      case 'Webhook': modules.push(new WebhookAuthorizer({ ...files.webhook!, log })); break;
    }
  }
  const authorizer = new UnionAuthorizer(modules);
  let subscriptions: InformerSubscription[] = [];
  return {
    authorizer,
    escalation: escalationPlugin(new EscalationCheck(authorizer, rbac, index)),
    async start(registry, informers, client) {
      for (const rest of accessReviewRests(authorizer)) registry.addRest(rest);
      subscriptions = feedRbacIndex(informers, client, index);
      if (nodeGraph) subscriptions.push(...feedNodeGraph(informers, client, nodeGraph));
      await Promise.all(subscriptions.map((s) => s.start()));
    },
    stop: () => { for (const s of subscriptions) s.stop(); },
  };
}
