// RoleBinding: grants a Role, or a ClusterRole's rules, within its namespace.

import { define } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema } from '../../core/v1/common.js';
import { bindingColumns, defaultBinding, rbac, roleRefField, subjectsField, validateBinding, validateRoleRefUnchanged } from './common.js';

const schema = kindSchema('Grants the permissions of a role to users, groups or service accounts within one namespace.', {
  subjects: subjectsField,
  roleRef: roleRefField,
}, ['roleRef']);

export const roleBindings = defineKind({
  group: vocabulary.rbacGroup, version: 'v1', kind: 'RoleBinding', plural: 'rolebindings',
  scope: 'Namespaced',
  protobuf: true,
  nameCheck: isPathSegmentName,
  schema: define(rbac('RoleBinding'), schema),
  strategy: {
    defaults: defaultBinding,
    validate: (b) => validateBinding(b, true),
    validateUpdate: (b, old) => [...validateBinding(b, true), ...validateRoleRefUnchanged(b, old)],
  },
  printerColumns: bindingColumns,
});
