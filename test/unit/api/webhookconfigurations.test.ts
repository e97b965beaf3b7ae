// MutatingWebhookConfiguration and ValidatingWebhookConfiguration: the v1
// defaults and upstream's validation, message for message.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mutatingWebhookConfigurations, validatingWebhookConfigurations } from '../../../src/api/admissionregistration/v1/index.js';
import type { KindDefinition, KubeObject } from '../../../src/api/kind.js';
import { loadCel, loadRe2 } from '../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

type Hook = Record<string, any>;

const hook = (extra: Hook = {}): Hook => ({
  name: 'check.example.com',
  clientConfig: { url: 'https://hooks.example.com/check' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});

const config = (...webhooks: Hook[]): KubeObject => ({ metadata: { name: 'cfg' }, webhooks });

/** Defaults, then validation, as the store runs them; the messages of the errors. */
function problems(kind: KindDefinition, obj: KubeObject): string[] {
  kind.strategy.defaults!(obj);
  return kind.strategy.validate!(obj).map((e) => e.describe());
}

describe('webhook configuration defaults', () => {
  test('v1 fills failurePolicy, matchPolicy, selectors, timeout, reinvocation, rule scope and service port', () => {
    const mutating = config(hook({ clientConfig: { service: { namespace: 'ns', name: 'svc' } } }));
    mutatingWebhookConfigurations.strategy.defaults!(mutating);
    assert.deepEqual(mutating.webhooks[0], {
      ...hook(),
      clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }],
      failurePolicy: 'Fail', matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, timeoutSeconds: 10, reinvocationPolicy: 'Never',
    });
    const validating = config(hook({ failurePolicy: 'Ignore', timeoutSeconds: 3 }));
    validatingWebhookConfigurations.strategy.defaults!(validating);
    assert.equal(validating.webhooks[0].failurePolicy, 'Ignore');
    assert.equal(validating.webhooks[0].timeoutSeconds, 3);
    assert.equal(validating.webhooks[0].reinvocationPolicy, undefined, 'validating webhooks have no reinvocation policy');
  });

  test('a configuration without webhooks is valid', () => {
    assert.deepEqual(problems(validatingWebhookConfigurations, { metadata: { name: 'empty' } }), []);
    assert.deepEqual(problems(validatingWebhookConfigurations, config(hook())), []);
  });
});

describe('webhook configuration validation', () => {
  const cases: [string, Hook, string[]][] = [
    ['required fields', { name: '', sideEffects: undefined, admissionReviewVersions: undefined, clientConfig: {} }, [
      'webhooks[0].name: Required value',
      'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    ]],
    ['names must be fully qualified', { name: 'check.example' }, ['webhooks[0].name: Invalid value: "check.example": should be a domain with at least three segments separated by dots']],
    ['names must be DNS subdomains', { name: 'Check.Example.com' }, [
      `webhooks[0].name: Invalid value: "Check.Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]],
    ['https only', { clientConfig: { url: 'http://hooks.example.com/' } }, [`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`]],
    ['a URL needs a host', { clientConfig: { url: 'hooks' } }, [
      `webhooks[0].clientConfig.url: Invalid value: "": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]',
    ]],
    ['no user information, fragment or query', { clientConfig: { url: 'https://me:secret@hooks.example.com/p?x=1#frag' } }, [
      'webhooks[0].clientConfig.url: Invalid value: "me:secret": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
    ]],
    ['url and service together', { clientConfig: { url: 'https://a.example.com', service: { namespace: 'n', name: 's' } } }, ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']],
    ['service references', { clientConfig: { service: { namespace: '', name: '', port: 70000, path: 'x//' } } }, [
      'webhooks[0].clientConfig.service.name: Required value: service name is required',
      'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
      'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      `webhooks[0].clientConfig.service.path: Invalid value: "x//": must start with a '/'`,
      // As upstream, the first character is dropped unchecked: "//" is two empty segments.
      'webhooks[0].clientConfig.service.path: Invalid value: "x//": segment[0] may not be empty',
      'webhooks[0].clientConfig.service.path: Invalid value: "x//": segment[1] may not be empty',
    ]],
    ['timeouts from 1 to 30 seconds', { timeoutSeconds: 31 }, ['webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds']],
    ['policies from their lists', { failurePolicy: 'Maybe', matchPolicy: 'Loose', sideEffects: 'Some' }, [
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
    ]],
    ['rules', { rules: [{ operations: ['*', 'CREATE', 'PATCH'], apiGroups: ['*', 'apps'], apiVersions: [''], resources: ['*', 'pods', '*/*'], scope: 'Everywhere' }] }, [
      `webhooks[0].rules[0].operations: Invalid value: ["*","CREATE","PATCH"]: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[0].operations[2]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
      'webhooks[0].rules[0].apiVersions[0]: Required value',
      `webhooks[0].rules[0].resources: Invalid value: ["*","pods","*/*"]: if '*/*' is present, must not specify other resources`,
      `webhooks[0].rules[0].resources: Invalid value: ["*","pods","*/*"]: if '*' is present, must not specify other resources without subresources`,
      'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
    ]],
    ['sub-resource wildcards', { rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/*', 'pods/status', '*/scale', 'deployments/scale'] }] }, [
      `webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
      `webhooks[0].rules[0].resources[3]: Invalid value: "deployments/scale": if '*/scale' is present, must not specify deployments/scale`,
    ]],
    ['empty rule lists', { rules: [{}] }, [
      'webhooks[0].rules[0].operations: Required value', 'webhooks[0].rules[0].apiGroups: Required value',
      'webhooks[0].rules[0].apiVersions: Required value', 'webhooks[0].rules[0].resources: Required value',
    ]],
    ['review versions', { admissionReviewVersions: ['v2', 'v2', 'V3'] }, [
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
      `webhooks[0].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      'webhooks[0].admissionReviewVersions: Invalid value: ["v2","v2","V3"]: must include at least one of v1, v1beta1',
    ]],
    ['selectors', { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In' }, { key: 'x', operator: 'Like', values: ['a'] }] }, objectSelector: { matchLabels: { 'bad key!': 'v' } } }, [
      "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'webhooks[0].namespaceSelector.matchExpressions[1].operator: Invalid value: "Like": not a valid selector operator',
      `webhooks[0].objectSelector.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ]],
  ];
  for (const [what, extra, expected] of cases) {
    test(what, () => {
      assert.deepEqual(problems(validatingWebhookConfigurations, config(hook(extra))), expected);
    });
  }

  test('webhook names are unique within a configuration', () => {
    assert.deepEqual(problems(validatingWebhookConfigurations, config(hook(), hook())), ['webhooks[1].name: Duplicate value: "check.example.com"']);
  });

  test('only mutating webhooks have a reinvocation policy, Never or IfNeeded', () => {
    assert.deepEqual(problems(mutatingWebhookConfigurations, config(hook({ reinvocationPolicy: 'Always' }))), [
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ]);
    assert.deepEqual(problems(mutatingWebhookConfigurations, config(hook({ reinvocationPolicy: 'IfNeeded' }))), []);
  });

  test('an update may keep what an older server stored (side effects, duplicate names), not introduce it', () => {
    const old = config(hook({ sideEffects: 'Some' }), hook({ sideEffects: 'Unknown' }));
    const next = config(hook({ sideEffects: 'Some', timeoutSeconds: 5 }), hook({ sideEffects: 'Unknown' }));
    validatingWebhookConfigurations.strategy.defaults!(next);
    assert.deepEqual(validatingWebhookConfigurations.strategy.validateUpdate!(next, old), []);
    const clean = config(hook());
    const worse = config(hook({ sideEffects: 'Some' }), hook());
    validatingWebhookConfigurations.strategy.defaults!(worse);
    assert.deepEqual(validatingWebhookConfigurations.strategy.validateUpdate!(worse, clean).map((e) => e.describe()), [
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[1].name: Duplicate value: "check.example.com"',
    ]);
  });
});

describe('webhook matchConditions', () => {
  const conditions = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, expression: 'true' }));

  test('up to 64 conditions, each compiled; more is Too many', () => {
    assert.deepEqual(problems(validatingWebhookConfigurations, config(hook({ matchConditions: conditions(64) }))), []);
    assert.deepEqual(problems(mutatingWebhookConfigurations, config(hook({ matchConditions: conditions(65) }))), ['webhooks[0].matchConditions: Too many: 65: must have at most 64 items']);
  });

  test('an expression naming a variable a condition does not have does not compile', () => {
    assert.deepEqual(problems(validatingWebhookConfigurations, config(hook({ matchConditions: [{ name: 'p', expression: 'params.x == 1' }] }))), [
      `webhooks[0].matchConditions[0].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>: undeclared reference to 'params' (in container '')`,
    ]);
  });
});
