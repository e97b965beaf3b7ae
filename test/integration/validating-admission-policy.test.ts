// ValidatingAdmissionPolicy as a cluster user writes it, in upstream's group
// name: each test binds a policy to its own namespace through the binding's
// namespace selector, so the other namespaces (and tests) are untouched, and
// waits for the binding to take effect (the plugin reads policies from
// informers). Denials with upstream's message, reasons and codes; warnings
// kubectl prints; the audit record of the Audit action and of audit
// annotations; params from a ConfigMap and from a custom resource; failing
// expressions under each failure policy; the per-call cost limit.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { crdPath } from '../support/crds.js';
import { productGroup, vocabulary } from '../../src/machinery/vocabulary.js';

const api = '/apis/admissionregistration.k8s.io/v1';
const auditPolicy = `apiVersion: ${vocabulary.auditGroup}/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: [configmaps]}]
- level: None
`;

let s: TestServer;
let logPath: string;

before(async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'audit-policy.yaml'), auditPolicy);
  logPath = join(dir, 'audit.log');
  s = await startTestServer({ auditPolicyFile: join(dir, 'audit-policy.yaml'), auditLogPath: logPath });
});
after(async () => { await s.close(); });

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** A namespace of its own for one test, labelled so that only its binding selects it. */
async function namespace(name: string): Promise<string> {
  const r = await s.client.post('/api/v1/namespaces', { metadata: { name, labels: { 'vap-test': name } } });
  assert.equal(r.status, 201, r.text);
  return name;
}

function policy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] }, ...spec },
  };
}

/** Creates the policy and its binding to namespace `ns`. */
async function bind(ns: string, p: Record<string, any>, binding: Record<string, unknown> = {}): Promise<void> {
  const created = await s.client.post(`${api}/validatingadmissionpolicies`, p);
  assert.equal(created.status, 201, created.text);
  const b = await s.client.post(`${api}/validatingadmissionpolicybindings`, {
    metadata: { name: `${p.metadata.name}-binding` },
    spec: { policyName: p.metadata.name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'vap-test': ns } } }, ...binding },
  });
  assert.equal(b.status, 201, b.text);
}

const configMap = (name: string, data: Record<string, string>) => ({ metadata: { name }, data });

/** Waits until a dry-run create of `body` in `ns` answers `status` (the binding has reached the plugin), and answers that response. */
async function once(ns: string, body: unknown, status: number) {
  return eventually(`a create in ${ns} answered ${status}`, async () => {
    const r = await s.client.post(`${cms(ns)}?dryRun=All`, body);
    return r.status === status ? r : undefined;
  });
}

test('a failed validation denies with its message or messageExpression, its reason and code; other namespaces are not selected', async () => {
  const ns = await namespace('vap-deny');
  await bind(ns, policy('few-keys', {
    validations: [
      { expression: '!has(object.data) || object.data.size() <= 2', message: 'at most two keys' },
      { expression: "object.metadata.name.startsWith('ok')", messageExpression: "'name ' + object.metadata.name + ' must start with ok'", reason: 'Forbidden' },
    ],
  }));
  const tooMany = await once(ns, configMap('ok-many', { a: '1', b: '2', c: '3' }), 422);
  assertStatus(tooMany, 422, 'Invalid',
    `configmaps "ok-many" is forbidden: ValidatingAdmissionPolicy 'few-keys' with binding 'few-keys-binding' denied request: at most two keys`);
  const badName = await s.client.post(cms(ns), configMap('bad', {}));
  assertStatus(badName, 403, 'Forbidden',
    `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'few-keys' with binding 'few-keys-binding' denied request: name bad must start with ok`);
  assert.equal((await s.client.post(cms(ns), configMap('ok-fine', { a: '1' }))).status, 201);
  // The binding's namespace selector: the same object elsewhere is not checked.
  const other = await namespace('vap-deny-other');
  assert.equal((await s.client.post(cms(other), configMap('bad', { a: '1', b: '2', c: '3' }))).status, 201);
  // Without message: upstream's `failed expression`; the policy's own write is never subject to policies.
  const r = await s.client.send('PATCH', `${api}/validatingadmissionpolicies/few-keys`, {
    body: { spec: { validations: [{ expression: 'object.metadata.name.size() < 3' }] } }, headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(r.status, 200, r.text);
  const denied = await once(ns, configMap('long-name', {}), 422);
  assert.match(denied.json.message, /denied request: failed expression: object\.metadata\.name\.size\(\) < 3$/);
});

test('Warn: kubectl prints the failure as a warning and the object is created', async () => {
  const ns = await namespace('vap-warn');
  await bind(ns, policy('warn-keys', { validations: [{ expression: "has(object.data) && 'owner' in object.data", message: 'an owner key is expected' }] }),
    { validationActions: ['Warn'] });
  await eventually('the warning', async () => {
    const r = await s.client.post(`${cms(ns)}?dryRun=All`, configMap('probe', {}));
    return String(r.headers.warning ?? '').includes('an owner key is expected');
  });
  const out = await s.kubectl(['create', 'configmap', 'plain', '-n', ns, '--from-literal=a=1']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stderr, /Warning: Validation failed for ValidatingAdmissionPolicy 'warn-keys' with binding 'warn-keys-binding': an owner key is expected/);
});

function auditEvents(): any[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('Audit: the failure and the policy\'s audit annotations are in the audit event; the request goes through', async () => {
  const ns = await namespace('vap-audit');
  await bind(ns, policy('audit-keys', {
    validations: [{ expression: 'object.data.size() < 1', message: 'no data expected' }],
    auditAnnotations: [{ key: 'keys', valueExpression: "'keys=' + string(object.data.size())" }, { key: 'never', valueExpression: 'null' }],
  }), { validationActions: ['Audit'] });
  await eventually('the audit annotation', async () => {
    const r = await s.client.post(cms(ns), configMap(`probe-${Date.now()}`, { a: '1' }));
    assert.equal(r.status, 201, r.text);
    const event = await eventually('its event', async () => auditEvents().find((e) => e.auditID === r.headers['audit-id'] && e.stage === 'ResponseComplete'));
    return event.annotations?.['audit-keys/keys'] ? event : undefined;
  }).then((event) => {
    assert.equal(event.annotations['audit-keys/keys'], 'keys=1');
    assert.equal(event.annotations['audit-keys/never'], undefined);
    const failures = JSON.parse(event.annotations[`${productGroup('validation.policy.admission')}/validation_failure`]);
    assert.deepEqual(failures, [{ message: 'no data expected', policy: 'audit-keys', binding: 'audit-keys-binding', expressionIndex: 0, validationActions: ['Audit'] }]);
  });
});

test('params from a ConfigMap: a missing one denies under Deny, then its values are read', async () => {
  const ns = await namespace('vap-params');
  await bind(ns, policy('max-keys', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
    validations: [{ expression: '!has(object.data) || object.data.size() <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' keys'" }],
  }), { paramRef: { name: 'limits', namespace: ns, parameterNotFoundAction: 'Deny' } });
  const secret = (name: string, n: number) => ({ metadata: { name }, data: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'eA=='])) });
  const secrets = `/api/v1/namespaces/${ns}/secrets`;
  const missing = await eventually('the missing param', async () => {
    const r = await s.client.post(`${secrets}?dryRun=All`, secret('one', 1));
    return r.status === 422 ? r : undefined;
  });
  assert.equal(missing.json.message,
    "secrets \"one\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
  // A param created a moment ago is read even before the informer has it.
  assert.equal((await s.client.post(cms(ns), configMap('limits', { max: '2' }))).status, 201);
  assert.equal((await s.client.post(secrets, secret('two', 2))).status, 201);
  assertStatus(await s.client.post(secrets, secret('three', 3)), 422, 'Invalid',
    "secrets \"three\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most 2 keys");
});

test('params from a custom resource, selected by labels: one evaluation per param', async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'limits.vap.example.com' },
    spec: {
      group: 'vap.example.com', scope: 'Namespaced', names: { plural: 'limits', singular: 'limit', kind: 'Limit' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { maxKeys: { type: 'integer' } } } } } } }],
    },
  };
  assert.equal((await s.client.post(crdPath, crd)).status, 201);
  const ns = await namespace('vap-crd-params');
  const limits = `/apis/vap.example.com/v1/namespaces/${ns}/limits`;
  await eventually('limits served', async () => (await s.client.get(limits)).status === 200);
  for (const [name, maxKeys] of [['loose', 3], ['strict', 1]] as const) {
    const r = await s.client.post(limits, { apiVersion: 'vap.example.com/v1', kind: 'Limit', metadata: { name, labels: { tier: 'gold' } }, spec: { maxKeys } });
    assert.equal(r.status, 201, r.text);
  }
  await bind(ns, policy('crd-limits', {
    paramKind: { apiVersion: 'vap.example.com/v1', kind: 'Limit' },
    validations: [{ expression: 'object.data.size() <= params.spec.maxKeys', messageExpression: "params.metadata.name + ' allows ' + string(params.spec.maxKeys)" }],
  }), { paramRef: { selector: { matchLabels: { tier: 'gold' } }, parameterNotFoundAction: 'Deny' } });
  // Each param is evaluated: two keys pass `loose` and fail `strict` (params in the request's namespace).
  const denied = await once(ns, configMap('two', { a: '1', b: '2' }), 422);
  assert.match(denied.json.message, /denied request: strict allows 1$/);
  assert.equal((await s.client.post(cms(ns), configMap('one', { a: '1' }))).status, 201);
});

test('an expression that fails: failurePolicy Fail denies with the error, Ignore admits', async () => {
  const ns = await namespace('vap-errors');
  const failing = { validations: [{ expression: "object.data.missing == 'x'" }] };
  await bind(ns, policy('fails-closed', { ...failing, failurePolicy: 'Fail' }));
  const denied = await once(ns, configMap('a', { b: '1' }), 422);
  assert.equal(denied.json.message,
    "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'fails-closed' with binding 'fails-closed-binding' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing");
  await s.client.delete(`${api}/validatingadmissionpolicybindings/fails-closed-binding`);
  await bind(ns, policy('fails-open', { ...failing, failurePolicy: 'Ignore' }));
  await eventually('the Fail binding gone', async () => (await s.client.post(`${cms(ns)}?dryRun=All`, configMap('a', { b: '1' }))).status === 201);
  assert.equal((await s.client.post(cms(ns), configMap('a', { b: '1' }))).status, 201);
});

test('an expression over the per-call cost limit is an error; variables are shared by the expressions', async () => {
  const ns = await namespace('vap-cost');
  // A pattern's cost is charged by the sizes of the pattern and the string, before it runs: 100 kB makes it cost more than the limit.
  const pattern = `^(${Array.from({ length: 140 }, (_, i) => `x${i}`).join('|')}|a)*$`;
  await bind(ns, policy('too-dear', {
    variables: [{ name: 'keys', expression: 'has(object.data) ? object.data.size() : 0' }, { name: 'big', expression: "has(object.data) && 'big' in object.data" }],
    validations: [
      { expression: 'variables.keys < 5', message: 'fewer than five keys' },
      { expression: `!variables.big || object.data.big.matches('${pattern}')` },
    ],
  }));
  const many = await once(ns, configMap('many', { a: '1', b: '2', c: '3', d: '4', e: '5' }), 422);
  assert.match(many.json.message, /denied request: fewer than five keys$/);
  const dear = await s.client.post(cms(ns), configMap('dear', { big: 'a'.repeat(100_000) }));
  assertStatus(dear, 422, 'Invalid');
  assert.match(dear.json.message, /denied request: expression '!variables\.big \|\| object\.data\.big\.matches\(.*' resulted in error: operation cancelled: actual cost limit exceeded$/);
  assert.equal((await s.client.post(cms(ns), configMap('cheap', { big: 'a' }))).status, 201);
});

test('policies and bindings are validated with upstream\'s messages', async () => {
  const bad = await s.client.post(`${api}/validatingadmissionpolicies`, {
    metadata: { name: 'bad' },
    spec: {
      failurePolicy: 'Sometimes',
      matchConstraints: { resourceRules: [] },
      variables: [{ name: 'not-an-identifier', expression: 'object.(' }, { name: 'early', expression: 'variables.later' }, { name: 'later', expression: '1' }],
      validations: [{ expression: 'params.x', message: 'two\nlines', reason: 'Teapot' }, { expression: 'variables.later == variables.typo' }],
    },
  });
  assert.equal(bad.status, 422);
  const causes = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  for (const expected of [
    /^spec\.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"$/,
    /^spec\.matchConstraints\.resourceRules: Required value$/,
    /^spec\.variables\[0\]\.name: Invalid value: "not-an-identifier": name is not a valid CEL identifier$/,
    /^spec\.variables\[0\]\.expression: Invalid value: "object\.\(": compilation failed: /,
    /^spec\.validations\[0\]\.expression: Invalid value: "params\.x": compilation failed: ERROR: <input>:.*undeclared reference to 'params'/,
    /^spec\.validations\[0\]\.message: Invalid value: "two\\nlines": message must not contain line breaks$/,
    /^spec\.validations\[0\]\.reason: Unsupported value: "Teapot"/,
    // A variable sees only those before it; an expression only declared ones.
    /^spec\.variables\[1\]\.expression: Invalid value: "variables\.later": compilation failed: ERROR: <input>:1:10: undefined field 'later'/,
    /^spec\.validations\[1\]\.expression: Invalid value: "variables\.later == variables\.typo": compilation failed: ERROR: <input>:1:29: undefined field 'typo'/,
  ]) assert.ok(causes.some((c: string) => expected.test(c)), `${expected} in ${causes.join('\n')}`);
  const binding = await s.client.post(`${api}/validatingadmissionpolicybindings`, {
    metadata: { name: 'bad' }, spec: { policyName: 'p', validationActions: ['Deny', 'Warn'], paramRef: { name: 'x', selector: {} } },
  });
  assert.equal(binding.status, 422);
  const bcauses = binding.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  for (const expected of [
    'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.parameterNotFoundAction: Required value',
  ]) assert.ok(bcauses.includes(expected), `${expected} in ${bcauses.join('\n')}`);
});

test('status.typeChecking: the validations are checked against the schemas of the kinds the rules name', async () => {
  const p = await s.client.post(`${api}/validatingadmissionpolicies`, policy('typed', {
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments', 'replicasets'] }] },
    validations: [
      { expression: 'object.spec.replicas > 1 && object.metadata.name != ""' },
      { expression: 'object.spec.replicass > 1', messageExpression: "object.metadata.name + 1" },
    ],
  }));
  assert.equal(p.status, 201, p.text);
  const typed = await eventually('the type checking', async () => {
    const r = await s.client.get(`${api}/validatingadmissionpolicies/typed`);
    return r.json.status?.observedGeneration === r.json.metadata.generation ? r.json : undefined;
  });
  const undefinedField = (kind: string) => `apps/v1, Kind=${kind}: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^`;
  const noOverload = (kind: string) => `apps/v1, Kind=${kind}: ERROR: <input>:1:22: found no matching overload for '_+_' applied to '(string, int)'\n | object.metadata.name + 1\n | .....................^`;
  assert.deepEqual(typed.status.typeChecking, {
    expressionWarnings: [
      { fieldRef: 'spec.validations[1].expression', warning: `${undefinedField('Deployment')}\n${undefinedField('ReplicaSet')}` },
      { fieldRef: 'spec.validations[1].messageExpression', warning: `${noOverload('Deployment')}\n${noOverload('ReplicaSet')}` },
    ],
  });
  // A policy that checks has an empty record, for its generation.
  const fixed = await s.client.send('PATCH', `${api}/validatingadmissionpolicies/typed`, {
    body: { spec: { validations: [{ expression: 'object.spec.replicas > 1' }] } }, headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(fixed.status, 200, fixed.text);
  const checked = await eventually('the new generation checked', async () => {
    const r = await s.client.get(`${api}/validatingadmissionpolicies/typed`);
    return r.json.status?.observedGeneration === 2 ? r.json : undefined;
  });
  assert.deepEqual(checked.status.typeChecking, {});
});
