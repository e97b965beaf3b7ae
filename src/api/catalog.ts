// The catalog: every kind the server serves, listed explicitly per group.
import type { KindDefinition } from './kind.js';
import { coreV1Kinds } from './core/v1/index.js';
import { admissionRegistrationV1Kinds } from './admissionregistration/v1/index.js';

export const builtinKinds: KindDefinition[] = [...coreV1Kinds, ...admissionRegistrationV1Kinds];
