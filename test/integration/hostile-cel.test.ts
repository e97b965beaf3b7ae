// Hostile CEL against a real server, as an attacker with ordinary rights
// would write it (issue 38): a backtracking pattern through a CRD's rule, a
// webhook's matchConditions and a pattern the object's author supplies, and
// a rule that doubles a string until the heap is gone. The server runs as a
// child process (with a small heap, as the crash was measured), so a
// frozen event loop or a crash is seen from outside: /readyz must answer
// within 1 s while the hostile request runs, and the server must survive
// with upstream's answer.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, startChildServer, type ChildServer } from '../support/server.js';
import { TestClient, type Response } from '../support/client.js';
import { eventually } from '../support/eventually.js';
import { assertReadyWhile, assertStatus, Canary } from '../support/hostile.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

let server: ChildServer;
let client: TestClient;
let canary: Canary;
before(async () => {
  server = await startChildServer(['--storage-backend', 'memory'], tempDir(), ['--max-old-space-size=384']);
  client = TestClient.fromKubeconfig(server.kubeconfigPath);
  canary = await Canary.plant(client);
});
after(async () => {
  client.close();
  server.process.kill('SIGKILL');
});

/** The pattern that backtracks exponentially on a run of `a`s that cannot end the match. */
const backtracking = '^(a+)+$';
const aThenBang = `${'a'.repeat(40)}!`;

/** Sends `request` while /readyz is asked on another connection (assertReadyWhile). */
async function whileReady(request: () => Promise<Response>): Promise<Response> {
  const probe = TestClient.fromKubeconfig(server.kubeconfigPath);
  try {
    return await assertReadyWhile(probe, request, 'the hostile request runs');
  } finally {
    probe.close();
  }
}

/** A namespaced custom resource `plural` whose spec has string properties `props` (bounded) and `rule`. */
async function ruledKind(plural: string, kind: string, props: Record<string, number>, rule: string): Promise<string> {
  const crd = widgetCrd({}, plural, kind);
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = {
    type: 'object',
    'x-kubernetes-validations': [{ rule }],
    properties: Object.fromEntries(Object.entries(props).map(([name, maxLength]) => [name, { type: 'string', maxLength }])),
  };
  const made = await client.post(crdPath, crd);
  assert.equal(made.status, 201, made.text);
  const collection = `/apis/${widgetGroup}/v1/namespaces/default/${plural}`;
  await eventually(`${plural} are served`, async () => (await client.get(collection)).status === 200);
  return collection;
}

const instance = (kind: string, name: string, spec: Record<string, string>) => ({ apiVersion: `${widgetGroup}/v1`, kind, metadata: { name }, spec });

test('a CRD rule calling find() with a backtracking pattern runs on RE2: the loop stays free and the rule holds', async () => {
  const finds = await ruledKind('finds', 'Find', { s: 100 }, `self.s.find('${backtracking}') == ''`);
  const created = await whileReady(() => client.post(finds, instance('Find', 'f1', { s: aThenBang })));
  assert.equal(created.status, 201, `RE2 finds no match, so the rule holds: ${created.text}`);
  const refused = await client.post(finds, instance('Find', 'f2', { s: 'aaaa' }));
  assertStatus(refused, 422, 'Invalid');
  assert.equal(refused.json.details.causes[0].message, `Invalid value: "object": failed rule: self.s.find('${backtracking}') == ''`);
  await canary.assertServerIntact();
});

test("a webhook's matchConditions calling find() with a backtracking pattern run on RE2", async () => {
  const configurations = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  const made = await client.post(configurations, {
    metadata: { name: 'hostile-cel' },
    webhooks: [{
      name: 'find.hostile.example.com',
      // Nothing listens there: a call fails the request, so a create that passes was not called for.
      clientConfig: { url: 'https://127.0.0.1:1/never' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      objectSelector: { matchLabels: { hostile: 'cel' } },
      matchConditions: [{ name: 'finds-as', expression: `object.data.s.find('${backtracking}') != ''` }],
      failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'],
    }],
  });
  assert.equal(made.status, 201, made.text);
  const configMap = (name: string, s: string) => ({ metadata: { name, labels: { hostile: 'cel' } }, data: { s } });
  // The condition holds for a run of `a`s alone: the webhook is called, and fails.
  await eventually('the webhook is in effect', async () => (await client.post('/api/v1/namespaces/default/configmaps', configMap('probe', 'aaa'))).status >= 400);
  const created = await whileReady(() => client.post('/api/v1/namespaces/default/configmaps', configMap('hostile', aThenBang)));
  assert.equal(created.status, 201, `RE2 finds no match, so the condition is false and the webhook skipped: ${created.text}`);
  assert.equal((await client.delete(`${configurations}/hostile-cel`)).status, 200);
  // A constant pattern RE2 refuses is refused with the configuration, as upstream builds the program.
  const broken = await client.post(configurations, {
    metadata: { name: 'hostile-cel-broken' },
    webhooks: [{
      name: 'broken.hostile.example.com', clientConfig: { url: 'https://127.0.0.1:1/never' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      matchConditions: [{ name: 'broken', expression: "object.data.s.find('(a') != ''" }],
      failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'],
    }],
  });
  assertStatus(broken, 422, 'Invalid');
  assert.match(broken.json.message, /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: .*: program instantiation failed: error parsing regexp: missing closing \): `\(a`/);
  await canary.assertServerIntact();
});

test("find() with the object author's own pattern runs on RE2, and a pattern RE2 refuses is upstream's error", async () => {
  const patterns = await ruledKind('patterns', 'Pattern', { x: 100, pattern: 50 }, "self.x.find(self.pattern) == ''");
  const created = await whileReady(() => client.post(patterns, instance('Pattern', 'p1', { x: aThenBang, pattern: backtracking })));
  assert.equal(created.status, 201, created.text);
  const bad = await client.post(patterns, instance('Pattern', 'p2', { x: 'a', pattern: '(a' }));
  assertStatus(bad, 422, 'Invalid');
  assert.equal(bad.json.details.causes[0].message,
    'Invalid value: "object": Illegal regex: error parsing regexp: missing closing ): `(a` evaluating rule: self.x.find(self.pattern) == \'\'');
  // A constant one is refused with the definition.
  const crd = widgetCrd({}, 'brokens', 'Broken');
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = { type: 'object', properties: { x: { type: 'string', maxLength: 10 } }, 'x-kubernetes-validations': [{ rule: "self.x.matches('[')" }] };
  const refused = await client.post(crdPath, crd);
  assertStatus(refused, 422, 'Invalid');
  assert.ok(refused.json.message.includes('x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.x.matches(\'[\')"}: program instantiation failed: error parsing regexp: missing closing ]: `[`'), refused.json.message);
  await canary.assertServerIntact();
});

test('a rule doubling a string through format() until lowerAscii() is stopped by the runtime cost limit, not the heap', async () => {
  // 22 doublings of a 100-character string: 419 million characters (under V8's longest string), were nothing to stop it.
  let body = 'x22.lowerAscii().size() > 0';
  for (let i = 22; i >= 1; i--) body = `['%s%s'.format([x${i - 1}, x${i - 1}])].all(x${i}, ${body})`;
  const rule = `[self.s].all(x0, ${body})`;
  const growths = await ruledKind('growths', 'Growth', { s: 100 }, rule);
  const expected = `Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`;
  for (const query of ['?dryRun=All', '']) {
    const r = await whileReady(() => client.post(`${growths}${query}`, instance('Growth', 'g1', { s: 'A'.repeat(100) })));
    assertStatus(r, 422, 'Invalid');
    assert.equal(r.json.details.causes[0].message, expected, query || 'create');
  }
  assert.equal(server.process.exitCode, null, 'the server is still running');
  await canary.assertServerIntact();
});
