// The two webhook plugins in a chain, against a real HTTPS webhook with a CA
// of its own: patches (applied, checked, defaulted, annotated), reinvocation,
// rejections, failure policies, dry runs, credentials and metrics.

import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AdmissionChain } from '../../../src/admission/chain.js';
import { AdmissionMetrics } from '../../../src/admission/metrics.js';
import { WebhookClient, webhookPlugin } from '../../../src/admission/webhook/index.js';
import type { AdmissionRequest } from '../../../src/admission/types.js';
import { configMaps } from '../../../src/api/core/v1/index.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { admissionRequest, rejection } from '../../support/admission.js';
import { clientCert } from '../../support/certs.js';
import { tempDir } from '../../support/server.js';
import { deny, patchWith, setLabel, startWebhookServer, type TestWebhookServer } from '../../support/webhook.js';

let hooks: TestWebhookServer;
const client = new WebhookClient();
const dir = tempDir('plat-webhook-plugins-');
const configs = { mutating: [] as KubeObject[], validating: [] as KubeObject[] };
const listeners: (() => void)[] = [];
const feed = (which: 'mutating' | 'validating') => ({ list: () => configs[which], onChange: (l: () => void) => { listeners.push(l); } });
const warnings: string[] = [];
let metricsRegistry: Registry;
let chain: AdmissionChain;

async function makeChain(config?: Record<string, unknown>): Promise<AdmissionChain> {
  metricsRegistry = new Registry();
  const metrics = new AdmissionMetrics(metricsRegistry);
  const deps = (which: 'mutating' | 'validating') => ({ feed: feed(which), getNamespace: async (name: string) => ({ metadata: { name } }), client, metrics, warn: (m: string) => warnings.push(m) });
  return new AdmissionChain([await webhookPlugin(true, config, deps('mutating')), await webhookPlugin(false, config, deps('validating'))], { metrics });
}

before(async () => {
  hooks = await startWebhookServer();
  chain = await makeChain();
});
after(async () => {
  client.close();
  await hooks.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  configs.mutating = [];
  configs.validating = [];
  hooks.calls.length = 0;
  warnings.length = 0;
  for (const l of listeners) l();
});

function webhook(name: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name, clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 5, ...extra,
  };
}

function use(which: 'mutating' | 'validating', configName: string, ...webhooks: Record<string, unknown>[]): void {
  configs[which] = [...configs[which], { metadata: { name: configName }, webhooks }];
  for (const l of listeners) l();
}

const create = (object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'prod' }, data: { a: 'b' } }): AdmissionRequest =>
  admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod', object });

async function admit(r: AdmissionRequest): Promise<AdmissionRequest> {
  await chain.mutate(r);
  await chain.validate(r);
  return r;
}

const annotation = (r: AdmissionRequest, key: string) => r.auditAnnotations?.get(key);

describe('mutating webhooks', () => {
  test('a JSON patch changes the object; the call and the patch are annotated; warnings and audit annotations are kept', async () => {
    hooks.on('/label', (review) => ({
      response: {
        uid: review.request.uid, allowed: true, patchType: 'JSONPatch', warnings: ['labelled it'], auditAnnotations: { why: 'policy' },
        patch: Buffer.from(JSON.stringify(setLabel(review.request.object, 'stamped', 'yes'))).toString('base64'),
      },
    }));
    use('mutating', 'cfg', webhook('label.example.com', '/label'));
    const r = await admit(create());
    assert.equal(r.object!.metadata!.labels.stamped, 'yes');
    assert.deepEqual(JSON.parse(annotation(r, `${vocabulary.mutationAnnotationPrefix}round_0_index_0`)!.value), { configuration: 'cfg', webhook: 'label.example.com', mutated: true });
    const patch = annotation(r, `${vocabulary.patchAnnotationPrefix}round_0_index_0`)!;
    assert.equal(patch.level, 'Request');
    assert.deepEqual(JSON.parse(patch.value), { configuration: 'cfg', webhook: 'label.example.com', patch: [{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }], patchType: 'JSONPatch' });
    assert.equal(annotation(r, 'label.example.com/why')?.value, 'policy');
    assert.deepEqual(r.warnings, ['labelled it']);
    const review = hooks.callsTo('/label')[0]!;
    assert.equal(review.query.get('timeout'), '5s');
    assert.equal(review.headers['content-type'], 'application/json');
  });

  test('an allowed call without a patch is annotated as not mutating', async () => {
    use('mutating', 'cfg', webhook('noop.example.com', '/noop'));
    const r = await admit(create());
    assert.deepEqual(JSON.parse(annotation(r, `${vocabulary.mutationAnnotationPrefix}round_0_index_0`)!.value), { configuration: 'cfg', webhook: 'noop.example.com', mutated: false });
    assert.equal(annotation(r, `${vocabulary.patchAnnotationPrefix}round_0_index_0`), undefined);
  });

  test('IfNeeded: a webhook is called again once a later webhook changed the object; otherwise once', async () => {
    hooks.on('/a', patchWith((review) => setLabel(review.request.object, 'a', '1')));
    hooks.on('/b', patchWith((review) => setLabel(review.request.object, 'b', '1')));
    use('mutating', 'a-first', webhook('a.example.com', '/a', { reinvocationPolicy: 'IfNeeded' }));
    use('mutating', 'b-second', webhook('b.example.com', '/b'));
    const r = await admit(create());
    assert.deepEqual(hooks.calls.map((c) => c.path), ['/a', '/b', '/a']);
    assert.deepEqual(hooks.callsTo('/a')[1]!.review.request.object.metadata.labels, { a: '1', b: '1' }, 'the second call sees the later change');
    assert.deepEqual(r.object!.metadata!.labels, { a: '1', b: '1' });
    assert.ok(annotation(r, `${vocabulary.mutationAnnotationPrefix}round_1_index_0`), 'the second round is annotated');

    hooks.calls.length = 0;
    configs.mutating = [];
    use('mutating', 'a-first', webhook('a.example.com', '/a', { reinvocationPolicy: 'IfNeeded' }));
    use('mutating', 'b-second', webhook('b.example.com', '/noop'));
    await admit(create());
    assert.deepEqual(hooks.calls.map((c) => c.path), ['/a', '/noop'], 'nothing changed after it: called once');
  });

  test('the patched object is read as the kind reads it: unknown fields dropped, defaults applied again', async () => {
    hooks.on('/extra', patchWith(() => [{ op: 'add', path: '/bogus', value: 1 }, { op: 'add', path: '/data/x', value: 'y' }]));
    use('mutating', 'cfg', webhook('extra.example.com', '/extra'));
    const r = await admit(create());
    assert.equal(r.object!.bogus, undefined);
    assert.equal(r.object!.data.x, 'y');
  });

  test('a patch that cannot apply, changes the kind or comes for a deletion is the server\'s 500', async () => {
    hooks.on('/failing', patchWith(() => [{ op: 'test', path: '/data/a', value: 'other' }]));
    use('mutating', 'cfg', webhook('failing.example.com', '/failing'));
    const failed = (await rejection(admit(create()))).toStatus();
    assert.equal(failed.code, 500);
    assert.match(failed.message!, /^Internal error occurred: /);

    configs.mutating = [];
    hooks.on('/rekind', patchWith(() => [{ op: 'replace', path: '/kind', value: 'Secret' }]));
    use('mutating', 'cfg', webhook('rekind.example.com', '/rekind'));
    assert.equal((await rejection(admit(create()))).toStatus().message, 'Internal error occurred: admission webhook "rekind.example.com" changed the object\'s apiVersion or kind to v1, Secret');

    configs.mutating = [];
    hooks.on('/del', patchWith(() => [{ op: 'add', path: '/x', value: 1 }]));
    use('mutating', 'cfg', webhook('del.example.com', '/del'));
    const deletion = admissionRequest('DELETE', configMaps, 'cm', { namespace: 'prod' });
    assert.equal((await rejection(admit(deletion))).toStatus().message, 'Internal error occurred: admission webhook "del.example.com" attempted to modify the object, which is not supported for this operation');
  });

  test('an undecodable patch is a calling error: 500 under Fail, ignored (and annotated) under Ignore', async () => {
    hooks.on('/garbage', (review) => ({ response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from('{"op":1}').toString('base64') } }));
    use('mutating', 'cfg', webhook('garbage.example.com', '/garbage'));
    const status = (await rejection(admit(create()))).toStatus();
    assert.equal(status.code, 500);
    assert.equal(status.reason, 'InternalError');
    assert.match(status.message!, /^Internal error occurred: failed calling webhook "garbage.example.com": received undecodable patch in webhook response: /);

    configs.mutating = [];
    use('mutating', 'cfg', webhook('garbage.example.com', '/garbage', { failurePolicy: 'Ignore' }));
    const r = await admit(create());
    assert.equal(annotation(r, `${vocabulary.mutationFailedOpenAnnotationPrefix}round_0_index_0`)?.value, 'garbage.example.com');
    assert.match(warnings.at(-1)!, /^Failed calling webhook, failing open garbage.example.com: /);
    assert.match(await metricsRegistry.metrics(), /apiserver_admission_webhook_fail_open_count\{name="garbage.example.com",type="admit"\} 1/);
  });
});

describe('validating webhooks', () => {
  test('all are called; the first rejection in configuration order is the answer, with its code, reason and message', async () => {
    hooks.on('/x', deny({ code: 418, message: 'x says no', reason: 'Teapot' }));
    hooks.on('/y', deny({ message: 'y says no' }));
    use('validating', 'cfg', webhook('x.example.com', '/x'), webhook('y.example.com', '/y'), webhook('z.example.com', '/z'));
    const e = await rejection(admit(create()));
    assert.deepEqual(e.toStatus(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 418, reason: 'Teapot',
      message: 'configmaps "cm" is forbidden: admission webhook "x.example.com" denied the request: x says no',
      details: { kind: 'configmaps', name: 'cm' },
    });
    assert.deepEqual(hooks.calls.map((c) => c.path).sort(), ['/x', '/y', '/z']);
    const text = await metricsRegistry.metrics();
    assert.match(text, /apiserver_admission_webhook_rejection_count\{name="x.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="418"\} 1/);
    assert.match(text, /apiserver_admission_webhook_rejection_count\{name="y.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"\} 1/);
    assert.match(text, /apiserver_admission_webhook_admission_duration_seconds_count\{name="z.example.com",type="validating",operation="CREATE",rejected="false"\} 1/);
  });

  test('a rejection without a status is 403 without explanation; a code of 600 or more answers as sent and is counted capped at 600', async () => {
    hooks.on('/bare', deny());
    use('validating', 'cfg', webhook('bare.example.com', '/bare'));
    assert.equal((await rejection(admit(create()))).toStatus().message, 'configmaps "cm" is forbidden: admission webhook "bare.example.com" denied the request without explanation');
    configs.validating = [];
    hooks.on('/odd', deny({ code: 799 }));
    use('validating', 'cfg', webhook('odd.example.com', '/odd'));
    assert.equal((await rejection(admit(create()))).code, 799);
    assert.match(await metricsRegistry.metrics(), /rejection_count\{name="odd.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="600"\} 1/);
  });

  test('a validating webhook may not patch', async () => {
    hooks.on('/patching', patchWith(() => []));
    use('validating', 'cfg', webhook('patching.example.com', '/patching'));
    assert.equal((await rejection(admit(create()))).toStatus().message,
      'Internal error occurred: failed calling webhook "patching.example.com": received invalid webhook response: validating webhook may not return response.patch');
  });

  test('an error answer, a service reference and a wrong CA are calling errors', async () => {
    hooks.on('/broken', () => ({ status: 500, raw: 'oops' }));
    use('validating', 'cfg', webhook('broken.example.com', '/broken'));
    assert.equal((await rejection(admit(create()))).toStatus().message,
      'Internal error occurred: failed calling webhook "broken.example.com": failed to call webhook: the server responded with the status code 500 ("oops")');
    configs.validating = [];
    use('validating', 'cfg', { ...webhook('svc.example.com', '/'), clientConfig: { service: { namespace: 'hooks', name: 'checker', port: 443 } } });
    assert.equal((await rejection(admit(create()))).toStatus().message,
      'Internal error occurred: failed calling webhook "svc.example.com": could not get REST client: cannot resolve checker.hooks.svc: this server does not serve Services yet; give the webhook a clientConfig.url instead');
    configs.validating = [];
    use('validating', 'cfg', { ...webhook('untrusted.example.com', '/'), clientConfig: { url: hooks.url('/') } });
    assert.match((await rejection(admit(create()))).toStatus().message!, /failed calling webhook "untrusted.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/\?timeout=5s": /);
  });
});

describe('dry runs', () => {
  test('a webhook with side effects refuses a dry run with 400 and is not called; NoneOnDryRun ones are told', async () => {
    use('validating', 'cfg', webhook('some.example.com', '/some', { sideEffects: 'Some' }));
    const status = (await rejection(admit(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod', dryRun: true })))).toStatus();
    assert.equal(status.code, 400);
    assert.equal(status.message, 'admission webhook "some.example.com" does not support dry run');
    assert.equal(hooks.calls.length, 0);
    configs.validating = [];
    use('validating', 'cfg', webhook('careful.example.com', '/careful', { sideEffects: 'NoneOnDryRun' }));
    await admit(admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod', dryRun: true }));
    assert.equal(hooks.callsTo('/careful')[0]!.review.request.dryRun, true);
  });
});

test('credentials from the plugin\'s kubeconfig: a client certificate and a token for the webhook\'s host', async () => {
  const cert = await clientCert(hooks.ca, 'apiserver-for-webhooks');
  const kubeconfig = join(dir, 'webhooks.kubeconfig');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    users: [{ name: `127.0.0.1:${hooks.port}`, user: { token: 'secret-token', 'client-certificate-data': b64(cert.cert), 'client-key-data': b64(cert.key) } }],
  }));
  const withCredentials = await makeChain({ apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig });
  use('validating', 'cfg', webhook('creds.example.com', '/creds'));
  const r = create();
  await withCredentials.mutate(r);
  await withCredentials.validate(r);
  const call = hooks.callsTo('/creds')[0]!;
  assert.equal(call.headers.authorization, 'Bearer secret-token');
  assert.equal(call.clientSubject, 'CN=apiserver-for-webhooks');
});
