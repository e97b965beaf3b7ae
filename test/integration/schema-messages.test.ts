// A custom resource refused by its schema gets upstream's validator's
// errors end to end: Gateway API's real Gateway definition, whose addresses
// are a oneOf of an IPAddress (its value an anyOf of the ipv4 and ipv6
// formats) and any other type, answers a Gateway with an address that is no
// IP with the value's path and format, not only the oneOf's complaint.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { assertStatus } from '../support/hostile.js';
import { crdPath } from '../support/crds.js';

// dist/test/integration → the repository's own test/fixtures (YAML is not compiled).
const file = fileURLToPath(new URL('../../../test/fixtures/operators/gateway-api/standard/gateway.networking.k8s.io_gateways.yaml', import.meta.url));
const gateways = '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  const made = await s.client.post(crdPath, parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS());
  assert.equal(made.status, 201, made.text);
  await eventually('gateways served', async () => (await s.client.get(gateways)).status === 200);
});
after(async () => { await s.close(); });

const gateway = (name: string, address: Record<string, string>) => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name },
  spec: { gatewayClassName: 'example', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], addresses: [address] },
});

test('a Gateway whose IPAddress is not an IP is refused with the value, its format and the combinators it failed', async () => {
  const r = await s.client.post(gateways, gateway('bad', { type: 'IPAddress', value: 'not-an-ip' }));
  assertStatus(r, 422, 'Invalid');
  assert.equal(r.json.message, 'Gateway.gateway.networking.k8s.io "bad" is invalid: ['
    + '<nil>: Invalid value: "": "spec.addresses[0]" must validate one and only one schema (oneOf). Found none valid, '
    + '<nil>: Invalid value: "": "spec.addresses[0].value" must validate at least one schema (anyOf), '
    + 'spec.addresses[0].value: Invalid value: "not-an-ip": spec.addresses[0].value in body must be of type ipv4: "not-an-ip", '
    + '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]');
  assert.deepEqual(r.json.details.causes.map((c: { reason: string; field: string }) => `${c.reason} ${c.field}`), [
    'FieldValueInvalid <nil>', 'FieldValueInvalid <nil>', 'FieldValueTypeInvalid spec.addresses[0].value', 'FieldValueInvalid <nil>',
  ]);
});

test('addresses that fit their schema are stored: an IPv6 address and a hostname', async () => {
  for (const [name, address] of [['v6', { type: 'IPAddress', value: '2001:db8::1' }], ['host', { type: 'Hostname', value: 'gw.example.com' }]] as const) {
    const r = await s.client.post(gateways, gateway(name, address));
    assert.equal(r.status, 201, r.text);
  }
});
