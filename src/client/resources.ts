// Typed handles of the resources the in-process controllers and indexes use:
// one declaration of each (group, plural), resolved against what the server
// serves with an error naming what is missing, instead of a string look-up
// and a `!` at every use.

import { vocabulary } from '../machinery/vocabulary.js';
import type { ApiClient, ResourceType } from './types.js';

export interface ResourceHandle {
  readonly group: string;
  readonly resource: string;
  /** A version to prefer; the first served one otherwise. */
  readonly version?: string;
}

export const resources = {
  namespaces: { group: '', resource: 'namespaces' },
  serviceAccounts: { group: '', resource: 'serviceaccounts' },
  secrets: { group: '', resource: 'secrets' },
  configMaps: { group: '', resource: 'configmaps' },
  pods: { group: '', resource: 'pods' },
  nodes: { group: '', resource: 'nodes' },
  replicationControllers: { group: '', resource: 'replicationcontrollers' },
  jobs: { group: 'batch', resource: 'jobs', version: 'v1' },
  podDisruptionBudgets: { group: 'policy', resource: 'poddisruptionbudgets', version: 'v1' },
  clusterRoles: { group: vocabulary.rbacGroup, resource: 'clusterroles', version: 'v1' },
  roles: { group: vocabulary.rbacGroup, resource: 'roles', version: 'v1' },
  clusterRoleBindings: { group: vocabulary.rbacGroup, resource: 'clusterrolebindings', version: 'v1' },
  roleBindings: { group: vocabulary.rbacGroup, resource: 'rolebindings', version: 'v1' },
  leases: { group: vocabulary.coordinationGroup, resource: 'leases', version: 'v1' },
  certificateSigningRequests: { group: vocabulary.certificatesGroup, resource: 'certificatesigningrequests', version: 'v1' },
  mutatingWebhookConfigurations: { group: vocabulary.admissionRegistrationGroup, resource: 'mutatingwebhookconfigurations', version: 'v1' },
  validatingWebhookConfigurations: { group: vocabulary.admissionRegistrationGroup, resource: 'validatingwebhookconfigurations', version: 'v1' },
  validatingAdmissionPolicies: { group: vocabulary.admissionRegistrationGroup, resource: 'validatingadmissionpolicies', version: 'v1' },
  validatingAdmissionPolicyBindings: { group: vocabulary.admissionRegistrationGroup, resource: 'validatingadmissionpolicybindings', version: 'v1' },
  customResourceDefinitions: { group: vocabulary.apiextensionsGroup, resource: 'customresourcedefinitions', version: 'v1' },
  services: { group: '', resource: 'services' },
  endpoints: { group: '', resource: 'endpoints' },
  endpointSlices: { group: vocabulary.endpointDiscoveryGroup, resource: 'endpointslices', version: 'v1' },
  priorityClasses: { group: vocabulary.schedulingGroup, resource: 'priorityclasses', version: 'v1' },
  apiServices: { group: vocabulary.apiregistrationGroup, resource: 'apiservices', version: 'v1' },
  persistentVolumes: { group: '', resource: 'persistentvolumes' },
  volumeAttachments: { group: vocabulary.storageGroup, resource: 'volumeattachments', version: 'v1' },
  resourceQuotas: { group: '', resource: 'resourcequotas' },
  limitRanges: { group: '', resource: 'limitranges' },
  persistentVolumeClaims: { group: '', resource: 'persistentvolumeclaims' },
  runtimeClasses: { group: vocabulary.nodeGroup, resource: 'runtimeclasses', version: 'v1' },
  storageClasses: { group: vocabulary.storageGroup, resource: 'storageclasses', version: 'v1' },
  ingressClasses: { group: vocabulary.networkingGroup, resource: 'ingressclasses', version: 'v1' },
} as const satisfies Record<string, ResourceHandle>;

/** The served type of `handle`; throws when the server serves none (a catalog without it is a bug, not a state to run in). */
export function resourceType(client: ApiClient, handle: ResourceHandle): ResourceType {
  const served = client.resources().filter((r) => r.group === handle.group && r.resource === handle.resource);
  const found = served.find((r) => r.version === handle.version) ?? served[0];
  if (!found) throw new Error(`the server serves no ${handle.group ? `${handle.resource}.${handle.group}` : handle.resource}`);
  return found;
}
