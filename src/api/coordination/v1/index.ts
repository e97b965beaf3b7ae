// The coordination group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { leases } from './lease.js';

export const coordinationV1Kinds: KindDefinition[] = [leases];
export { leases };
