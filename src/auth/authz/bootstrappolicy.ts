// The default policy: the roles and bindings every server creates at start
// and reconciles on every start, as upstream's bootstrap policy (with our
// group and signer names). Objects carry the bootstrapping label and the
// autoupdate annotation; a user who sets that annotation to "false" keeps
// their edits.

import { productGroup, vocabulary } from '../../machinery/vocabulary.js';
import { anonymousUser, systemGroups } from '../../machinery/user.js';
import { allServiceAccountsGroup } from '../../machinery/serviceaccount.js';

type Obj = Record<string, any>;

const read = ['get', 'list', 'watch'];
const write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const readWrite = [...read, ...write];

const core = '';
const apps = 'apps';
const autoscaling = 'autoscaling';
const batch = 'batch';
const extensions = 'extensions';
const policy = 'policy';
const networking = productGroup('networking');
const discovery = productGroup('discovery');
const authn = vocabulary.authenticationGroup;
const authz = vocabulary.authorizationGroup;
const rbacGroup = vocabulary.rbacGroup;
const certificates = vocabulary.certificatesGroup;

/** The group of the monitoring agents that may read /metrics and the health checks. */
export const monitoringGroup = 'system:monitoring';

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): Obj =>
  (resourceNames ? { verbs, apiGroups, resources, resourceNames } : { verbs, apiGroups, resources });
const urls = (verbs: string[], nonResourceURLs: string[]): Obj => ({ verbs, nonResourceURLs });

const aggregateTo = (role: string) => `${vocabulary.rbacAggregateToLabelPrefix}${role}`;
const aggregated = (role: string): Obj => ({ clusterRoleSelectors: [{ matchLabels: { [aggregateTo(role)]: 'true' } }] });

/** Labels and annotations every default object carries. */
function defaultMetadata(name: string, labels: Record<string, string> = {}, namespace?: string): Obj {
  return {
    name, ...(namespace ? { namespace } : {}),
    labels: { ...labels, [vocabulary.bootstrappingLabel]: 'rbac-defaults' },
    annotations: { [vocabulary.rbacAutoupdateAnnotation]: 'true' },
  };
}

function clusterRole(name: string, rules: Obj[], extra: { labels?: Record<string, string>; aggregationRule?: Obj } = {}): Obj {
  const role: Obj = { apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRole', metadata: defaultMetadata(name, extra.labels) };
  if (extra.aggregationRule) role.aggregationRule = extra.aggregationRule;
  else role.rules = rules;
  return role;
}

/**
 * What every node agent may do, as upstream's node rules: the Node
 * authorizer grants them (narrowed by its graph and by NodeRestriction), and
 * the `system:node` ClusterRole holds them, unbound, as upstream.
 */
export function nodeRules(): Obj[] {
  const storage = vocabulary.storageGroup;
  return [
    // Checking API access; these creates change nothing.
    rule(['create'], [authn], ['tokenreviews']),
    rule(['create'], [authz], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    // Services for the environment variables of containers.
    rule(read, [core], ['services']),
    // Registering its Node and reporting its status.
    rule(['create', 'get', 'list', 'watch'], [core], ['nodes']),
    rule(['update', 'patch'], [core], ['nodes/status']),
    rule(['update', 'patch'], [core], ['nodes']),
    rule(['create', 'update', 'patch'], [core], ['events']),
    rule(read, [core], ['pods']),
    // Mirror pods, the status of its pods and their evictions.
    rule(['create', 'delete'], [core], ['pods']),
    rule(['update', 'patch'], [core], ['pods/status']),
    rule(['create'], [core], ['pods/eviction']),
    // What its pods mount and read (the graph narrows these to its own pods').
    rule(read, [core], ['configmaps', 'secrets']),
    rule(['get'], [core], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [core], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [vocabulary.coordinationGroup], ['leases']),
    rule(['get'], [storage], ['volumeattachments']),
    rule(['get', 'update', 'patch'], [core], ['persistentvolumeclaims/status']),
    rule(['create'], [core], ['serviceaccounts/token']),
    rule(['get', 'watch', 'list'], [storage], ['csidrivers']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [storage], ['csinodes']),
    rule(read, [vocabulary.nodeGroup], ['runtimeclasses']),
  ];
}

const approver = (signer: string) => `system:${certificates}:${signer.slice(signer.indexOf('/') + 1)}-approver`;

export function defaultClusterRoles(): Obj[] {
  return [
    // A root role which may do anything.
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    // Enough to tell whether the server is ready and to discover what it serves.
    clusterRole('system:discovery', [urls(['get'], ['/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'])]),
    // What anyone may read, signed in or not.
    clusterRole('system:public-info-viewer', [urls(['get'], ['/livez', '/readyz', '/healthz', '/version', '/version/'])]),
    // A user may learn what it is and what it may do.
    clusterRole('system:basic-user', [
      rule(['create'], [authz], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], [authn], ['selfsubjectreviews']),
    ]),
    clusterRole('system:monitoring', [urls(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])]),
    // The user-facing roles gather the rules of the ClusterRoles labelled for them.
    clusterRole('admin', [], { aggregationRule: aggregated('admin') }),
    clusterRole('edit', [], { labels: { [aggregateTo('admin')]: 'true' }, aggregationRule: aggregated('edit') }),
    clusterRole('view', [], { labels: { [aggregateTo('edit')]: 'true' }, aggregationRule: aggregated('view') }),
    clusterRole('system:aggregate-to-admin', [
      rule(['create'], [authz], ['localsubjectaccessreviews']),
      rule(readWrite, [rbacGroup], ['roles', 'rolebindings']),
    ], { labels: { [aggregateTo('admin')]: 'true' } }),
    clusterRole('system:aggregate-to-edit', [
      // Reading these is as good as writing elsewhere (tokens, exec), so view does not have it.
      rule(read, [core], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [core], ['serviceaccounts']),
      rule(write, [core], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [core], ['pods/eviction']),
      rule(write, [core], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets']),
      rule(['create'], [core], ['serviceaccounts/token']),
      rule(write, [apps], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
      rule(write, [autoscaling], ['horizontalpodautoscalers']),
      rule(write, [batch], ['jobs', 'cronjobs']),
      rule(write, [extensions], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(write, [policy], ['poddisruptionbudgets']),
      rule(write, [networking], ['networkpolicies', 'ingresses']),
    ], { labels: { [aggregateTo('edit')]: 'true' } }),
    clusterRole('system:aggregate-to-view', [
      rule(read, [core], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
      rule(read, [core], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
      // Reading namespaces at the namespace scope reads *this* namespace: a hint of where a user has access.
      rule(read, [core], ['namespaces']),
      rule(read, [discovery], ['endpointslices']),
      rule(read, [apps], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
      rule(read, [autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(read, [batch], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
      rule(read, [extensions], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(read, [policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(read, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
    ], { labels: { [aggregateTo('view')]: 'true' } }),
    // Authentication and authorization delegated to this server (token and access reviews do not change anything).
    clusterRole('system:auth-delegator', [
      rule(['create'], [authn], ['tokenreviews']),
      rule(['create'], [authz], ['subjectaccessreviews']),
    ]),
    clusterRole('system:service-account-issuer-discovery', [
      urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/']),
    ]),
    clusterRole('system:node', nodeRules()),
    // Bootstrap tokens: a node agent asks for its client certificate, and approvers of its requests.
    clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests'])]),
    clusterRole(`system:${certificates}:certificatesigningrequests:nodeclient`, [rule(['create'], [certificates], ['certificatesigningrequests/nodeclient'])]),
    clusterRole(`system:${certificates}:certificatesigningrequests:selfnodeclient`, [rule(['create'], [certificates], ['certificatesigningrequests/selfnodeclient'])]),
    ...[vocabulary.apiserverClientSigner, vocabulary.apiserverClientNodeagentSigner, vocabulary.nodeagentServingSigner, vocabulary.legacyUnknownSigner]
      .map((signer) => clusterRole(approver(signer), [rule(['approve'], [certificates], ['signers'], [signer])])),
  ];
}

const subject = (kind: 'User' | 'Group', name: string): Obj => ({ kind, apiGroup: rbacGroup, name });

function clusterRoleBinding(role: string, groups: string[]): Obj {
  return {
    apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRoleBinding', metadata: defaultMetadata(role),
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => subject('Group', g)),
  };
}

export function defaultClusterRoleBindings(): Obj[] {
  return [
    clusterRoleBinding('cluster-admin', [systemGroups.masters]),
    clusterRoleBinding('system:monitoring', [monitoringGroup]),
    clusterRoleBinding('system:discovery', [systemGroups.authenticated]),
    clusterRoleBinding('system:basic-user', [systemGroups.authenticated]),
    // Anonymous requests reach only what this binding grants: health and version.
    clusterRoleBinding('system:public-info-viewer', [systemGroups.authenticated, systemGroups.unauthenticated]),
    clusterRoleBinding('system:service-account-issuer-discovery', [allServiceAccountsGroup]),
  ];
}

// Namespaced defaults: the bootstrap-token controllers' rights in the system
// and public namespaces, bound to their service accounts.

function role(namespace: string, name: string, rules: Obj[]): Obj {
  return { apiVersion: `${rbacGroup}/v1`, kind: 'Role', metadata: defaultMetadata(name, {}, namespace), rules };
}

function roleBinding(namespace: string, roleName: string, account: string | Obj): Obj {
  return {
    apiVersion: `${rbacGroup}/v1`, kind: 'RoleBinding', metadata: defaultMetadata(roleName, {}, namespace),
    roleRef: { apiGroup: rbacGroup, kind: 'Role', name: roleName },
    subjects: [typeof account === 'string' ? { kind: 'ServiceAccount', name: account, namespace: vocabulary.systemNamespace } : account],
  };
}

/** Anonymous users may read the signed cluster-info ConfigMap (what joining clients check), and nothing else of the namespace. */
const clusterInfoReader = 'system:bootstrap-signer-clusterinfo';

const eventsRule = rule(['create', 'update', 'patch'], [core, vocabulary.eventsGroup], ['events']);
const controllerRole = (name: string) => `system:controller:${name}`;

export function defaultRoles(): Obj[] {
  return [
    role(vocabulary.systemNamespace, controllerRole('bootstrap-signer'), [rule(read, [core], ['secrets'])]),
    role(vocabulary.systemNamespace, controllerRole('token-cleaner'), [rule(['delete', ...read], [core], ['secrets']), eventsRule]),
    role(vocabulary.publicNamespace, controllerRole('bootstrap-signer'), [
      rule(read, [core], ['configmaps']),
      rule(['update'], [core], ['configmaps'], ['cluster-info']),
      eventsRule,
    ]),
    role(vocabulary.publicNamespace, clusterInfoReader, [rule(['get'], [core], ['configmaps'], ['cluster-info'])]),
  ];
}

export function defaultRoleBindings(): Obj[] {
  return [
    roleBinding(vocabulary.systemNamespace, controllerRole('bootstrap-signer'), 'bootstrap-signer'),
    roleBinding(vocabulary.systemNamespace, controllerRole('token-cleaner'), 'token-cleaner'),
    roleBinding(vocabulary.publicNamespace, controllerRole('bootstrap-signer'), 'bootstrap-signer'),
    roleBinding(vocabulary.publicNamespace, clusterInfoReader, subject('User', anonymousUser.username)),
  ];
}
