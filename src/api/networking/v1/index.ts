// The networking group, version v1: every kind it stores.
import type { KindDefinition } from '../../kind.js';
import { ingresses } from './ingress.js';
import { ingressClasses } from './ingressclass.js';
import { networkPolicies } from './networkpolicy.js';

export const networkingV1Kinds: KindDefinition[] = [ingresses, ingressClasses, networkPolicies];
export { ingresses, ingressClasses, networkPolicies };
