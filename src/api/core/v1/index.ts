// The core group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { namespaces } from './namespace.js';
import { serviceAccounts } from './serviceaccount.js';
import { secrets } from './secret.js';
import { configMaps } from './configmap.js';
import { events } from './event.js';
import { pods } from './pod.js';

export const coreV1Kinds: KindDefinition[] = [namespaces, serviceAccounts, secrets, configMaps, events, pods];
export { namespaces, serviceAccounts, secrets, configMaps, events, pods };
