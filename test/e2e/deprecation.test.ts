// The three signals of a deprecated version (the spec's "Deprecation
// rules"), for a kind this test declares at run time with a deprecated
// v1beta1: the real kubectl prints the Warning header in upstream's wording,
// the audit log's events carry the deprecated and removed-release
// annotations, and /metrics has apiserver_requested_deprecated_apis set to 1.
// The current version signals nothing.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { parsePrometheusText, samples, value } from '../support/prometheus.js';
import { gadgetGroup, leveledGadgets } from '../support/gadgets.js';
import { productKey, vocabulary } from '../../src/machinery/vocabulary.js';

const warning = `${gadgetGroup}/v1beta1 Gadget is deprecated in v1.30+, unavailable in v1.35+; use ${gadgetGroup}/v1 Gadget`;

let s: TestServer;
let logPath: string;

before(async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: ${gadgetGroup}}]\n`);
  logPath = join(dir, 'audit.log');
  s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: logPath });
  s.registry.addKind(leveledGadgets);
});
after(async () => { await s.close(); });

const auditEvents = (): any[] => (existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

test('kubectl prints the deprecation warning of a deprecated version, and nothing for the current one', async () => {
  const manifest = JSON.stringify({ apiVersion: `${gadgetGroup}/v1beta1`, kind: 'Gadget', metadata: { name: 'old', namespace: 'default' }, spec: { color: 'red' } });
  const created = await s.kubectl(['create', '-f', '-'], manifest);
  assert.equal(created.code, 0, created.stderr);
  assert.ok(created.stderr.includes(`Warning: ${warning}`), created.stderr);
  const got = await s.kubectl(['get', `gadgets.v1beta1.${gadgetGroup}`, 'old', '-o', 'name']);
  assert.equal(got.code, 0, got.stderr);
  assert.ok(got.stderr.includes(`Warning: ${warning}`), got.stderr);
  const current = await s.kubectl(['get', `gadgets.v1.${gadgetGroup}`, 'old', '-o', 'name']);
  assert.equal(current.code, 0, current.stderr);
  assert.equal(current.stderr, '');
});

test('every answer at the deprecated version carries the Warning, an error too, before the request\'s own warnings', async () => {
  const missing = await s.client.get(`/apis/${gadgetGroup}/v1beta1/namespaces/default/gadgets/none`);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.headers.warning, `299 - ${JSON.stringify(warning)}`);
  const list = await s.client.get(`/apis/${gadgetGroup}/v1beta1/namespaces/default/gadgets`);
  assert.equal(list.status, 200);
  assert.deepEqual(list.headers.warning, `299 - ${JSON.stringify(warning)}`);
  // A field the schema does not know gives a warning of the request's own, after the deprecation's.
  const created = await s.client.send('POST', `/apis/${gadgetGroup}/v1beta1/namespaces/default/gadgets?fieldValidation=Warn`, {
    body: { apiVersion: `${gadgetGroup}/v1beta1`, kind: 'Gadget', metadata: { name: 'warned' }, spec: { shade: 'dark' } },
  });
  assert.equal(created.status, 201, created.text);
  const headerText = String(created.headers.warning);
  assert.ok(headerText.startsWith(`299 - ${JSON.stringify(warning)}`) && headerText.includes('shade'), headerText);
  assert.equal((await s.client.get(`/apis/${gadgetGroup}/v1/namespaces/default/gadgets`)).headers.warning, undefined);
});

test('the audit events of a deprecated request carry the deprecated and removed-release annotations', async () => {
  const r = await s.client.get(`/apis/${gadgetGroup}/v1beta1/namespaces/default/gadgets`);
  const id = r.headers['audit-id'];
  const event = await eventually('the audit event', async () => auditEvents().find((e) => e.auditID === id && e.stage === 'ResponseComplete'));
  assert.equal(event.annotations[productKey('deprecated')], 'true');
  assert.equal(event.annotations[productKey('removed-release')], '1.35');
  const current = await s.client.get(`/apis/${gadgetGroup}/v1/namespaces/default/gadgets`);
  const plain = await eventually('the audit event', async () => auditEvents().find((e) => e.auditID === current.headers['audit-id'] && e.stage === 'ResponseComplete'));
  assert.equal(plain.annotations?.[productKey('deprecated')], undefined);
});

test('/metrics has apiserver_requested_deprecated_apis set to 1 for the resources asked', async () => {
  await s.client.get(`/apis/${gadgetGroup}/v1beta1/namespaces/default/gadgets/old/status`);
  const families = parsePrometheusText((await s.client.get('/metrics')).text);
  const labels = { group: gadgetGroup, version: 'v1beta1', resource: 'gadgets', removed_release: '1.35' };
  assert.equal(value(families, 'apiserver_requested_deprecated_apis', { ...labels, subresource: '' }), 1);
  assert.equal(value(families, 'apiserver_requested_deprecated_apis', { ...labels, subresource: 'status' }), 1);
  assert.deepEqual(samples(families, 'apiserver_requested_deprecated_apis', { version: 'v1' }), []);
});
