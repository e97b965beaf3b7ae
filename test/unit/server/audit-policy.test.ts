// The audit policy: strict decoding that names the file and the line of
// what is wrong, and the first-match rules of upstream's policy checker.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditConfigError, parsePolicy, PolicyChecker, type PolicyRequest } from '../../../src/server/audit/policy.js';
import type { UserInfo } from '../../../src/machinery/user.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const head = `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\n`;
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const jane = { username: 'jane', groups: ['dev', 'system:authenticated'] };

/** A user and a request, as levelFor takes them: jane getting pod a/p unless `extra` says otherwise. */
function attrs(extra: Partial<PolicyRequest> & { user?: UserInfo }): [UserInfo, PolicyRequest] {
  const { user = jane, ...request } = extra;
  return [user, { verb: 'get', isResourceRequest: true, path: '/api/v1/namespaces/a/pods/p', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p', ...request }];
}

function failure(text: string): string {
  try {
    parsePolicy(text, '/etc/policy.yaml');
  } catch (e) {
    assert.ok(e instanceof AuditConfigError, String(e));
    return e.message;
  }
  assert.fail('the policy was accepted');
}

test('bad policies stop with the file and the line named', () => {
  assert.match(failure(`${head}rules:\n- level: Metadata\n  verb: [get]\n`), /"\/etc\/policy\.yaml", line 5: rules\[0\]\.verb: unknown field "verb"/);
  assert.match(failure(`${head}rules:\n- level: Loud\n`), /line 4: rules\[0\]\.level: unsupported value "Loud"/);
  assert.match(failure(`${head}rules:\n- users: [a]\n`), /line 4: rules\[0\]: level is required/);
  assert.match(failure(`${head}rules:\n- level: None\n  level: None\n`), /line 5: not valid YAML or JSON/);
  assert.match(failure(`${head}rules: [\n`), /not valid YAML or JSON/);
  assert.match(failure(`${head}rules:\n- level: None\n  nonResourceURLs: [/x]\n  resources: [{group: ""}]\n`), /line 5: .*both regular resources and non-resource URLs/);
  assert.match(failure(`${head}rules:\n- level: None\n  nonResourceURLs: [healthz]\n`), /must begin with \//);
  assert.match(failure(`${head}omitStages: [Never]\n`), /line 3: omitStages\[0\]: unsupported value "Never"/);
  assert.match(failure(`${head}rules:\n- level: Metadata\n  resources:\n  - resources: ["*"]\n    resourceNames: [x]\n`), /wildcard resource/);
  assert.match(failure(`apiVersion: audit.k8s.io/v1beta1\nkind: Policy\n`), /must be a Policy of apiVersion/);
  assert.match(failure(`apiVersion: audit.example.com/v1\nkind: Policy\n`), /must be a Policy of apiVersion/);
  assert.match(failure(`${head}rules:\n- level: Metadata\n  omitManagedFields: "yes"\n`), /line 5: .*must be true or false/);
  assert.match(failure(`${head}rules:\n- level: Metadata\n  __proto__: {}\n`), /unknown field "__proto__"/);
});

test('an upstream policy file (audit.k8s.io/v1) is read as ours', () => {
  const p = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [pods]}]\n', 'upstream.yaml');
  assert.equal(new PolicyChecker(p).levelFor(...attrs({})).level, 'RequestResponse');
});

test('JSON policies are read as well', () => {
  const p = parsePolicy(JSON.stringify({ apiVersion: `${vocabulary.auditGroup}/v1`, kind: 'Policy', rules: [{ level: 'Request' }] }), 'p.json');
  assert.equal(new PolicyChecker(p).levelFor(...attrs({})).level, 'Request');
});

test('the first matching rule decides; no match is None', () => {
  const p = parsePolicy(`${head}omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: RequestResponse
  users: [admin]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Request
  userGroups: [dev]
  verbs: [create]
  resources:
  - group: ""
    resources: [configmaps, "pods/log"]
- level: Metadata
  namespaces: [a]
  resources:
  - group: ""
    resources: ["*/status", "secrets/*"]
  - group: apps
    resources: [deployments]
    resourceNames: [web]
- level: Metadata
  nonResourceURLs: ["*"]
`, 'p.yaml');
  const c = new PolicyChecker(p);
  assert.equal(c.levelFor(...attrs({ isResourceRequest: false, path: '/healthz/ping', resource: undefined })).level, 'None');
  assert.equal(c.levelFor(...attrs({ isResourceRequest: false, path: '/version', resource: undefined })).level, 'None');
  assert.equal(c.levelFor(...attrs({ isResourceRequest: false, path: '/versions', resource: undefined })).level, 'Metadata');
  const forAdmin = c.levelFor(...attrs({ user: admin }));
  assert.deepEqual(forAdmin, { level: 'RequestResponse', omitStages: ['RequestReceived', 'ResponseStarted'], omitManagedFields: false });
  assert.deepEqual(c.levelFor(...attrs({ verb: 'create', resource: 'configmaps' })), { level: 'Request', omitStages: ['RequestReceived'], omitManagedFields: true });
  assert.equal(c.levelFor(...attrs({ verb: 'create', resource: 'pods', subresource: 'log' })).level, 'Request');
  assert.equal(c.levelFor(...attrs({ verb: 'create', resource: 'pods' })).level, 'None', 'pods/log names the sub-resource only');
  assert.equal(c.levelFor(...attrs({ verb: 'update', resource: 'pods', subresource: 'status' })).level, 'Metadata');
  assert.equal(c.levelFor(...attrs({ verb: 'update', resource: 'secrets', subresource: 'x' })).level, 'Metadata');
  assert.equal(c.levelFor(...attrs({ verb: 'update', resource: 'secrets' })).level, 'Metadata', 'secrets/* takes in the resource itself, as upstream');
  assert.equal(c.levelFor(...attrs({ verb: 'update', resource: 'configmaps', subresource: 'x' })).level, 'None');
  assert.equal(c.levelFor(...attrs({ verb: 'update', resource: 'pods', subresource: 'status', namespace: 'b' })).level, 'None');
  assert.equal(c.levelFor(...attrs({ apiGroup: 'apps', resource: 'deployments', name: 'web' })).level, 'Metadata');
  assert.equal(c.levelFor(...attrs({ apiGroup: 'apps', resource: 'deployments', name: 'db' })).level, 'None');
  assert.equal(c.levelFor(...attrs({ apiGroup: 'apps', resource: 'deployments', name: undefined, verb: 'list' })).level, 'None');
});
