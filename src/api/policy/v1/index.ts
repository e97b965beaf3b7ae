// The policy group, version v1: every kind it stores.
import type { KindDefinition } from '../../kind.js';
import { podDisruptionBudgets } from './poddisruptionbudget.js';

export const policyV1Kinds: KindDefinition[] = [podDisruptionBudgets];
export { podDisruptionBudgets };
