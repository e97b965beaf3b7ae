// Role: rules within one namespace.

import { define } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema } from '../../core/v1/common.js';
import { rbac, roleColumns, rulesField, validateRules } from './common.js';

const schema = kindSchema('A namespaced set of permissions, granted by RoleBindings in its namespace.', {
  rules: rulesField('The permissions of this role.'),
});

export const roles = defineKind({
  group: vocabulary.rbacGroup, version: 'v1', kind: 'Role', plural: 'roles',
  scope: 'Namespaced',
  protobuf: true,
  nameCheck: isPathSegmentName,
  schema: define(rbac('Role'), schema),
  strategy: {
    validate: (role) => validateRules(role.rules, true),
    validateUpdate: (role) => validateRules(role.rules, true),
  },
  printerColumns: roleColumns,
});
