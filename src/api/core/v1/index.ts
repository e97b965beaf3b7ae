// The core group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { namespaces } from './namespace.js';
import { serviceAccounts } from './serviceaccount.js';
import { secrets } from './secret.js';
import { configMaps } from './configmap.js';
import { events } from './event.js';
import { pods } from './pod.js';
import { nodes } from './node.js';
import { endpoints } from './endpoints.js';
import { services } from './service.js';
import { persistentVolumes, persistentVolumeClaims } from './storage.js';
import { limitRanges, resourceQuotas } from './quota.js';
import { replicationControllers, podTemplates } from './replicationcontroller.js';

export const coreV1Kinds: KindDefinition[] = [namespaces, serviceAccounts, secrets, configMaps, events, pods, nodes, services, endpoints, replicationControllers, podTemplates,
  persistentVolumes, persistentVolumeClaims, limitRanges, resourceQuotas];
export { namespaces, serviceAccounts, secrets, configMaps, events, pods, nodes, services, endpoints, replicationControllers, podTemplates,
  persistentVolumes, persistentVolumeClaims, limitRanges, resourceQuotas };
