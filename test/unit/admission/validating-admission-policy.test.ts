// The parts of ValidatingAdmissionPolicy that need no server: which requests
// a policy's constraints match (exclusions, resource names, Equivalent
// versions, upstream group names), one evaluation of a policy (messages,
// reasons, errors under each failure policy, variables, the per-evaluation
// budget), and the type checker behind status.typeChecking.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookMatcher } from '../../../src/admission/webhook/matcher.js';
import { PolicyMatcher } from '../../../src/admission/policy/matcher.js';
import { compilePolicy } from '../../../src/admission/policy/source.js';
import { evaluatePolicy } from '../../../src/admission/policy/evaluate.js';
import { configMaps } from '../../../src/api/core/v1/index.js';
import { horizontalPodAutoscalers } from '../../../src/api/autoscaling/v2/horizontalpodautoscaler.js';
import { deployments } from '../../../src/api/apps/v1/deployment.js';
import { customResourceDefinitions } from '../../../src/api/apiextensions/v1/customresourcedefinition.js';
import { validatingAdmissionPolicies } from '../../../src/api/admissionregistration/v1/index.js';
import { checkExpression, typeOfJsonSchema, typeOfSchema } from '../../../src/api/admissionregistration/v1/typechecking.js';
import { requestKind, requestResource } from '../../../src/admission/types.js';
import { admissionRequest } from '../../support/admission.js';
import { ApiEnablement } from '../../../src/api/versioning.js';
import { builtinKinds } from '../../../src/api/catalog.js';
import { loadCel } from '../../../src/api/validation/engines.js';

// CEL loads on first need (validation/engines.ts); these tests call the code under it directly.
await loadCel();

function policyOf(spec: Record<string, unknown>) {
  const obj = { metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['configmaps'] }] }, ...spec } };
  validatingAdmissionPolicies.strategy.defaults!(obj);
  assert.deepEqual(validatingAdmissionPolicies.strategy.validate!(obj).map((e) => e.describe()), []);
  return compilePolicy(obj);
}

const matcher = new PolicyMatcher(new WebhookMatcher(async (name) => ({ metadata: { name, labels: { team: name } } })), () => true);

describe('matching', () => {
  const rules = (extra: Record<string, unknown>) => policyOf({
    validations: [{ expression: 'true' }],
    matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }], ...extra },
  }).match;
  const matches = async (match: ReturnType<typeof rules>, name: string, namespace = 'a') =>
    (await matcher.matches(match, admissionRequest('CREATE', configMaps, name, { namespace }), new Map())) !== undefined;

  test('resource names narrow a rule; exclusions win over rules', async () => {
    const named = rules({ resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], resourceNames: ['only'] }] });
    assert.equal(await matches(named, 'only'), true);
    assert.equal(await matches(named, 'other'), false);
    const excluded = rules({ excludeResourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['configmaps'], resourceNames: ['secret-ish'] }] });
    assert.equal(await matches(excluded, 'plain'), true);
    assert.equal(await matches(excluded, 'secret-ish'), false);
  });

  test('namespace selector of the constraints', async () => {
    const selected = rules({ namespaceSelector: { matchLabels: { team: 'a' } } });
    assert.equal(await matches(selected, 'x', 'a'), true);
    assert.equal(await matches(selected, 'x', 'b'), false);
  });

  test('a rule naming an upstream group name matches our group', () => {
    const crdRule = policyOf({ validations: [{ expression: 'true' }], matchConstraints: { resourceRules: [{ apiGroups: ['apiextensions.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['*'] }] } }).match;
    const request = admissionRequest('CREATE', customResourceDefinitions, 'x.example.com');
    assert.deepEqual(matcher.byRules(crdRule, request), { resource: requestResource(request), kind: requestKind(request) });
  });
});

describe('matchPolicy', () => {
  test('Equivalent matches a request at another version of the resource, and its expressions see the object at the version its rule names', async () => {
    const hpa = {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'a' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 90 } } }] },
    };
    const request = admissionRequest('CREATE', horizontalPodAutoscalers, 'web', { namespace: 'a', object: hpa });
    const spec = (matchPolicy: string) => ({
      matchConstraints: { matchPolicy, resourceRules: [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }] },
      validations: [{ expression: 'object.spec.targetCPUUtilizationPercentage <= 80', messageExpression: "object.apiVersion + ': ' + string(object.spec.targetCPUUtilizationPercentage)" }],
    });
    assert.equal(matcher.byRules(policyOf(spec('Exact')).match, request), undefined);
    const policy = policyOf(spec('Equivalent'));
    const invocation = matcher.byRules(policy.match, request)!;
    assert.deepEqual(invocation.resource, { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
    const { denials } = await evaluatePolicy({ policy, invocation, request, params: null, namespaceObject: null });
    assert.deepEqual(denials.map((d) => d.message), ['autoscaling/v1: 90']);
  });
});

describe('evaluation', () => {
  const run = async (spec: Record<string, unknown>, data: Record<string, string> = {}) => {
    const request = admissionRequest('CREATE', configMaps, 'cm', { namespace: 'a', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'a' }, data } });
    const policy = policyOf(spec);
    return evaluatePolicy({ policy, invocation: matcher.byRules(policy.match, request)!, request, params: null, namespaceObject: null });
  };

  test('the message: messageExpression, else message, else the expression; the reason, Invalid by default', async () => {
    const { denials } = await run({
      validations: [
        { expression: 'object.data.size() > 1', messageExpression: "'only ' + string(object.data.size())", reason: 'Forbidden' },
        { expression: 'false', message: 'static', messageExpression: "''" },
        { expression: ' false ' },
        { expression: 'true', message: 'never' },
      ],
    }, { a: '1' });
    assert.deepEqual(denials.map((d) => [d.message, d.reason, d.expressionIndex]), [['only 1', 'Forbidden', 0], ['static', 'Invalid', 1], ['failed expression: false', 'Invalid', 2]]);
  });

  test('an error denies under Fail and is dropped under Ignore; a variable\'s error reaches only who reads it', async () => {
    const failing = { variables: [{ name: 'bad', expression: 'object.data.nope' }, { name: 'good', expression: '1' }] };
    const fail = await run({ ...failing, validations: [{ expression: 'variables.good == 1' }, { expression: "variables.bad == 'x'" }] });
    assert.deepEqual(fail.denials.map((d) => d.message), ["expression 'variables.bad == 'x'' resulted in error: no such key: nope"]);
    const ignore = await run({ ...failing, failurePolicy: 'Ignore', validations: [{ expression: "variables.bad == 'x'" }] });
    assert.deepEqual(ignore.denials, []);
  });

  test('a false match condition skips the policy; audit annotations are null or a string', async () => {
    assert.deepEqual((await run({ matchConditions: [{ name: 'never', expression: 'false' }], validations: [{ expression: 'false' }] })).denials, []);
    const annotated = await run({ auditAnnotations: [{ key: 'size', valueExpression: 'string(object.data.size())' }, { key: 'none', valueExpression: 'null' }] }, { a: '1' });
    assert.deepEqual(annotated.annotations, [['p/size', '1']]);
  });

  test('authorizer checks, in variables and on the request\'s own resource, asked of the server\'s authorizer', async () => {
    const policy = policyOf({
      variables: [{ name: 'secrets', expression: "authorizer.group('').resource('secrets').namespace('a').check('get').allowed()" }],
      validations: [{ expression: 'variables.secrets', message: 'no secrets' }, { expression: "authorizer.requestResource.check('delete').allowed()", message: 'no delete' }],
    });
    for (const [allowed, denied] of [['get', ['no delete']], ['delete', ['no secrets']], ['nothing', ['no secrets', 'no delete']]] as const) {
      const request = { ...admissionRequest('CREATE', configMaps, 'cm', { namespace: 'a' }), user: { username: 'u', groups: [] } };
      const asked: string[] = [];
      const { denials } = await evaluatePolicy({ policy, invocation: matcher.byRules(policy.match, request)!, request, params: null, namespaceObject: null,
        authorize: async (a) => { asked.push(`${a.verb} ${a.resource}`); return { decision: a.verb === allowed ? 'allow' : 'no-opinion', reason: '' }; } });
      assert.deepEqual(asked, ['get secrets', 'delete configmaps']);
      assert.deepEqual(denials.map((d) => d.message), denied);
    }
  });

  test('request, namespaceObject and params', async () => {
    const request = { ...admissionRequest('CREATE', configMaps, 'cm', { namespace: 'a' }), user: { username: 'alice', groups: ['dev'] } };
    const policy = policyOf({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        { expression: "request.operation == 'CREATE' && request.userInfo.username == 'alice' && request.namespace == 'a'", message: 'request' },
        { expression: "namespaceObject.metadata.labels.team == 'blue'", message: 'namespace' },
        { expression: "params.data.owner == request.userInfo.username", message: 'params' },
      ],
    });
    const { denials } = await evaluatePolicy({ policy, invocation: matcher.byRules(policy.match, request)!, request,
      params: { metadata: { name: 'p' }, data: { owner: 'bob' } }, namespaceObject: { metadata: { name: 'a', labels: { team: 'red' } } } });
    assert.deepEqual(denials.map((d) => d.message), ['namespace', 'params']);
  });

  test('the expressions of one evaluation share its budget', async () => {
    const pattern = `^(${Array.from({ length: 100 }, (_, i) => `x${i}`).join('|')}|a)*$`;
    // Each costs about 900,000, under the per-call limit; twelve of them exceed the 10,000,000 of one evaluation.
    const validations = Array.from({ length: 12 }, () => ({ expression: `object.data.big.matches('${pattern}')` }));
    const { denials } = await run({ validations }, { big: 'a'.repeat(90_000) });
    assert.deepEqual(denials.map((d) => d.message), ['validation failed due to running out of cost budget, no further validation rules will be run']);
  });
});

describe('type checking', () => {
  const deployment = typeOfSchema(deployments.schema);
  test('fields the schema lacks, with cel-go\'s place and excerpt', () => {
    assert.equal(checkExpression('object.spec.replicas > 1 && has(object.metadata.labels)', deployment), undefined);
    assert.equal(checkExpression('object.spec.template.spec.containers.all(c, c.imagee != "")', deployment),
      `ERROR: <input>:1:46: undefined field 'imagee'\n | object.spec.template.spec.containers.all(c, c.imagee != "")\n | ${'.'.repeat(45)}^`);
    assert.match(checkExpression('has(object.spec.nope)', deployment)!, /undefined field 'nope'/);
  });

  test('operators no overload takes; numbers compare across types', () => {
    assert.match(checkExpression("object.spec.replicas == 'three'", deployment)!, /ERROR: <input>:1:22: found no matching overload for '_==_' applied to '\(int, string\)'/);
    assert.equal(checkExpression('object.spec.replicas < 2.5', deployment), undefined);
    assert.equal(checkExpression('object.metadata.creationTimestamp < timestamp("2026-01-01T00:00:00Z")', deployment), undefined);
  });

  test('custom resources: their schema, with apiVersion, kind and metadata; open parts are dyn', () => {
    const widget = typeOfJsonSchema({ type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } }, true);
    assert.equal(checkExpression('object.metadata.name != "" && object.kind == "Widget" && object.spec.extra.anything == 1', widget), undefined);
    assert.match(checkExpression('object.spec.color == "red"', widget)!, /undefined field 'color'/);
  });
});

describe('versions', () => {
  test('v1beta1 is served only when --runtime-config asks, and the webhook configurations\' v1beta1 stays removed', () => {
    const group = validatingAdmissionPolicies.group;
    const beta = validatingAdmissionPolicies.versions.find((v) => v.name === 'v1beta1')!;
    assert.equal(ApiEnablement.fromRuntimeConfig([], builtinKinds).enablement.serves(group, beta, 'validatingadmissionpolicies'), false);
    const asked = ApiEnablement.fromRuntimeConfig([['admissionregistration.k8s.io/v1beta1', 'true']], builtinKinds).enablement;
    assert.equal(asked.serves(group, beta, 'validatingadmissionpolicies'), true);
    assert.equal(asked.serves(group, { name: 'v1beta1' }, 'validatingwebhookconfigurations'), false);
    assert.throws(() => ApiEnablement.fromRuntimeConfig([['admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations', 'true']], builtinKinds), /removed in v1\.22/);
  });
});
