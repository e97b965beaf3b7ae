// The group rbac.authorization, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { roles } from './role.js';
import { clusterRoles } from './clusterrole.js';
import { roleBindings } from './rolebinding.js';
import { clusterRoleBindings } from './clusterrolebinding.js';

export const rbacV1Kinds: KindDefinition[] = [roles, clusterRoles, roleBindings, clusterRoleBindings];
export { roles, clusterRoles, roleBindings, clusterRoleBindings };
