// The catalog: every kind the server serves, listed explicitly per group.
import type { KindDefinition } from './kind.js';
import { coreV1Kinds } from './core/v1/index.js';
import { coordinationV1Kinds } from './coordination/v1/index.js';
import { admissionRegistrationV1Kinds } from './admissionregistration/v1/index.js';
import { apiextensionsV1Kinds } from './apiextensions/v1/index.js';
import { authenticationV1Kinds } from './authentication/v1/index.js';
import { rbacV1Kinds } from './rbac/v1/index.js';
import { authorizationV1Kinds } from './authorization/v1/index.js';
import { certificatesV1Kinds } from './certificates/v1/index.js';
import { policyV1Kinds } from './policy/v1/index.js';
import { namedGroupKinds } from './namedgroups.js';
import { appsV1Kinds } from './apps/v1/index.js';
import { batchV1Kinds } from './batch/v1/index.js';
import { autoscalingKinds } from './autoscaling/index.js';
import { apiregistrationV1Kinds } from './apiregistration/v1/apiservice.js';

/** Kinds whose objects are stored: each gets a store and REST objects of its own. */
export const builtinKinds: KindDefinition[] = [...coreV1Kinds, ...coordinationV1Kinds, ...admissionRegistrationV1Kinds, ...rbacV1Kinds, ...certificatesV1Kinds, ...policyV1Kinds, ...apiextensionsV1Kinds,
  ...appsV1Kinds, ...batchV1Kinds, ...autoscalingKinds, ...namedGroupKinds, ...apiregistrationV1Kinds];

/** Kinds that are only ever answered (reviews, token requests): REST objects of the registry serve them. */
export const builtinAnsweredKinds: KindDefinition[] = [...authenticationV1Kinds, ...authorizationV1Kinds];
