// A mutating webhook cannot move, rename or re-identify what a request
// writes. A real HTTPS webhook rewrites name, namespace, uid or
// creationTimestamp on every road a write can take, and the table below says
// what each road answers, as upstream does. Also: an apply that creates stores
// exactly what validating admission saw; answers that are not an
// AdmissionReview of the version sent follow the failure policy; the codes of
// webhook denials.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tokenFile, type TestServer } from '../support/server.js';
import type { Response } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import {
  active, allow, configMaps, configure, deny, eventually, labelledNamespace, patchWith, setLabel, startWebhookServer, unconfigure, webhookEntry,
  type TestWebhookServer, type WebhookScene,
} from '../support/webhook.js';
import { gadgetGroup, gadgets } from '../support/gadgets.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let hooks: TestWebhookServer;
const scene = (): WebhookScene => ({ client: s.client, hooks });

before(async () => {
  s = await startTestServer({ tokenAuthFile: tokenFile('t-wh-admin,wh-admin,uid-wh\n') });
  hooks = await startWebhookServer();
  s.registry.addKind(gadgets);
});
after(async () => {
  await hooks.close();
  await s.close();
});

type Rewrite = 'name' | 'namespace' | 'uid' | 'creationTimestamp';
const forgedUid = '0badc0de-0000-4000-8000-000000000000';
const forgedTime = '2001-01-01T00:00:00Z';

/** What each road answers to each rewrite: 400 and 422 refuse the write, 200 and 201 store it with the server's values. */
interface Road {
  road: string;
  /** Whether the object exists before the request. */
  exists: boolean;
  send(name: string): Promise<Response>;
  expect: Record<Rewrite, number>;
}

const ns = 'rewritten';
const elsewhere = 'elsewhere';
const gadgetsIn = (namespace: string) => `/apis/${gadgetGroup}/v1/namespaces/${namespace}/gadgets`;
const base = gadgetsIn(ns);
const apiVersion = `${gadgetGroup}/v1`;

const patch = (path: string, contentType: string, body: unknown) =>
  s.client.send('PATCH', path, { raw: JSON.stringify(body), headers: { 'Content-Type': contentType } });
const apply = (name: string) => s.client.send('PATCH', `${base}/${name}?fieldManager=hostile&force=true`, {
  raw: JSON.stringify({ apiVersion, kind: 'Gadget', metadata: { name }, spec: { color: 'red' } }),
  headers: { 'Content-Type': 'application/apply-patch+yaml' },
});
const stored = async (name: string) => (await s.client.get(`${base}/${name}`)).json;

const onCreate = { name: 201, namespace: 400, uid: 201, creationTimestamp: 201 };
const onUpdate = { name: 400, namespace: 400, uid: 422, creationTimestamp: 200 };
const roads: Road[] = [
  // A create may be renamed, as upstream: the URL names no object yet.
  { road: 'POST', exists: false, expect: onCreate, send: (n) => s.client.post(base, { apiVersion, kind: 'Gadget', metadata: { name: n }, spec: { color: 'red' } }) },
  { road: 'PUT', exists: true, expect: onUpdate, send: async (n) => s.client.put(`${base}/${n}`, { ...(await stored(n)), spec: { color: 'red' } }) },
  { road: 'JSON patch', exists: true, expect: onUpdate, send: (n) => patch(`${base}/${n}`, 'application/json-patch+json', [{ op: 'add', path: '/spec/color', value: 'red' }]) },
  { road: 'merge patch', exists: true, expect: onUpdate, send: (n) => patch(`${base}/${n}`, 'application/merge-patch+json', { spec: { color: 'red' } }) },
  { road: 'strategic merge patch', exists: true, expect: onUpdate, send: (n) => patch(`${base}/${n}`, 'application/strategic-merge-patch+json', { spec: { color: 'red' } }) },
  // An apply that creates names its object by the URL: it may not be renamed.
  { road: 'apply creating', exists: false, expect: { ...onCreate, name: 400 }, send: apply },
  { road: 'apply updating', exists: true, expect: onUpdate, send: apply },
  { road: 'status', exists: true, expect: onUpdate, send: async (n) => s.client.put(`${base}/${n}/status`, { ...(await stored(n)), status: { ready: 1 } }) },
  { road: 'scale', exists: true, expect: onUpdate, send: (n) => patch(`${base}/${n}/scale`, 'application/merge-patch+json', { spec: { replicas: 3 } }) },
];

test('what mutating admission returns: the URL\'s name and namespace, the server\'s uid and creation time, on every road', async () => {
  await labelledNamespace(scene(), ns, { suite: 'rewrite' });
  await labelledNamespace(scene(), elsewhere, { suite: 'other' });
  let armed: Rewrite | undefined;
  hooks.on('/rewrite', (review, call) => {
    if (!armed) return allow()(review, call);
    const name = review.request.object.metadata.name;
    const value = { name: `${name}-renamed`, namespace: elsewhere, uid: forgedUid, creationTimestamp: forgedTime }[armed];
    return patchWith(() => [{ op: 'add', path: `/metadata/${armed}`, value }])(review, call);
  });
  await configure(scene(), 'mutating', 'rewrite', webhookEntry(scene(), 'rewrite.example.com', '/rewrite', 'rewrite', {
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [gadgetGroup], apiVersions: ['v1'], resources: ['gadgets', 'gadgets/status', 'gadgets/scale'] }],
    failurePolicy: 'Fail',
  }));
  await active(scene(), '/rewrite', base, { apiVersion, kind: 'Gadget' });

  for (const { road, exists, send, expect } of roads) {
    for (const rewrite of ['name', 'namespace', 'uid', 'creationTimestamp'] as Rewrite[]) {
      const what = `${road}, webhook rewriting ${rewrite}`;
      const name = `${road.toLowerCase().replace(/[^a-z]+/g, '-')}-${rewrite.toLowerCase()}`;
      const before = exists ? await s.client.post(base, { apiVersion, kind: 'Gadget', metadata: { name }, spec: { color: 'blue', replicas: 1 } }) : undefined;
      if (before) assert.equal(before.status, 201, before.text);
      armed = rewrite;
      const r = await send(name);
      armed = undefined;
      const code = expect[rewrite];
      assert.equal(r.status, code, `${what}: ${r.text}`);
      if (code === 400) {
        assertStatus(r, 400, 'BadRequest');
        assert.equal(r.json.message, rewrite === 'name'
          ? `the name of the object (${name}-renamed) does not match the name on the URL (${name})`
          : 'the namespace of the provided object does not match the namespace sent on the request', what);
      } else if (code === 422) {
        assertStatus(r, 422, 'Invalid');
        assert.match(r.json.message, new RegExp(`metadata\\.uid: Invalid value: "${forgedUid}": field is immutable`), what);
      } else {
        const object = r.json.kind === 'Scale' ? await stored(name) : r.json;
        const storedName = rewrite === 'name' ? `${name}-renamed` : name;
        const kept = await stored(storedName);
        assert.equal(kept.metadata.name, storedName, what);
        assert.equal(kept.metadata.namespace, ns, what);
        assert.notEqual(kept.metadata.uid, forgedUid, what);
        assert.notEqual(kept.metadata.creationTimestamp, forgedTime, what);
        assert.equal(kept.metadata.uid, object.metadata.uid, `${what}: the answer is what was stored`);
        if (before) {
          assert.equal(kept.metadata.uid, before.json.metadata.uid, what);
          assert.equal(kept.metadata.creationTimestamp, before.json.metadata.creationTimestamp, what);
        }
      }
      if (code >= 400) {
        // Refused: nothing written anywhere.
        assert.equal((await s.client.get(`${gadgetsIn(elsewhere)}/${name}`)).status, 404, what);
        assert.equal((await s.client.get(`${base}/${name}-renamed`)).status, 404, what);
        const after = await s.client.get(`${base}/${name}`);
        if (before) assert.equal(after.json.metadata.resourceVersion, before.json.metadata.resourceVersion, what);
        else assert.equal(after.status, 404, what);
      }
    }
  }
  assert.deepEqual((await s.client.get(gadgetsIn(elsewhere))).json.items, []);
  await unconfigure(scene(), 'mutating', 'rewrite');
});

test('a namespace admin cannot have a webhook carry a RoleBinding into the system namespace', async () => {
  const suite = await labelledNamespace(scene(), 'wh');
  const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
  const grant = await s.client.post(`${rbac}/namespaces/${suite}/rolebindings`, {
    metadata: { name: 'wh-admin' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'User', apiGroup: vocabulary.rbacGroup, name: 'wh-admin' }],
  });
  assert.equal(grant.status, 201, grant.text);
  hooks.on('/move', (review, call) => patchWith(() => [{ op: 'replace', path: '/metadata/namespace', value: vocabulary.systemNamespace }])(review, call));
  await configure(scene(), 'mutating', 'move', webhookEntry(scene(), 'move.example.com', '/move', suite, {
    rules: [{ operations: ['CREATE'], apiGroups: [vocabulary.rbacGroup], apiVersions: ['v1'], resources: ['rolebindings'] }],
  }));
  const binding = {
    metadata: { name: 'read-everything' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'User', apiGroup: vocabulary.rbacGroup, name: 'wh-admin' }],
  };
  const asAdmin = { Authorization: 'Bearer t-wh-admin' };
  const user = s.client.anonymous();
  await eventually('the webhook is called', async () => {
    const before = hooks.callsTo('/move').length;
    await user.send('POST', `${rbac}/namespaces/${suite}/rolebindings?dryRun=All`, { body: binding, headers: asAdmin });
    return hooks.callsTo('/move').length > before;
  });
  const r = await user.send('POST', `${rbac}/namespaces/${suite}/rolebindings`, { body: binding, headers: asAdmin });
  assertStatus(r, 400, 'BadRequest');
  assert.equal(r.json.message, 'the namespace of the provided object does not match the namespace sent on the request');
  assert.equal((await s.client.get(`${rbac}/namespaces/${vocabulary.systemNamespace}/rolebindings/read-everything`)).status, 404);
  assertStatus(await user.get(`/api/v1/namespaces/${vocabulary.systemNamespace}/secrets`, asAdmin), 403, 'Forbidden');
  user.close();
  await unconfigure(scene(), 'mutating', 'move');
});

test('an apply that creates stores exactly the object validating admission saw, webhook patches included', async () => {
  const suite = await labelledNamespace(scene(), 'witnessed');
  const collection = gadgetsIn(suite);
  hooks.on('/stamp', (review, call) => patchWith((r) => setLabel(r.request.object, 'stamped', 'yes'))(review, call));
  const seen: any[] = [];
  hooks.on('/witness', (review, call) => {
    if (!review.request.dryRun) seen.push(review.request.object);
    return allow()(review, call);
  });
  const rules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [gadgetGroup], apiVersions: ['v1'], resources: ['gadgets'] }];
  await configure(scene(), 'mutating', 'stamp', webhookEntry(scene(), 'stamp.example.com', '/stamp', suite, { rules }));
  await configure(scene(), 'validating', 'witness', webhookEntry(scene(), 'witness.example.com', '/witness', suite, { rules }));
  await active(scene(), '/witness', collection, { apiVersion, kind: 'Gadget' });

  const r = await s.client.send('PATCH', `${collection}/applied?fieldManager=hostile`, {
    raw: JSON.stringify({ apiVersion, kind: 'Gadget', metadata: { name: 'applied' }, spec: { color: 'green' } }),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
  assert.equal(r.status, 201, r.text);
  const kept = (await s.client.get(`${collection}/applied`)).json;
  assert.equal(kept.metadata.labels?.stamped, 'yes', 'the mutating webhook\'s patch is stored');
  assert.equal(seen.length, 1);
  const { resourceVersion: _rv, ...keptMeta } = kept.metadata;
  assert.deepEqual({ ...kept, metadata: keptMeta }, seen[0], 'what is stored is what was validated');
  await unconfigure(scene(), 'validating', 'witness');
  await unconfigure(scene(), 'mutating', 'stamp');
});

test('an answer that is not an AdmissionReview of the version sent is a failed call: 500 under Fail, ignored under Ignore', async () => {
  const suite = await labelledNamespace(scene(), 'mistyped');
  // A Status (or anything else) carrying `allowed: true` does not admit anything.
  hooks.on('/status-kind', (review) => ({ status: 200, raw: JSON.stringify({ apiVersion: 'v1', kind: 'Status', response: { uid: review.request.uid, allowed: true } }) }));
  hooks.on('/upstream-named', (review) => ({ response: { uid: review.request.uid, allowed: true }, apiVersion: review.apiVersion.replace(/^[^/]+/, 'admission.k8s.io') }));
  const cases: [string, Record<string, unknown>, number, RegExp | undefined][] = [
    ['/status-kind', { admissionReviewVersions: ['v1'], failurePolicy: 'Fail' }, 500, /expected admission\.[a-z.]+\/v1, Kind=AdmissionReview, got v1, Kind=Status/],
    ['/status-kind', { admissionReviewVersions: ['v1beta1'], failurePolicy: 'Fail' }, 500, /expected admission\.[a-z.]+\/v1beta1, Kind=AdmissionReview, got v1, Kind=Status/],
    ['/status-kind', { admissionReviewVersions: ['v1beta1'], failurePolicy: 'Ignore' }, 201, undefined],
    ['/upstream-named', { admissionReviewVersions: ['v1'], failurePolicy: 'Fail' }, 201, undefined],
  ];
  let i = 0;
  for (const [path, extra, code, message] of cases) {
    const name = `case-${i++}`;
    await configure(scene(), 'validating', name, webhookEntry(scene(), `${name}.example.com`, path, suite, extra));
    const before = hooks.callsTo(path).length;
    await active(scene(), path, configMaps(suite));
    const r = await s.client.post(configMaps(suite), { metadata: { name }, data: {} });
    assert.equal(r.status, code, `${path} ${JSON.stringify(extra)}: ${r.text}`);
    if (message) {
      assertStatus(r, 500, 'InternalError');
      assert.match(r.json.message, message);
    }
    assert.ok(hooks.callsTo(path).length > before);
    await unconfigure(scene(), 'validating', name);
  }
});

test('webhook denials: no code is 403, below 400 is 400, 400 to 999 kept, beyond a 500; the rejection metric caps the code at 600', async () => {
  const suite = await labelledNamespace(scene(), 'denials');
  hooks.on('/deny', (review, call) => {
    const code = review.request.object.metadata.labels?.code;
    if (review.request.dryRun) return allow()(review, call);
    return deny({ ...(code === 'none' ? {} : { code: Number(code) }), message: `denied with ${code}` })(review, call);
  });
  await configure(scene(), 'validating', 'deny', webhookEntry(scene(), 'deny.example.com', '/deny', suite));
  await active(scene(), '/deny', configMaps(suite));
  const table: [string, number, string][] = [
    ['none', 403, 'Forbidden'], ['200', 400, 'Forbidden'], ['302', 400, 'Forbidden'], ['418', 418, 'Forbidden'],
    ['503', 503, 'Forbidden'], ['600', 600, 'Forbidden'], ['999', 999, 'Forbidden'], ['1000', 500, 'InternalError'],
  ];
  for (const [code, answered, reason] of table) {
    const r = await s.client.post(configMaps(suite), { metadata: { name: `c-${code}`, labels: { code } }, data: {} });
    assertStatus(r, answered, reason);
    assert.match(r.json.message, new RegExp(`admission webhook "deny\\.example\\.com" denied the request: denied with ${code}$`), code);
    assert.equal((await s.client.get(`${configMaps(suite)}/c-${code}`)).status, 404, `${code}: nothing stored`);
  }
  const metrics = (await s.client.get('/metrics')).text;
  const counted = (code: string) => new RegExp(`^apiserver_admission_webhook_rejection_count\\{name="deny\\.example\\.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="${code}"\\} [1-9]`, 'm');
  for (const code of ['403', '200', '418', '600']) assert.match(metrics, counted(code), code);
  assert.doesNotMatch(metrics, /rejection_code="(999|1000)"/);
  await unconfigure(scene(), 'validating', 'deny');
});
