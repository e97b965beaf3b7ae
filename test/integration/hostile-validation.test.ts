// Hostile objects against validation, on a real server: instances whose
// invalid items each fail a huge enum (the answer once repeated the whole
// enum per item: hundreds of megabytes, a frozen loop, then a 500), and a
// Service with an enumerated field upstream refuses. Each answer is a 422 of
// bounded size, /readyz answers within 1 s while it is computed, and the
// server is intact afterwards.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { assertReadyWhile, assertStatus, Canary } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { crdPath } from '../support/crds.js';

const group = 'enums.example.com';
const collection = `/apis/${group}/v1/namespaces/default/palettes`;
/** Far above the bounded answer (about 1 MB), far below what the unbounded one was (137 MB and more). */
const maxAnswerBytes = 2 * 1024 * 1024;
let s: TestServer;
let canary: Canary;

const values = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

before(async () => {
  s = await startTestServer();
  canary = await Canary.plant(s.client);
  const enumList = (n: number, prefix: string) => ({ type: 'array', items: { type: 'string', enum: values(n, prefix) } });
  const created = await s.client.post(crdPath, {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `palettes.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { plural: 'palettes', singular: 'palette', kind: 'Palette' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { twenty: enumList(20_000, 't'), fifty: enumList(50_000, 'f') } } } } },
      }],
    },
  });
  assert.equal(created.status, 201, created.text.slice(0, 500));
  await eventually('palettes served', async () => (await s.client.get(collection)).status === 200);
});
after(async () => { await s?.close(); });

/** Posts `spec` as a Palette while /readyz is asked (assertReadyWhile). */
async function postWhileReady(name: string, spec: Record<string, unknown>) {
  return assertReadyWhile(s.client, () => s.client.post(collection, { apiVersion: `${group}/v1`, kind: 'Palette', metadata: { name }, spec }), 'the hostile request runs');
}

function assertBoundedInvalid(r: Awaited<ReturnType<typeof postWhileReady>>, name: string, field: string): void {
  assert.ok(r.text.length < maxAnswerBytes, `the answer holds ${r.text.length} bytes`);
  assertStatus(r, 422, 'Invalid');
  assert.ok(r.json.message.startsWith(`Palette.${group} "${name}" is invalid: [spec.${field}[0]: Unsupported value: "x0": supported values: "`), r.json.message.slice(0, 200));
  const causes: { field: string; message: string; reason: string }[] = r.json.details.causes;
  assert.ok(causes.length < 300, `${causes.length} causes: the list is cut`);
  assert.match(causes.at(-1)!.message, /too many errors, only the first \d+ are listed/);
  assert.deepEqual(causes[1]!.field, `spec.${field}[1]`);
  assert.equal(causes[0]!.reason, 'FieldValueNotSupported');
  assert.match(causes[0]!.message, / \+ \d+ more\.\.\.$/);
  assert.equal(causes.at(-1)!.field, '<nil>');
}

test('300 invalid items of a 20,000-value enum: a bounded 422, the loop free', async () => {
  const r = await postWhileReady('twenty', { twenty: values(300, 'x') });
  assertBoundedInvalid(r, 'twenty', 'twenty');
  assert.equal((await s.client.get(`${collection}/twenty`)).status, 404);
  await canary.assertServerIntact();
});

test('1,500 invalid items of a 50,000-value enum: a bounded 422 (was a 500 "Invalid string length"), the loop free', async () => {
  const r = await postWhileReady('fifty', { fifty: values(1_500, 'x') });
  assertBoundedInvalid(r, 'fifty', 'fifty');
  assert.equal((await s.client.get(`${collection}/fifty`)).status, 404);
  await canary.assertServerIntact();
});

test('a Service with sessionAffinity Bogus: upstream\'s 422, nothing stored', async () => {
  const r = await s.client.post('/api/v1/namespaces/default/services', {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'bogus' },
    spec: { selector: { app: 'a' }, ports: [{ port: 80 }], sessionAffinity: 'Bogus' },
  });
  assertStatus(r, 422, 'Invalid', 'Service "bogus" is invalid: spec.sessionAffinity: Unsupported value: "Bogus": supported values: "ClientIP", "None"');
  assert.deepEqual(r.json.details, {
    name: 'bogus', kind: 'Service',
    causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Bogus": supported values: "ClientIP", "None"', field: 'spec.sessionAffinity' }],
  });
  assert.equal((await s.client.get('/api/v1/namespaces/default/services/bogus')).status, 404);
  // The cluster IP it was given on the way is free again: the same service, fixed, is created.
  const fixed = await s.client.post('/api/v1/namespaces/default/services', {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'bogus' }, spec: { selector: { app: 'a' }, ports: [{ port: 80 }], sessionAffinity: 'ClientIP' },
  });
  assert.equal(fixed.status, 201, fixed.text);
  await canary.assertServerIntact();
});
