// The catalog: every kind the server serves, listed explicitly per group.
import type { KindDefinition } from './kind.js';
import { coreV1Kinds } from './core/v1/index.js';
import { coordinationV1Kinds } from './coordination/v1/index.js';

export const builtinKinds: KindDefinition[] = [...coreV1Kinds, ...coordinationV1Kinds];
