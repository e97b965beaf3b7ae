// The review a webhook gets and the checks of its answer; the credentials
// picked from the kubeconfig of a WebhookAdmissionConfiguration.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidResponse, reviewBody, reviewVersionFor, verifyResponse } from '../../../src/admission/webhook/review.js';
import { CredentialResolver } from '../../../src/admission/webhook/credentials.js';
import { WebhookSource } from '../../../src/admission/webhook/source.js';
import { AdmissionConfigError } from '../../../src/admission/plugin-names.js';
import { configMaps } from '../../../src/api/core/v1/index.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { admissionRequest } from '../../support/admission.js';
import { tempDir } from '../../support/server.js';

const reviewVersion = `${vocabulary.admissionGroup}/v1`;

describe('the review sent', () => {
  test('the first version the webhook lists that the server speaks', () => {
    assert.equal(reviewVersionFor(['v2', 'v1beta1', 'v1']), 'v1beta1');
    assert.equal(reviewVersionFor(['v3']), undefined);
  });

  test('every field of the request', () => {
    const hook = new WebhookSource({ list: () => [{ metadata: { name: 'c' }, webhooks: [{ name: 'w.example.com' }] }], onChange: () => {} }).webhooks()[0]!;
    const r = admissionRequest('UPDATE', configMaps, 'cm', { namespace: 'prod', subresource: 'status', dryRun: true });
    r.user = { username: 'alice', uid: '42', groups: ['devs'], extra: { scopes: ['a'] } };
    const invocation = { webhook: hook, resource: { group: '', version: 'v1', resource: 'configmaps' }, kind: { group: '', version: 'v1', kind: 'ConfigMap' } };
    const body = JSON.parse(reviewBody('v1', 'the-uid', r, invocation, r.object).toString());
    assert.equal(body.apiVersion, reviewVersion);
    assert.equal(body.kind, 'AdmissionReview');
    assert.deepEqual(body.request, {
      uid: 'the-uid',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      subResource: 'status',
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      requestSubResource: 'status',
      name: 'cm', namespace: 'prod', operation: 'UPDATE',
      userInfo: { username: 'alice', uid: '42', groups: ['devs'], extra: { scopes: ['a'] } },
      object: r.object, oldObject: r.oldObject, dryRun: true,
      options: { kind: 'UpdateOptions', apiVersion: `${vocabulary.metaGroup}/v1`, dryRun: ['All'] },
    });
    const deletion = admissionRequest('DELETE', configMaps, 'cm', { namespace: 'prod' });
    const deleted = JSON.parse(reviewBody('v1beta1', 'u', deletion, invocation, undefined).toString());
    assert.equal(deleted.apiVersion, `${vocabulary.admissionGroup}/v1beta1`);
    assert.equal(deleted.request.object, null);
    assert.deepEqual(deleted.request.oldObject, deletion.oldObject);
  });
});

describe('the answer', () => {
  const ok = (response: Record<string, unknown>, apiVersion = reviewVersion) => ({ apiVersion, kind: 'AdmissionReview', response: { uid: 'u1', allowed: true, ...response } });
  const refused = (version: 'v1' | 'v1beta1', mutating: boolean, body: unknown, message: string) => {
    assert.throws(() => verifyResponse(version, 'u1', mutating, body), (e: Error) => e instanceof InvalidResponse && e.message === message);
  };

  test('v1: the uid must come back, in a v1 AdmissionReview (our group name or upstream\'s), with allowed', () => {
    refused('v1', false, {}, `webhook response: expected ${reviewVersion}, Kind=AdmissionReview, got , Kind=`);
    refused('v1', false, { apiVersion: reviewVersion, kind: 'AdmissionReview' }, 'webhook response was absent');
    refused('v1', false, { ...ok({}), kind: 'Status' }, `webhook response: expected ${reviewVersion}, Kind=AdmissionReview, got ${reviewVersion}, Kind=Status`);
    assert.equal(verifyResponse('v1', 'u1', false, ok({}, 'admission.k8s.io/v1')).allowed, true);
    refused('v1', false, ok({ uid: 'other' }), 'expected response.uid="u1", got "other"');
    refused('v1', false, ok({}, 'v1'), `webhook response: expected ${reviewVersion}, Kind=AdmissionReview, got v1, Kind=AdmissionReview`);
    refused('v1', false, ok({ allowed: undefined }), 'response.allowed is required and must be a boolean');
    refused('v1', false, ok({ allowed: 'yes' }), 'response.allowed is required and must be a boolean');
  });

  test('patches: mutating webhooks send patch and patchType together; validating ones send neither', () => {
    const patch = Buffer.from('[]').toString('base64');
    refused('v1', true, ok({ patch }), 'webhook returned response.patch but not response.patchType');
    refused('v1', true, ok({ patchType: 'JSONPatch' }), 'webhook returned response.patchType but not response.patch');
    refused('v1', true, ok({ patch: '%%%', patchType: 'JSONPatch' }), 'response.patch must be base64 text');
    refused('v1', false, ok({ patch }), 'validating webhook may not return response.patch');
    refused('v1', false, ok({ patchType: 'JSONPatch' }), 'validating webhook may not return response.patchType');
    const r = verifyResponse('v1', 'u1', true, ok({ patch, patchType: 'JSONPatch', warnings: ['careful', 3], auditAnnotations: { a: 'b', n: 1 } }));
    assert.equal(r.patch?.toString(), '[]');
    assert.deepEqual(r.warnings, ['careful']);
    assert.deepEqual(r.auditAnnotations, [['a', 'b']]);
  });

  test('v1beta1 answers are not checked for uid, must be a v1beta1 AdmissionReview, and a patch is a JSON patch', () => {
    const beta = `${vocabulary.admissionGroup}/v1beta1`;
    refused('v1beta1', false, { response: { uid: 'u1', allowed: true } }, `webhook response: expected ${beta}, Kind=AdmissionReview, got , Kind=`);
    refused('v1beta1', false, { apiVersion: 'v1', kind: 'Status', response: { uid: 'u1', allowed: true } }, `webhook response: expected ${beta}, Kind=AdmissionReview, got v1, Kind=Status`);
    const r = verifyResponse('v1beta1', 'u1', true, { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: { uid: 'x', allowed: false, patch: Buffer.from('[]').toString('base64'), status: { code: 418, message: 'tea', details: { causes: [{ field: 'a', bogus: 1 }] } } } });
    assert.equal(r.allowed, false);
    assert.equal(r.patchType, 'JSONPatch');
    assert.deepEqual(r.status, { code: 418, message: 'tea', reason: undefined, details: { causes: [{ field: 'a' }] } });
  });
});

describe('credentials from a kubeconfig', () => {
  const dir = tempDir('plat-webhook-creds-');
  after(() => rmSync(dir, { recursive: true, force: true }));
  const configVersion = `${vocabulary.apiserverConfigGroup}/v1`;
  writeFileSync(join(dir, 'token.txt'), 'from-file\n');
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  writeFileSync(kubeconfig, [
    'apiVersion: v1', 'kind: Config', 'current-context: fallback',
    'contexts:', '- name: fallback', '  context: {user: default-user}',
    'users:',
    '- name: hooks.example.com:8443', '  user: {token: exact}',
    '- name: "*.example.com"', '  user: {tokenFile: token.txt}',
    '- name: plain.example.org', '  user: {username: u, password: p}',
    '- name: default-user', '  user: {token: current}',
  ].join('\n'));
  const load = () => CredentialResolver.load({ apiVersion: configVersion, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig }, 'ValidatingAdmissionWebhook');

  test('exact host:port, then *.domain suffixes, then without :443, then the current context', async () => {
    const r = await load();
    assert.deepEqual(r.for('hooks.example.com:8443'), { token: 'exact' });
    assert.deepEqual(r.for('other.example.com:443'), { token: 'from-file' }, 'relative files are read next to the kubeconfig');
    assert.deepEqual(r.for('other.example.com:9000'), { token: 'current' }, 'as upstream, a wildcard entry has no port but 443');
    assert.deepEqual(r.for('plain.example.org:443'), { username: 'u', password: 'p' });
    assert.deepEqual(r.for('elsewhere.test'), { token: 'current' });
  });

  test('no configuration, no credentials; a relative kubeConfigFile or a missing file stops the start', async () => {
    assert.equal((await CredentialResolver.load(undefined, 'x')).for('a:1'), undefined);
    await assert.rejects(CredentialResolver.load({ apiVersion: configVersion, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: 'rel.yaml' }, 'MutatingAdmissionWebhook'), (e: Error) => {
      assert.ok(e instanceof AdmissionConfigError);
      assert.equal(e.message, 'the configuration of MutatingAdmissionWebhook: kubeConfigFile: Invalid value: "rel.yaml": must be an absolute file path');
      return true;
    });
    await assert.rejects(CredentialResolver.load({ apiVersion: configVersion, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: join(dir, 'none.yaml') }, 'X'), /unable to read the kubeconfig of X/);
    await assert.rejects(CredentialResolver.load({ apiVersion: 'v1', kind: 'Config' }, 'X'), /must be a WebhookAdmissionConfiguration/);
  });
});
