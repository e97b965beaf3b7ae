// The named groups of networking, endpoint discovery, storage, scheduling and
// node, listed together so the catalog names them in one line.
import type { KindDefinition } from './kind.js';
import { networkingV1Kinds } from './networking/v1/index.js';
import { discoveryV1Kinds } from './discovery/v1/endpointslice.js';
import { storageV1Kinds } from './storage/v1/index.js';
import { schedulingV1Kinds } from './scheduling/v1/priorityclass.js';
import { nodeV1Kinds } from './node/v1/runtimeclass.js';

export const namedGroupKinds: KindDefinition[] = [...networkingV1Kinds, ...discoveryV1Kinds, ...storageV1Kinds, ...schedulingV1Kinds, ...nodeV1Kinds];
