// Rule costs at CRD create as upstream estimates them: a rule that grows a
// string without bound (doubled twenty times by format() inside nested
// all()) is refused with upstream's message, never run; the rule shapes of
// real operators' CRDs, which upstream accepts, are accepted.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath, widgetCrd } from '../support/crds.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

function crdWith(plural: string, kind: string, spec: Record<string, unknown>): Record<string, any> {
  const crd = widgetCrd({}, plural, kind);
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec;
  return crd;
}

test('a rule doubling a string twenty times inside nested all() is refused at create, as upstream refuses it', async () => {
  let grown = 'self.s';
  for (let i = 0; i < 20; i++) grown = `'%s%s'.format([${grown.length > 200 ? 'self.s' : grown}, self.s])`;
  const spec = {
    type: 'object',
    properties: { s: { type: 'string', maxLength: 10 }, l: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } } },
    'x-kubernetes-validations': [{ rule: `self.l.all(a, self.l.all(b, ${grown}.contains(a + b)))` }],
  };
  const r = await s.client.post(crdPath, crdWith('growers', 'Grower', spec));
  assertStatus(r, 422, 'Invalid');
  assert.ok(r.json.message.includes('spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x'), r.json.message);
  assert.equal((await s.client.get('/readyz')).status, 200);
});

test("real operators' rule shapes are accepted: string equality, enums, rules under nested unbounded lists, escaped names", async () => {
  const header = {
    type: 'object', required: ['name', 'value'],
    properties: { name: { type: 'string', maxLength: 256 }, value: { type: 'string', maxLength: 4096 }, type: { type: 'string', enum: ['Exact', 'RegularExpression'] } },
    'x-kubernetes-validations': [{ rule: "self.type != 'RegularExpression' || self.value.size() > 0" }],
  };
  const spec = {
    type: 'object',
    properties: {
      mode: { type: 'string' },
      tls: { type: 'string', enum: ['Terminate', 'Passthrough'] },
      namespace: { type: 'string', maxLength: 63 },
      rules: { type: 'array', items: { type: 'object', properties: { matches: { type: 'array', items: { type: 'object', properties: { headers: { type: 'array', items: header } } } } } } },
    },
    'x-kubernetes-validations': [
      { rule: "!has(self.mode) || self.mode == 'Terminate' || self.mode == 'Passthrough'" },
      { rule: "!has(self.tls) || self.tls.startsWith('T') || self.tls.contains('ss')" },
      { rule: "!has(self.__namespace__) || self.__namespace__ != 'kube-system'", message: 'not in kube-system' },
    ],
  };
  const made = await s.client.post(crdPath, crdWith('routes', 'Route', spec));
  assert.equal(made.status, 201, made.text);
});
