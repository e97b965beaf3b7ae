// ImagePolicyWebhook against a real HTTPS backend of the test's own (its own
// CA, on 127.0.0.1): the ImageReview it receives, its allow and deny answers
// with upstream's messages, answers cached, a failing backend denying, an
// unreachable one following defaultAllow, the plugin off by default, and the
// start-up refusals (no --runtime-config for the ImageReview version, a bad
// configuration named with its file).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { startWebhookServer, type TestWebhookServer } from '../support/webhook.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';
import { AdmissionConfigError } from '../../src/admission/index.js';

const reviewVersion = `imagepolicy.${product.domain}/v1alpha1`;
const runtimeConfig: [string, string][] = [[reviewVersion, 'true']];
// The ServiceAccount plugin (default-on) is not what these tests are about: no account has to exist first.
const common = { disableAdmissionPlugins: ['ServiceAccount'] };

let backend: TestWebhookServer;
let on: TestServer;
let failOpen: TestServer;
let off: TestServer;

/** A kubeconfig for the backend at `server`, trusting its CA, presenting a token. */
function backendKubeconfig(server: string, ca: string): string {
  const path = join(tempDir(), 'backend.kubeconfig');
  writeFileSync(path, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'backend',
    clusters: [{ name: 'backend', cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
    users: [{ name: 'apiserver', user: { token: 'image-policy-token' } }],
    contexts: [{ name: 'backend', context: { cluster: 'backend', user: 'apiserver' } }],
  }));
  return path;
}

/** An admission configuration holding `imagePolicy` as ImagePolicyWebhook's configuration. */
function admissionConfig(imagePolicy: Record<string, unknown>): string {
  const path = join(tempDir(), 'admission.yaml');
  writeFileSync(path, YAML.stringify({
    apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'AdmissionConfiguration',
    plugins: [{ name: 'ImagePolicyWebhook', configuration: { imagePolicy } }],
  }));
  return path;
}

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The backend's decision by image: `bad/*` denied with a reason, `quiet/*` without one, `broken/*` a 500; the rest allowed. */
function decide(review: any) {
  const images: string[] = (review.spec?.containers ?? []).map((c: any) => c.image);
  if (images.some((i) => i.startsWith('broken/'))) return { status: 500, raw: '{"message":"backend trouble"}' };
  const status = images.some((i) => i.startsWith('bad/')) ? { allowed: false, reason: 'images from bad/ are not allowed', auditAnnotations: { verdict: 'denied' } }
    : images.some((i) => i.startsWith('quiet/')) ? { allowed: false } : { allowed: true, auditAnnotations: { verdict: 'allowed' } };
  // Upstream's group name in the answer is accepted as ours.
  return { status: 200, raw: JSON.stringify({ apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', status }) };
}

/** Audit at Metadata level into a log of its own: where the plugin's audit annotations are seen. */
function audited(): { auditPolicyFile: string; auditLogPath: string } {
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), YAML.stringify({ apiVersion: `audit.${product.domain}/v1`, kind: 'Policy', rules: [{ level: 'Metadata', omitStages: ['RequestReceived'] }] }));
  return { auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: join(dir, 'audit.log') };
}

/** The annotations of the audit event of the request that answered `r`. */
async function auditAnnotations(s: TestServer, r: { headers: Record<string, unknown> }): Promise<Record<string, string>> {
  const path = s.options.auditLogPath!;
  return eventually('the audit event', async () => {
    if (!existsSync(path)) return undefined;
    const event = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.auditID === r.headers['audit-id'] && e.stage === 'ResponseComplete');
    return event ? (event.annotations ?? {}) : undefined;
  });
}

before(async () => {
  backend = await startWebhookServer();
  backend.on('/review', decide);
  const policy = { kubeConfigFile: backendKubeconfig(backend.url('/review'), backend.ca.cert), allowTTL: 60, denyTTL: 60, retryBackoff: 1 };
  const unreachable = { ...policy, kubeConfigFile: backendKubeconfig(`https://127.0.0.1:${await closedPort()}/review`, backend.ca.cert), defaultAllow: true };
  [on, failOpen, off] = await Promise.all([
    startTestServer({ ...common, ...audited(), runtimeConfig, enableAdmissionPlugins: ['ImagePolicyWebhook'], admissionControlConfigFile: admissionConfig(policy) }),
    startTestServer({ ...common, ...audited(), runtimeConfig, enableAdmissionPlugins: ['ImagePolicyWebhook'], admissionControlConfigFile: admissionConfig(unreachable) }),
    startTestServer(common),
  ]);
  for (const s of [on, failOpen, off]) assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'images' } })).status, 201);
});

after(async () => {
  await Promise.all([on?.close(), failOpen?.close(), off?.close()]);
  await backend?.close();
});

const pods = '/api/v1/namespaces/images/pods';
const pod = (name: string, image: string, extra: { annotations?: Record<string, string>; init?: string } = {}) => ({
  metadata: { name, annotations: extra.annotations },
  spec: { containers: [{ name: 'c', image }], ...(extra.init ? { initContainers: [{ name: 'i', image: extra.init }] } : {}) },
});

test('an allowed pod: the backend gets an ImageReview over TLS with the images, the reviewed annotations and the namespace', async () => {
  const before = backend.callsTo('/review').length;
  const created = await on.client.post(pods, pod('ok', 'good/app:1', {
    init: 'good/init:1',
    annotations: { 'team.image-policy.plat.io/ticket': '42', 'unrelated.example/key': 'x', 'image-policy.plat.io/no-dot-before': 'y' },
  }));
  assert.equal(created.status, 201, created.text);
  const calls = backend.callsTo('/review').slice(before);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.headers.authorization, 'Bearer image-policy-token');
  assert.deepEqual(calls[0]!.review, {
    apiVersion: reviewVersion, kind: 'ImageReview', metadata: { creationTimestamp: null },
    spec: { containers: [{ image: 'good/app:1' }, { image: 'good/init:1' }], annotations: { 'team.image-policy.plat.io/ticket': '42' }, namespace: 'images' },
    status: { allowed: false },
  });
  // The backend's audit annotations are recorded under the plugin's prefix.
  assert.equal((await auditAnnotations(on, created))[`imagepolicywebhook.image-policy.${product.domain}/verdict`], 'allowed');
});

test('denials are 403 with upstream\'s messages; answers are cached for their TTL', async () => {
  assertStatus(await on.client.post(pods, pod('bad', 'bad/app:1')), 403, 'Forbidden',
    'pods "bad" is forbidden: image policy webhook backend denied one or more images: images from bad/ are not allowed');
  assertStatus(await on.client.post(pods, pod('quiet', 'quiet/app:1')), 403, 'Forbidden', 'pods "quiet" is forbidden: one or more images rejected by webhook backend');
  const before = backend.callsTo('/review').length;
  assertStatus(await on.client.post(pods, pod('bad-again', 'bad/app:1')), 403, 'Forbidden');
  assert.equal((await on.client.post(pods, pod('ok-again', 'good/app:1', { init: 'good/init:1', annotations: { 'team.image-policy.plat.io/ticket': '42' } }))).status, 201);
  assert.equal(backend.callsTo('/review').length, before, 'both answers came from the cache');
});

test('a backend failing with 500 is tried again, then denies (defaultAllow false)', async () => {
  const before = backend.callsTo('/review').length;
  assertStatus(await on.client.post(pods, pod('broken', 'broken/app:1')), 403, 'Forbidden', 'pods "broken" is forbidden: Error contacting webhook: 500');
  assert.equal(backend.callsTo('/review').length - before, 5, 'upstream\'s five tries');
});

test('an unreachable backend with defaultAllow admits the pod and marks it as failed open', async () => {
  const created = await failOpen.client.post(pods, pod('open', 'bad/app:1'));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.metadata.annotations[`alpha.image-policy.${product.domain}/failed-open`], 'true');
  const stored = await failOpen.client.get(`${pods}/open`);
  assert.equal(stored.json.metadata.annotations[`alpha.image-policy.${product.domain}/failed-open`], 'true');
  assert.equal((await auditAnnotations(failOpen, created))[`imagepolicywebhook.image-policy.${product.domain}/failed-open`], 'true');
});

test('off by default: a denied image runs, and no review is sent', async () => {
  const before = backend.callsTo('/review').length;
  assert.equal((await off.client.post(pods, pod('bad', 'bad/app:1'))).status, 201);
  assert.equal(backend.callsTo('/review').length, before);
});

test('the start stops without the ImageReview version in --runtime-config, and on a bad configuration, naming it', async () => {
  const policy = { kubeConfigFile: backendKubeconfig(backend.url('/review'), backend.ca.cert) };
  const start = (imagePolicy: Record<string, unknown> | undefined, config: [string, string][] = runtimeConfig) => startTestServer({
    ...common, runtimeConfig: config, enableAdmissionPlugins: ['ImagePolicyWebhook'], ...(imagePolicy ? { admissionControlConfigFile: admissionConfig(imagePolicy) } : {}),
  });
  const refusal = async (started: Promise<unknown>, message: string | RegExp) => assert.rejects(started, (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError, String(e));
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
  await refusal(start(policy, []), `admission plugin ImagePolicyWebhook sends ${reviewVersion} ImageReviews: turn that version on with --runtime-config=${reviewVersion}=true`);
  await refusal(start(undefined), /^admission plugin ImagePolicyWebhook needs a configuration .*: no config specified$/);
  await refusal(start({ ...policy, allowTTL: 3600 }), /: plugins\[0\]\.configuration \(ImagePolicyWebhook\): imagePolicy\.allowTTL: valid value is between 1s and 30m0s, got 1h0m0s$/);
  await refusal(start({ ...policy, retryBackoff: 600_000 }), /imagePolicy\.retryBackoff: valid value is between 1ms and 5m0s, got 10m0s$/);
  const plain = backendKubeconfig(backend.url('/review').replace('https:', 'http:'), backend.ca.cert);
  await refusal(start({ kubeConfigFile: plain }), new RegExp(`the image policy backend http://.* in "${plain}" must use TLS \\(https\\)$`));
});
