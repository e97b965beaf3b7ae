// The certificates group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { certificateSigningRequests } from './certificatesigningrequest.js';

export const certificatesV1Kinds: KindDefinition[] = [certificateSigningRequests];
export { certificateSigningRequests };
