// ClusterRole: rules across the cluster (and on non-resource paths), or an
// aggregation of other ClusterRoles chosen by label, whose rules the
// aggregation controller fills in.

import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { fieldErrors, type FieldError } from '../../../machinery/errors.js';
import { isPathSegmentName, fieldPath } from '../../../machinery/validation.js';
import { validateLabelSelector, type LabelSelectorObject } from '../../../machinery/selectors.js';
import { LabelSelector } from '../../meta/v1.js';
import { kindSchema } from '../../core/v1/common.js';
import { rbac, roleColumns, rulesField, validateRules } from './common.js';

const AggregationRule = define(rbac('AggregationRule'), t.object({
  clusterRoleSelectors: p(1, t.array(t.ref(LabelSelector), 'ClusterRoles whose labels match any of these selectors lend their rules to this one.', { listType: 'atomic' })),
}, 'How a ClusterRole gathers its rules from other ClusterRoles.'));

const schema = kindSchema('A cluster-wide set of permissions, granted by ClusterRoleBindings everywhere or by RoleBindings in one namespace.', {
  rules: rulesField('The permissions of this role; filled in by the controller when aggregationRule is set.'),
  aggregationRule: p(3, t.ref(AggregationRule, 'When set, the rules are the union of those of the selected ClusterRoles.')),
});

function validateClusterRole(role: KubeObject): FieldError[] {
  const errs = validateRules(role.rules, false);
  const rule = role.aggregationRule;
  if (rule !== undefined && rule !== null) {
    const selectors: LabelSelectorObject[] = rule.clusterRoleSelectors ?? [];
    if (selectors.length === 0) errs.push(fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, fieldPath('aggregationRule.clusterRoleSelectors', i))));
  }
  return errs;
}

export const clusterRoles = defineKind({
  group: vocabulary.rbacGroup, version: 'v1', kind: 'ClusterRole', plural: 'clusterroles',
  scope: 'Cluster',
  protobuf: true,
  nameCheck: isPathSegmentName,
  schema: define(rbac('ClusterRole'), schema),
  strategy: { validate: validateClusterRole, validateUpdate: validateClusterRole },
  printerColumns: roleColumns,
});
