// The schemas of ValidatingAdmissionPolicy and its binding, shared by v1 and
// v1beta1 (upstream's two versions carry the same fields; only the
// definition names differ).

import { define, p, t, type Schema } from '../../schema.js';
import { Condition, LabelSelector } from '../../meta/v1.js';
import { kindSchema } from '../../core/v1/common.js';
import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { MatchCondition } from './webhooks.js';

export interface PolicySchemas {
  policy: Schema;
  binding: Schema;
}

function build(version: string): PolicySchemas {
  const def = (name: string) => `${definitionPrefix}.api.admissionregistration.${version}.${name}`;
  const ParamKind = define(def('ParamKind'), t.object({
    apiVersion: p(1, t.string('Group and version of the parameter resource, `group/version` (`v1` for the core group).')),
    kind: p(2, t.string('Kind of the parameter resource.')),
  }, 'The kind of the resources that parameterize a policy.', { mapType: 'atomic' }));
  // The rule's fields sit inline beside resourceNames, as upstream's embedded RuleWithOperations.
  const NamedRuleWithOperations = define(def('NamedRuleWithOperations'), t.object({
    resourceNames: p(1, t.array(t.string(), 'Names of the objects the rule applies to; empty means all.', { listType: 'atomic' })),
    operations: t.array(t.string(), 'CREATE, UPDATE, DELETE, CONNECT, or * for all (alone).', { listType: 'atomic' }),
    apiGroups: t.array(t.string(), 'API groups; "" is the core group, * all (alone).', { listType: 'atomic' }),
    apiVersions: t.array(t.string(), 'API versions; * for all (alone).', { listType: 'atomic' }),
    resources: t.array(t.string(), 'Resources: `pods`, `pods/status`, `pods/*`, `*/status`, `*` or `*/*`.', { listType: 'atomic' }),
    scope: t.string('Cluster, Namespaced or * (default).'),
  }, 'The operations and resources a rule covers, optionally narrowed to named objects.', { mapType: 'atomic' }));
  const MatchResources = define(def('MatchResources'), t.object({
    namespaceSelector: p(1, t.ref(LabelSelector, 'Matches only objects in namespaces with matching labels (a Namespace object: its own labels); empty selects all.')),
    objectSelector: p(2, t.ref(LabelSelector, 'Matches only when the object or the old object has matching labels; empty selects all.')),
    resourceRules: p(3, t.array(t.ref(NamedRuleWithOperations), 'The operations and resources that match; any one rule matching suffices.', { listType: 'atomic' })),
    excludeResourceRules: p(4, t.array(t.ref(NamedRuleWithOperations), 'Operations and resources never matched, whatever resourceRules say.', { listType: 'atomic' })),
    matchPolicy: p(7, t.string('Exact, or Equivalent (default): also match the same resource reached through another group or version.')),
  }, 'Which requests a policy or binding applies to.', { mapType: 'atomic' }));
  const Validation = define(def('Validation'), t.object({
    expression: p(1, t.string('CEL expression over object, oldObject, request, params, namespaceObject, authorizer and variables; must evaluate to bool.')),
    message: p(2, t.string('Message returned when the expression is false (a single line).')),
    reason: p(3, t.string('Unauthorized, Forbidden (default), Invalid or RequestEntityTooLarge: the HTTP answer of a failure.')),
    messageExpression: p(4, t.string('CEL expression evaluating to the message returned when the expression is false; message is used if it fails.')),
  }, 'One CEL check of a policy.', { required: ['expression'] }));
  const AuditAnnotation = define(def('AuditAnnotation'), t.object({
    key: p(1, t.string('Key of the annotation, `<policy name>/<key>` in the audit event; a qualified name of at most 63 bytes.')),
    valueExpression: p(2, t.string('CEL expression evaluating to the annotation\'s value (a string), or null to add none.')),
  }, 'An audit annotation a policy adds to the audit event of the requests it matches.', { required: ['key', 'valueExpression'] }));
  const Variable = define(def('Variable'), t.object({
    name: p(1, t.string('Name of the variable, a CEL identifier: expressions read it as `variables.<name>`.')),
    expression: p(2, t.string('CEL expression computing the variable.')),
  }, 'A named CEL value expressions of the policy may read.', { required: ['name', 'expression'], mapType: 'atomic' }));
  const ExpressionWarning = define(def('ExpressionWarning'), t.object({
    fieldRef: p(2, t.string('Path of the field holding the expression, e.g. `spec.validations[0].expression`.')),
    warning: p(3, t.string('What type checking found.')),
  }, 'A type-checking warning about one expression.', { required: ['fieldRef', 'warning'] }));
  const TypeChecking = define(def('TypeChecking'), t.object({
    expressionWarnings: p(1, t.array(t.ref(ExpressionWarning), 'The warnings, one per expression that did not check.', { listType: 'atomic' })),
  }, 'The results of type-checking the policy\'s expressions against the kinds it matches.'));
  const PolicySpec = define(def('ValidatingAdmissionPolicySpec'), t.object({
    paramKind: p(1, t.ref(ParamKind, 'The kind of the resources that parameterize this policy; absent: the policy takes no parameters.')),
    matchConstraints: p(2, t.ref(MatchResources, 'The requests the policy may apply to; bindings narrow them (required, with at least one resource rule).')),
    validations: p(3, t.array(t.ref(Validation), 'The CEL checks, in order; the first failure is the one reported.', { listType: 'atomic' })),
    failurePolicy: p(4, t.string('Fail (default) or Ignore: what an error (a parameter missing, an expression failing) does to the request.')),
    auditAnnotations: p(5, t.array(t.ref(AuditAnnotation), 'Audit annotations added to the requests the policy matches.', { listType: 'atomic' })),
    matchConditions: p(6, t.array(t.ref(MatchCondition), 'At most 64 CEL conditions, all of which must hold for the policy to apply.',
      { patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'] })),
    variables: p(7, t.array(t.ref(Variable), 'Named CEL values, computed on first use; each may read the ones before it.', { listType: 'atomic' })),
  }, 'What a ValidatingAdmissionPolicy checks and for which requests.'));
  const PolicyStatus = define(def('ValidatingAdmissionPolicyStatus'), t.object({
    observedGeneration: p(1, t.int64('The generation the type checking was done for.')),
    typeChecking: p(2, t.ref(TypeChecking, 'The results of type-checking the expressions.')),
    conditions: p(3, t.array(t.ref(Condition), 'Conditions of the policy.', { listType: 'map', listMapKeys: ['type'] })),
  }, 'What the server observed of a ValidatingAdmissionPolicy.'));
  const ParamRef = define(def('ParamRef'), t.object({
    name: p(1, t.string('Name of the one parameter resource; exclusive with selector.')),
    namespace: p(2, t.string('Namespace of the parameter resources; empty: the request\'s namespace (for namespaced parameters).')),
    selector: p(3, t.ref(LabelSelector, 'Selects every parameter resource with matching labels; the policy runs once for each.')),
    parameterNotFoundAction: p(4, t.string('Allow or Deny: what to do when no parameter resource is found (required).')),
  }, 'How a binding finds the parameter resources of its policy.', { mapType: 'atomic' }));
  const BindingSpec = define(def('ValidatingAdmissionPolicyBindingSpec'), t.object({
    policyName: p(1, t.string('Name of the ValidatingAdmissionPolicy bound (required).')),
    paramRef: p(2, t.ref(ParamRef, 'The parameter resources, for a policy with a paramKind.')),
    matchResources: p(3, t.ref(MatchResources, 'Narrows the requests the policy applies to (within its matchConstraints).')),
    validationActions: p(4, t.array(t.string(), 'What a failed validation does: Deny, Warn, Audit (at least one; not both Deny and Warn).', { listType: 'set' })),
  }, 'Which policy a binding applies, with which parameters and actions.'));
  return {
    policy: define(def('ValidatingAdmissionPolicy'), kindSchema('A policy of CEL checks the server runs on the requests it matches, once bound.', {
      spec: p(2, t.ref(PolicySpec, 'What the policy checks.')),
      status: p(3, t.ref(PolicyStatus, 'What the server observed of the policy.')),
    })),
    binding: define(def('ValidatingAdmissionPolicyBinding'), kindSchema('Applies a ValidatingAdmissionPolicy, with its parameters and actions.', {
      spec: p(2, t.ref(BindingSpec, 'What the binding applies.')),
    })),
  };
}

export const policySchemasV1 = build('v1');
export const policySchemasV1beta1 = build('v1beta1');
