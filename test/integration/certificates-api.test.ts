// The CertificateSigningRequest kind over HTTPS: validation as upstream, the
// requester recorded by the server and immutable, what the object, `approval`
// and `status` may each change, and kubectl get/describe. No signer runs here.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { startTestServer, TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { csrObject, opensslRequest } from '../support/csr.js';

const base = `/apis/${vocabulary.certificatesGroup}/v1/certificatesigningrequests`;
const clientSigner = vocabulary.apiserverClientSigner;
const clientUsages = ['digital signature', 'key encipherment', 'client auth'];

function causes(r: { json: any }): string[] {
  return (r.json.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);
}

describe('CertificateSigningRequest API', () => {
  let s: TestServer;
  const jane = opensslRequest({ subject: '/O=dev/CN=jane' });

  before(async () => {
    s = await startTestServer({ controllers: ['-csrsigning', '-csrapproving', '-csrcleaner', '*'] });
  });
  after(async () => {
    await s.close();
  });

  test('a create records the requester, whatever the client sent, and starts with no status', async () => {
    const body = csrObject('who', jane.request, clientSigner, clientUsages, { username: 'mallory', groups: ['system:masters'], uid: 'x', extra: { a: ['b'] } });
    (body as any).status = { conditions: [{ type: 'Approved', status: 'True' }] };
    const r = await s.client.post(base, body);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.username, 'admin');
    assert.ok(r.json.spec.groups.includes('system:masters') && r.json.spec.groups.includes('system:authenticated'));
    assert.equal(r.json.spec.uid, undefined);
    assert.equal(r.json.spec.extra, undefined);
    assert.equal(r.json.status?.conditions, undefined);
  });

  test('the requester\'s uid, groups and extra are recorded as authentication gave them', async () => {
    const headers = { 'Impersonate-User': 'amy', 'Impersonate-Uid': 'u-1', 'Impersonate-Group': 'system:masters', 'Impersonate-Extra-__proto__': 'p', 'Impersonate-Extra-scopes': 'read' };
    const r = await s.client.post(base, csrObject('amy', jane.request, clientSigner, clientUsages), headers);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.username, 'amy');
    assert.equal(r.json.spec.uid, 'u-1');
    assert.deepEqual(r.json.spec.groups, ['system:masters', 'system:authenticated']);
    assert.deepEqual(JSON.parse(JSON.stringify(r.json.spec.extra)), JSON.parse('{"__proto__":["p"],"scopes":["read"]}'));
  });

  test('the spec never changes on update: requester fields and the request stay as stored', async () => {
    const current = (await s.client.get(`${base}/who`)).json;
    const changed = { ...current, spec: { ...current.spec, username: 'mallory', groups: ['x'], usages: ['server auth'] }, metadata: { ...current.metadata, labels: { a: 'b' } } };
    const r = await s.client.put(`${base}/who`, changed);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.spec.username, 'admin');
    assert.deepEqual(r.json.spec.usages, clientUsages);
    assert.deepEqual(r.json.metadata.labels, { a: 'b' });
  });

  test('validation: request, usages, signer name, expiration, as upstream', async () => {
    const bad = async (name: string, spec: Record<string, unknown>, expected: string[]) => {
      const body = csrObject(name, jane.request, clientSigner, clientUsages);
      Object.assign(body.spec as object, spec);
      for (const [k, v] of Object.entries(spec)) if (v === undefined) delete (body.spec as any)[k];
      const r = await s.client.post(base, body);
      assertStatus(r, 422, 'Invalid');
      assert.deepEqual(causes(r), expected, r.text);
    };
    await bad('no-request', { request: Buffer.from('hello').toString('base64') }, ['spec.request: Invalid value: "aGVsbG8=": PEM block type must be CERTIFICATE REQUEST']);
    const tampered = jane.request.replace(/\n([A-Za-z0-9+/]{20})/, (_m, chars: string) => `\n${chars.slice(0, 19)}${chars[19] === 'A' ? 'B' : 'A'}`);
    const r = await s.client.post(base, csrObject('tampered', tampered, clientSigner, clientUsages));
    assertStatus(r, 422, 'Invalid');
    assert.match(causes(r)[0]!, /^spec\.request: Invalid value: /);
    await bad('no-usages', { usages: undefined }, ['spec.usages: Required value']);
    await bad('unknown-usage', { usages: ['client auth', 'flying'] }, [`spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"`]);
    await bad('dup-usage', { usages: ['client auth', 'client auth'] }, ['spec.usages[1]: Duplicate value: "client auth"']);
    await bad('no-signer', { signerName: undefined }, ['spec.signerName: Required value']);
    await bad('flat-signer', { signerName: 'example' }, ["spec.signerName: Invalid value: \"example\": must be a fully qualified domain and path of the form 'example.com/signer-name'"]);
    await bad('short-domain', { signerName: 'example/x' }, ['spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots']);
    await bad('legacy', { signerName: vocabulary.legacyUnknownSigner }, [`spec.signerName: Invalid value: "${vocabulary.legacyUnknownSigner}": the legacy signerName is not allowed via this API version`]);
    await bad('short-life', { expirationSeconds: 599 }, ['spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)']);
    const ok = await s.client.post(base, csrObject('ten-minutes', jane.request, 'example.com/my-signer', ['client auth'], { expirationSeconds: 600 }));
    assert.equal(ok.status, 201, ok.text);
  });

  test('approval writes the conditions only: timestamps filled, duplicates and missing status refused', async () => {
    const current = (await s.client.get(`${base}/who`)).json;
    const withConditions = (conditions: unknown[]) => ({ ...current, status: { conditions }, spec: { ...current.spec, username: 'mallory' } });
    let r = await s.client.put(`${base}/who/approval`, withConditions([{ type: 'Approved', status: 'True' }, { type: 'Approved', status: 'True' }]));
    assertStatus(r, 422, 'Invalid');
    assert.deepEqual(causes(r), ['status.conditions[1].type: Duplicate value: "Approved"']);
    r = await s.client.put(`${base}/who/approval`, withConditions([{ type: 'Approved' }]));
    assertStatus(r, 422, 'Invalid');
    assert.deepEqual(causes(r), ['status.conditions[0].status: Required value']);
    r = await s.client.put(`${base}/who/approval`, withConditions([{ type: 'Approved', status: 'False' }]));
    assertStatus(r, 422, 'Invalid');
    assert.deepEqual(causes(r), ['status.conditions[0].status: Unsupported value: "False": supported values: "True"']);
    r = await s.client.put(`${base}/who/approval`, withConditions([{ type: 'Approved', status: 'True', reason: 'Looks fine' }]));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.spec.username, 'admin');
    const [approved] = r.json.status.conditions;
    assert.equal(approved.reason, 'Looks fine');
    assert.ok(approved.lastUpdateTime && approved.lastTransitionTime);
    r = await s.client.put(`${base}/who/approval`, { ...r.json, status: { conditions: [...r.json.status.conditions, { type: 'Denied', status: 'True' }] } });
    assertStatus(r, 422, 'Invalid');
    assert.deepEqual(causes(r), ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']);
    const latest = (await s.client.get(`${base}/who`)).json;
    r = await s.client.put(`${base}/who/approval`, { ...latest, status: { conditions: [] } });
    assertStatus(r, 422, 'Invalid');
    assert.deepEqual(causes(r), ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"']);
  });

  test('the object and status keep Approved/Denied as stored; status.certificate holds only PEM CERTIFICATE blocks', async () => {
    let r = await s.client.post(base, csrObject('plain', jane.request, clientSigner, clientUsages));
    assert.equal(r.status, 201, r.text);
    // Through the object: status is not written at all.
    r = await s.client.put(`${base}/plain`, { ...r.json, status: { conditions: [{ type: 'Approved', status: 'True' }] } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status?.conditions, undefined);
    // Through status: Approved is dropped, other conditions stay.
    r = await s.client.put(`${base}/plain/status`, { ...r.json, status: { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Checked', status: 'False' }] } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.status.conditions.map((c: any) => c.type), ['Checked']);
    const certificate = (text: string) => ({ ...r.json, status: { ...r.json.status, certificate: Buffer.from(text).toString('base64') } });
    let bad = await s.client.put(`${base}/plain/status`, certificate('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'));
    assertStatus(bad, 422, 'Invalid');
    assert.deepEqual(causes(bad), ['status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"']);
    bad = await s.client.put(`${base}/plain/status`, certificate('no pem here'));
    assert.deepEqual(causes(bad), ['status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block']);
    bad = await s.client.put(`${base}/plain`, certificate('no pem here'));
    assert.equal(bad.status, 200, 'the object keeps status as stored');
    assert.equal(bad.json.status.certificate, undefined);
  });

  test('kubectl get shows upstream columns; describe and the csr short name work', async () => {
    const got = await s.kubectl(['get', 'csr']);
    assert.equal(got.code, 0, got.stderr);
    const [header, ...rows] = got.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s{2,}/), ['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    const row = (name: string) => rows.find((l) => l.startsWith(`${name} `))!.split(/\s{2,}/);
    assert.deepEqual(row('who').slice(2), [clientSigner, 'admin', '<none>', 'Approved']);
    assert.deepEqual(row('plain').slice(2), [clientSigner, 'admin', '<none>', 'Pending']);
    assert.deepEqual(row('ten-minutes').slice(2), ['example.com/my-signer', 'admin', '10m', 'Pending']);
    const described = await s.kubectl(['describe', 'csr', 'who']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /Requesting User:\s+admin/);
    assert.match(described.stdout, /Signer:\s+/);
    assert.match(described.stdout, /Status:\s+Approved/);
    assert.match(described.stdout, /Organization:\s+dev/);
    const explained = await s.kubectl(['explain', 'csr.spec.signerName']);
    assert.equal(explained.code, 0, explained.stderr);
    assert.match(explained.stdout, /FIELD: signerName <string>/);
  });
});
