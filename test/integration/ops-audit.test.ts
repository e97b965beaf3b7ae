// The audit log as an operator reads it after a scripted sequence: health
// paths left out by a None rule, each request's events at the level its rule
// gives (request and response bodies, stages omitted, managed fields left
// out), impersonation, the authorization decision and the admission webhook
// annotations at their levels; then the webhook backend's batches.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { patchWith, setLabel, startWebhookServer, type TestWebhookServer } from '../support/webhook.js';
import { parsePrometheusText, value } from '../support/prometheus.js';
import { productGroup, vocabulary } from '../../src/machinery/vocabulary.js';
import { defineKind, type KindDefinition } from '../../src/api/kind.js';
import { t } from '../../src/api/schema.js';
import * as meta from '../../src/api/meta/v1.js';
import { reviewResource } from '../../src/registry/rest.js';
import { builtinKinds } from '../../src/api/catalog.js';
import { configMaps } from '../../src/api/core/v1/index.js';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject } from '../../src/api/protobuf/index.js';

const policy = `apiVersion: ${vocabulary.auditGroup}/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
- level: RequestResponse
  namespaces: [audited]
  resources: [{group: "", resources: [configmaps]}]
  omitStages: [RequestReceived]
  omitManagedFields: true
- level: Request
  resources: [{group: "", resources: [secrets]}]
- level: Metadata
  omitStages: [RequestReceived]
`;

let s: TestServer;
let hooks: TestWebhookServer;
let logPath: string;
const ua = { 'User-Agent': 'ops-audit-test/1.0' };
const admissionGroup = vocabulary.admissionRegistrationGroup;

before(async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), policy);
  logPath = join(dir, 'audit', 'audit.log');
  s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: logPath });
  hooks = await startWebhookServer();
});
after(async () => {
  await hooks.close();
  await s.close();
});

function events(): any[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** The events of one request, once its last stage is written. */
async function eventsOf(auditID: unknown, last = 'ResponseComplete'): Promise<any[]> {
  assert.equal(typeof auditID, 'string');
  return eventually(`the ${last} event of ${String(auditID)}`, async () => {
    const mine = events().filter((e) => e.auditID === auditID);
    return mine.some((e) => e.stage === last) ? mine : undefined;
  });
}

test('the audit log follows the policy for a scripted sequence', async () => {
  for (const ns of ['audited', 'meta']) {
    assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: ns, labels: { 'audit-test': 'yes' } } })).status, 201);
  }
  const stamp = patchWith((review) => setLabel(review.request.object, 'stamped', 'yes'));
  hooks.on('/stamp', (review, call) => ({ response: { ...(stamp(review, call) as { response: Record<string, unknown> }).response, auditAnnotations: { note: 'seen' } } }));
  const configured = await s.client.post(`/apis/${admissionGroup}/v1/mutatingwebhookconfigurations`, {
    apiVersion: `${admissionGroup}/v1`, kind: 'MutatingWebhookConfiguration', metadata: { name: 'stamp' },
    webhooks: [{
      name: 'stamp.example.com', clientConfig: { url: hooks.url('/stamp'), caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { 'audit-test': 'yes' } }, sideEffects: 'None', admissionReviewVersions: ['v1'],
    }],
  });
  assert.equal(configured.status, 201, configured.text);
  await eventually('the webhook is called', async () => {
    await s.client.post('/api/v1/namespaces/meta/configmaps?dryRun=All', { metadata: { generateName: 'probe-' } });
    return hooks.callsTo('/stamp').length > 0 || undefined;
  });

  // Health checks: a None rule.
  for (const path of ['/healthz', '/readyz?verbose', '/livez/ping']) assert.equal((await s.client.get(path)).status, 200);

  // RequestResponse: one event (RequestReceived omitted), both bodies, no managed fields, every annotation.
  const created = await s.client.send('POST', '/api/v1/namespaces/audited/configmaps', { body: { metadata: { name: 'cm1' }, data: { a: 'b' } }, headers: ua });
  assert.equal(created.status, 201, created.text);
  const [full, ...more] = await eventsOf(created.headers['audit-id']);
  assert.equal(more.length, 0);
  assert.equal(full.kind, 'Event');
  assert.equal(full.apiVersion, `${vocabulary.auditGroup}/v1`);
  assert.equal(full.level, 'RequestResponse');
  assert.equal(full.stage, 'ResponseComplete');
  assert.equal(full.verb, 'create');
  assert.equal(full.requestURI, '/api/v1/namespaces/audited/configmaps');
  assert.ok(full.user.username);
  assert.ok(full.user.groups.includes('system:masters'));
  assert.deepEqual(full.sourceIPs, ['127.0.0.1']);
  assert.equal(full.userAgent, 'ops-audit-test/1.0');
  assert.deepEqual(full.objectRef, { resource: 'configmaps', namespace: 'audited', name: 'cm1', apiVersion: 'v1' }, 'the core group has no apiGroup (omitted when empty, as upstream)');
  assert.deepEqual(full.responseStatus, { metadata: {}, code: 201 });
  assert.deepEqual(full.requestObject, { metadata: { name: 'cm1' }, data: { a: 'b' } });
  assert.equal(full.responseObject.metadata.labels.stamped, 'yes');
  assert.equal(full.responseObject.metadata.managedFields, undefined, 'omitManagedFields');
  assert.match(full.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.ok(full.stageTimestamp >= full.requestReceivedTimestamp);
  const a = full.annotations;
  assert.equal(a[`${vocabulary.authorizationGroup}/decision`], 'allow');
  assert.ok(a[`${vocabulary.authorizationGroup}/reason`] !== undefined);
  assert.deepEqual(JSON.parse(a[`${vocabulary.mutationAnnotationPrefix}round_0_index_0`]), { configuration: 'stamp', webhook: 'stamp.example.com', mutated: true });
  assert.equal(JSON.parse(a[`${vocabulary.patchAnnotationPrefix}round_0_index_0`]).patchType, 'JSONPatch');
  assert.equal(a['stamp.example.com/note'], 'seen');

  // Metadata: no bodies, and the Request-level patch annotation is left out.
  const meta = await s.client.post('/api/v1/namespaces/meta/configmaps', { metadata: { name: 'cm2' } });
  assert.equal(meta.status, 201);
  const [m] = await eventsOf(meta.headers['audit-id']);
  assert.equal(m.level, 'Metadata');
  assert.equal(m.requestObject, undefined);
  assert.equal(m.responseObject, undefined);
  assert.ok(m.annotations[`${vocabulary.mutationAnnotationPrefix}round_0_index_0`]);
  assert.equal(m.annotations[`${vocabulary.patchAnnotationPrefix}round_0_index_0`], undefined);

  // Request: both stages, the request body only.
  const secret = await s.client.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's1' }, stringData: { k: 'v' } });
  assert.equal(secret.status, 201, secret.text);
  const stages = await eventsOf(secret.headers['audit-id']);
  assert.deepEqual(stages.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  // As upstream, the body is read after RequestReceived: only the last stage carries it.
  assert.equal(stages[0].responseStatus, undefined);
  assert.equal(stages[0].requestObject, undefined);
  for (const e of stages) {
    assert.equal(e.level, 'Request');
    assert.equal(e.responseObject, undefined);
  }
  assert.equal(stages[1].requestObject.stringData.k, 'v');

  // Impersonation that is refused: who asked, as whom, the Status and the decision.
  const refused = await s.client.get('/api/v1/namespaces', { 'Impersonate-User': 'jane' });
  assert.equal(refused.status, 403);
  const [denied] = await eventsOf(refused.headers['audit-id']);
  assert.ok(denied.user.groups.includes('system:masters'));
  assert.equal(denied.impersonatedUser.username, 'jane');
  assert.equal(denied.responseStatus.code, 403);
  assert.equal(denied.responseStatus.reason, 'Forbidden');
  assert.equal(denied.responseStatus.status, 'Failure');
  assert.equal(denied.annotations[`${vocabulary.authorizationGroup}/decision`], 'forbid');

  // A request no authenticator accepts is audited as upstream does: one ResponseStarted event, no user,
  // a status naming the credentials tried.
  const stranger = s.client.anonymous();
  const unauthorized = await stranger.get('/api/v1/namespaces', { Authorization: 'Bearer not-a-known-token' });
  stranger.close();
  assert.equal(unauthorized.status, 401);
  const unknownEvents = await eventsOf(unauthorized.headers['audit-id'], 'ResponseStarted');
  assert.deepEqual(unknownEvents.map((e) => e.stage), ['ResponseStarted']);
  const [unknown] = unknownEvents;
  assert.deepEqual(unknown.user, {});
  assert.deepEqual(unknown.responseStatus, { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 });
  assert.deepEqual(unknown.objectRef, { resource: 'namespaces', apiVersion: 'v1' });
  assert.equal(unknown.annotations, undefined, 'no authorization was asked');
  await s.client.get('/version');
  assert.equal(events().filter((e) => e.auditID === unauthorized.headers['audit-id']).length, 1, 'no other stage follows');

  // Timestamps carry microseconds (not milliseconds padded with zeros), as upstream's MicroTime.
  const all = events();
  for (const e of all) {
    assert.match(e.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(e.stageTimestamp, /\.\d{6}Z$/);
    assert.ok(e.stageTimestamp >= e.requestReceivedTimestamp, `${e.stageTimestamp} before ${e.requestReceivedTimestamp}`);
  }
  assert.ok(all.some((e) => !e.stageTimestamp.endsWith('000Z')), 'sub-millisecond digits are filled');

  // A watch: ResponseStarted when it begins, ResponseComplete when it ends.
  const watch = await s.client.watch('/api/v1/namespaces/default/configmaps?watch=true', { 'Audit-Id': 'watch-audit-1' });
  await eventsOf('watch-audit-1', 'ResponseStarted');
  watch.close();
  const watchEvents = await eventsOf('watch-audit-1');
  assert.deepEqual(watchEvents.map((e) => e.stage), ['ResponseStarted', 'ResponseComplete']);
  assert.equal(watchEvents[0].verb, 'watch');

  // Nothing of the health checks; every event counted.
  assert.equal(events().filter((e) => /^\/(healthz|livez|readyz)/.test(e.requestURI)).length, 0);
  const written = events().length;
  const metrics = parsePrometheusText((await s.client.get('/metrics')).text);
  assert.ok(value(metrics, 'apiserver_audit_event_total', {})! >= written);
  assert.equal(value(metrics, 'apiserver_audit_error_total', { plugin: 'log' }) ?? 0, 0);
});

test('a protobuf create (as kubectl sends one) is audited with its objects as JSON, and names its object at every level', async () => {
  const lookup = builtinSchemaLookup(builtinKinds);
  const send = (namespace: string, name: string) => s.client.send('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    raw: encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { wire: 'protobuf' } }, configMaps.schema),
    headers: { 'Content-Type': vocabulary.protobufMediaType, Accept: vocabulary.protobufMediaType },
  });
  const full = await send('audited', 'binary-cm');
  assert.equal(full.status, 201, full.text);
  assert.equal(decodeProtobufObject(full.body, lookup).metadata?.name, 'binary-cm');
  const event = (await eventsOf(full.headers['audit-id']))[0]!;
  assert.equal(event.level, 'RequestResponse');
  assert.equal(event.objectRef.name, 'binary-cm');
  assert.deepEqual(event.requestObject.data, { wire: 'protobuf' });
  assert.equal(event.requestObject.metadata.name, 'binary-cm');
  assert.equal(event.responseObject.kind, 'ConfigMap');
  assert.deepEqual(event.responseObject.data, { wire: 'protobuf' });
  assert.equal(event.responseObject.metadata.managedFields, undefined, 'omitManagedFields holds for objects from any wire format');
  const meta = await send('meta', 'binary-meta');
  assert.equal(meta.status, 201, meta.text);
  const metaEvents = await eventsOf(meta.headers['audit-id']);
  assert.ok(metaEvents.every((e) => e.objectRef.name === 'binary-meta' && e.requestObject === undefined && e.responseObject === undefined));
});

test('quotes, backslashes and other scripts in a path come out of the log as they went in', async () => {
  const raw = '/api/v1/namespaces/default/configmaps/we%22ird%5C%C3%BC%E2%80%A8?labelSelector=a%3D%22b%22';
  const answer = await s.client.get(raw, ua);
  assert.equal(answer.status, 404);
  const [only] = await eventsOf(answer.headers['audit-id']);
  assert.equal(only.requestURI, raw);
  assert.equal(only.objectRef.name, 'we"ird\\\u00fc\u2028');
  assert.equal(only.userAgent, ua['User-Agent']);
});

test('a request that fails on a bug ends with the Panic stage, and the server goes on', async () => {
  // A review kind added at run time whose reviewer has a bug: the failure is unexpected, not an ApiError.
  const brokenReviews: KindDefinition = defineKind({
    group: productGroup('broken'), version: 'v1', kind: 'BrokenReview', plural: 'brokenreviews', scope: 'Cluster', verbs: ['create'],
    definitionName: 'test.broken.v1.BrokenReview',
    schema: t.object({ apiVersion: t.string(), kind: t.string(), metadata: { ref: meta.ObjectMeta }, spec: t.object({ color: t.string() }), status: t.object({ allowed: t.bool() }) }),
  });
  const review = reviewResource(brokenReviews, (r) => ({ allowed: (r.spec.missing as { deeper: boolean }).deeper }));
  s.registry.addRest(review);
  try {
    const answer = await s.client.post(`/apis/${productGroup('broken')}/v1/brokenreviews`, {
      apiVersion: `${productGroup('broken')}/v1`, kind: 'BrokenReview', spec: { color: 'red' },
    }, ua);
    assert.equal(answer.status, 500);
    const mine = await eventsOf(answer.headers['audit-id'], 'Panic');
    assert.deepEqual(mine.map((e) => e.stage), ['Panic'], 'the Metadata rule omits RequestReceived; no ResponseComplete after a Panic');
    assert.equal(mine[0].responseStatus.code, 500);
    assert.equal(mine[0].responseStatus.reason, 'InternalError');
    assert.equal(mine[0].verb, 'create');
    assert.equal(mine[0].objectRef.resource, 'brokenreviews');
  } finally {
    s.registry.removeRest(review);
  }
  assert.equal((await s.client.get('/readyz')).status, 200);
});

test('the webhook backend posts EventLists in batches of --audit-webhook-batch-max-size', async () => {
  const batches: any[] = [];
  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => { batches.push(JSON.parse(Buffer.concat(chunks).toString('utf8'))); res.end('{}'); });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: None\n  nonResourceURLs: ["/readyz*", "/healthz*", "/livez*"]\n- level: Metadata\n`);
  const port = (receiver.address() as AddressInfo).port;
  writeFileSync(join(dir, 'webhook.kubeconfig'), JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'audit',
    clusters: [{ name: 'audit', cluster: { server: `http://127.0.0.1:${port}/events` } }],
    users: [{ name: 'audit', user: {} }], contexts: [{ name: 'audit', context: { cluster: 'audit', user: 'audit' } }],
  }));
  const ids: string[] = [];
  const w = await startTestServer({
    auditPolicyFile: join(dir, 'policy.yaml'), auditWebhookConfigFile: join(dir, 'webhook.kubeconfig'),
    auditWebhookBatchMaxSize: 3, auditWebhookBatchMaxWaitMs: 3_600_000,
  });
  try {
    ids.length = 0;
    for (let i = 0; i < 7; i++) ids.push(String((await w.client.get('/api/v1/namespaces/default')).headers['audit-id']));
    await eventually('two full batches', async () => batches.length >= 2 || undefined);
    assert.deepEqual(batches.map((b) => b.items.length), [3, 3], 'the seventh waits for a full batch or its time');
    for (const b of batches) {
      assert.equal(b.kind, 'EventList');
      assert.equal(b.apiVersion, `${vocabulary.auditGroup}/v1`);
    }
  } finally {
    await w.close();
  }
  // Stopping sends what is left.
  assert.deepEqual(batches.map((b) => b.items.length), [3, 3, 1]);
  assert.deepEqual(batches.flatMap((b) => b.items.map((e: any) => e.auditID)), ids);
  receiver.close();
});
