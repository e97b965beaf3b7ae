// CEL rules of a custom resource end to end: the optional syntax and the
// sets library in x-kubernetes-validations, enforced on create and update
// (a transition rule with optionalOldSelf); definitions refused naming the
// place for a misplaced marker, a rule over its cost budget and a library
// upstream 1.32 does not offer.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const gadgets = `/apis/${widgetGroup}/v1/namespaces/default/gadgets`;

function gadgetCrd(spec: Record<string, unknown>): Record<string, any> {
  const crd = widgetCrd({}, 'gadgets', 'Gadget');
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec;
  return crd;
}

const specSchema = {
  type: 'object',
  'x-kubernetes-validations': [
    { rule: "self.?tier.orValue('basic') in ['basic', 'gold']", message: 'tier must be basic or gold' },
    { rule: "!has(self.verbs) || sets.contains(['read', 'write', 'admin'], self.verbs)", messageExpression: "'verbs must be read, write or admin: ' + self.verbs.join(', ')" },
    { rule: "!oldSelf.hasValue() || !has(oldSelf.value().owner) || (has(self.owner) && oldSelf.value().owner == self.owner)", optionalOldSelf: true, message: 'owner is immutable' },
  ],
  properties: {
    tier: { type: 'string', maxLength: 10 },
    owner: { type: 'string', maxLength: 63 },
    verbs: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } },
  },
};

test('optional syntax and the sets library in the rules of a custom resource', async () => {
  const made = await s.client.post(crdPath, gadgetCrd(specSchema));
  assert.equal(made.status, 201, made.text);
  await eventually('gadgets are served', async () => (await s.client.get(gadgets)).status === 200);

  const ok = await s.client.post(gadgets, { apiVersion: `${widgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { owner: 'ann', verbs: ['read'] } });
  assert.equal(ok.status, 201, ok.text);
  const bad = await s.client.post(gadgets, { apiVersion: `${widgetGroup}/v1`, kind: 'Gadget', metadata: { name: 'g2' }, spec: { tier: 'platinum', verbs: ['read', 'fly', 'swim'] } });
  assertStatus(bad, 422, 'Invalid');
  assert.deepEqual(bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
    'spec: Invalid value: "object": tier must be basic or gold',
    'spec: Invalid value: "object": verbs must be read, write or admin: read, fly, swim',
  ]);
  const moved = await s.client.put(`${gadgets}/g1`, { ...ok.json, spec: { owner: 'bob' } });
  assertStatus(moved, 422, 'Invalid');
  assert.equal(moved.json.details.causes[0].message, 'Invalid value: "object": owner is immutable');
});

test('definitions are refused naming the place: a misplaced marker, a rule over budget, a library upstream 1.32 lacks', async () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['marker inside allOf', { type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, allOf: [{ 'x-kubernetes-list-type': 'set' }] } } },
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].allOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural'],
    ['rule over budget', { type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(x, self.l.all(y, x.contains(y)))' }] },
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x'],
    ['semver, from 1.33', { type: 'object', properties: { v: { type: 'string', 'x-kubernetes-validations': [{ rule: 'isSemver(self)' }] } } },
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[v].x-kubernetes-validations[0].rule: Invalid value: {\"rule\":\"isSemver(self)\"}: compilation failed: ERROR: <input>: undeclared reference to 'isSemver' (in container '')"],
  ];
  for (const [what, spec, message] of cases) {
    const crd = gadgetCrd(spec);
    crd.metadata.name = `refused.${widgetGroup}`;
    crd.spec.names = { plural: 'refused', singular: 'refused', kind: 'Refused' };
    const r = await s.client.post(crdPath, crd);
    assertStatus(r, 422, 'Invalid');
    assert.ok(r.json.message.includes(message), `${what}: ${r.json.message}`);
  }
});

test('rules see schema-typed values: timestamps, durations, sets and list-maps compared regardless of order, the format library', async () => {
  const crd = widgetCrd({}, 'timers', 'Timer');
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = {
    type: 'object',
    'x-kubernetes-validations': [
      { rule: 'self.end > self.start', message: 'end must be after start' },
      { rule: "self.ttl <= duration('24h')", messageExpression: "'ttl %s is over a day'.format([self.ttl])" },
      { rule: 'oldSelf.zones == self.zones', message: 'zones may be reordered, not changed' },
      { rule: "!format.dns1123Label().validate(self.host).hasValue()", messageExpression: "'host: ' + format.named('dns1123Label').value().validate(self.host).value()[0]" },
    ],
    properties: {
      start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' }, ttl: { type: 'string', format: 'duration' },
      host: { type: 'string', maxLength: 63 },
      zones: { type: 'array', maxItems: 5, 'x-kubernetes-list-type': 'set', items: { type: 'string', maxLength: 10 } },
    },
  };
  const made = await s.client.post(crdPath, crd);
  assert.equal(made.status, 201, made.text);
  const timers = `/apis/${widgetGroup}/v1/namespaces/default/timers`;
  await eventually('timers are served', async () => (await s.client.get(timers)).status === 200);

  const spec = { start: '2024-01-01T10:00:00Z', end: '2024-01-01T12:00:00+01:00', ttl: '90m', host: 'web', zones: ['a', 'b'] };
  const ok = await s.client.post(timers, { apiVersion: `${widgetGroup}/v1`, kind: 'Timer', metadata: { name: 't1' }, spec });
  assert.equal(ok.status, 201, ok.text);
  const bad = await s.client.post(timers, { apiVersion: `${widgetGroup}/v1`, kind: 'Timer', metadata: { name: 't2' },
    spec: { ...spec, end: '2024-01-01T10:30:00+01:00', ttl: '25h', host: 'Web_1' } });
  assertStatus(bad, 422, 'Invalid');
  assert.deepEqual(bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
    'spec: Invalid value: "object": end must be after start',
    'spec: Invalid value: "object": ttl 90000s is over a day',
    "spec: Invalid value: \"object\": host: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
  const reordered = await s.client.put(`${timers}/t1`, { ...ok.json, spec: { ...spec, zones: ['b', 'a'] } });
  assert.equal(reordered.status, 200, reordered.text);
  const changed = await s.client.put(`${timers}/t1`, { ...reordered.json, spec: { ...spec, zones: ['b', 'c'] } });
  assertStatus(changed, 422, 'Invalid');
  assert.equal(changed.json.details.causes[0].message, 'Invalid value: "object": zones may be reordered, not changed');
});
