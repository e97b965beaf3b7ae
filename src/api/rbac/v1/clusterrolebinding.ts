// ClusterRoleBinding: grants a ClusterRole across the cluster.

import { define } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema } from '../../core/v1/common.js';
import { bindingColumns, defaultBinding, rbac, roleRefField, subjectsField, validateBinding, validateRoleRefUnchanged } from './common.js';

const schema = kindSchema('Grants the permissions of a ClusterRole to users, groups or service accounts across the cluster.', {
  subjects: subjectsField,
  roleRef: roleRefField,
}, ['roleRef']);

export const clusterRoleBindings = defineKind({
  group: vocabulary.rbacGroup, version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings',
  scope: 'Cluster',
  protobuf: true,
  nameCheck: isPathSegmentName,
  schema: define(rbac('ClusterRoleBinding'), schema),
  strategy: {
    defaults: defaultBinding,
    validate: (b) => validateBinding(b, false),
    validateUpdate: (b, old) => [...validateBinding(b, false), ...validateRoleRefUnchanged(b, old)],
  },
  printerColumns: bindingColumns,
});
