// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding: CEL checks
// the server runs in its validating phase on the requests a bound policy
// matches (admission/policy/). v1 is stored; v1beta1 carries the same
// fields and, as upstream's newer beta APIs, is off unless --runtime-config
// turns it on.

import { defineKind, statusSubresource, type KubeObject, type PrinterColumn } from '../../kind.js';
import { ageColumn, nameColumn } from '../../core/v1/common.js';
import { group } from './webhooks.js';
import { policySchemasV1, policySchemasV1beta1 } from './policyschemas.js';
import { loadCel } from '../../validation/index.js';
import { bindingValidation, defaultBinding, defaultPolicy, policyValidation } from './policyvalidation.js';

const sameShape = { toStored: (o: KubeObject) => o, fromStored: (o: KubeObject) => o };

const policyColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'Validations', type: 'integer', description: 'Number of validations of the policy.', value: (p) => (Array.isArray(p.spec?.validations) ? p.spec.validations.length : 0) },
  { name: 'ParamKind', type: 'string', description: 'The kind of the policy\'s parameters.',
    value: (p) => (p.spec?.paramKind ? `${p.spec.paramKind.apiVersion ?? ''}/${p.spec.paramKind.kind ?? ''}` : '<unset>') },
  ageColumn,
];

const bindingColumns: PrinterColumn[] = [
  nameColumn,
  { name: 'PolicyName', type: 'string', description: 'The policy bound.', value: (b) => b.spec?.policyName },
  { name: 'ParamRef', type: 'string', description: 'The parameter resources of the binding.', value: (b) => {
    const ref = b.spec?.paramRef;
    if (!ref) return '<unset>';
    const name = ref.name ?? (ref.selector ? '*' : '');
    return ref.namespace ? `${ref.namespace}/${name}` : name;
  } },
  ageColumn,
];

export const validatingAdmissionPolicies = defineKind({
  group, version: 'v1', kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: policySchemasV1.policy,
  tracksGeneration: true,
  strategy: { defaults: defaultPolicy, load: loadCel, validate: policyValidation.validate, validateUpdate: policyValidation.validateUpdate },
  subresources: { status: { ...statusSubresource, validateUpdate: policyValidation.validateStatus } },
  printerColumns: policyColumns,
  otherVersions: [{ name: 'v1beta1', schema: policySchemasV1beta1.policy, enabledByDefault: false, ...sameShape }],
});

export const validatingAdmissionPolicyBindings = defineKind({
  group, version: 'v1', kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: policySchemasV1.binding,
  tracksGeneration: true,
  strategy: { defaults: defaultBinding, ...bindingValidation },
  printerColumns: bindingColumns,
  otherVersions: [{ name: 'v1beta1', schema: policySchemasV1beta1.binding, enabledByDefault: false, ...sameShape }],
});
