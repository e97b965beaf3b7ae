// What a CustomResourceDefinition may claim, tried as an attacker with the
// right to write definitions would: a built-in resource under its upstream
// group name or ours (with and without the approval annotation, at create,
// at update, and stored before the guard existed), a new resource in a
// built-in group version, the approval rules of protected groups (upstream's
// GetAPIApprovalState table) with their status condition, and defaults
// that carry unknown fields or break their own schema or CEL rule.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus, Canary } from '../support/hostile.js';
import { crdPath } from '../support/crds.js';
import { eventually } from '../support/webhook.js';
import { toStoredBytes } from '../../src/registry/objects.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let canary: Canary;

before(async () => {
  s = await startTestServer();
  canary = await Canary.plant(s.client);
});
after(async () => {
  await s?.close();
});

type Json = Record<string, any>;
const approved = 'api-approved.kubernetes.io';
const ours = vocabulary.apiApprovedAnnotation;
const rbacUpstream = 'rbac.authorization.k8s.io';
const rbacOurs = vocabulary.rbacGroup;
const invalidCrd = (name: string, causes: string) => `CustomResourceDefinition.${vocabulary.apiextensionsGroup} "${name}" is invalid: ${causes}`;

/** A definition with one version (or those given) and a schema of `spec`. */
function definition(group: string, plural: string, kind: string, opts: { annotations?: Json; spec?: Json; versions?: string[]; names?: Json } = {}): Json {
  const versions = opts.versions ?? ['v1'];
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: {
      group, scope: 'Cluster',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, ...opts.names },
      versions: versions.map((name, i) => ({
        name, served: true, storage: i === 0,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: opts.spec ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      })),
    },
  };
}

const conditionOf = (crd: Json, type: string): Json | undefined => (crd.status?.conditions ?? []).find((c: Json) => c.type === type);

async function waitForCondition(name: string, type: string, status: string): Promise<Json> {
  let crd: Json = {};
  await eventually(`${name} has ${type}=${status}`, async () => {
    crd = (await s.client.get(`${crdPath}/${name}`)).json;
    return conditionOf(crd, type)?.status === status;
  });
  return crd;
}

/** The names of the built-in cluster role bindings, listed under one group name. */
async function bindingsUnder(group: string): Promise<string[]> {
  const r = await s.client.get(`/apis/${group}/v1/clusterrolebindings`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.kind, 'ClusterRoleBindingList');
  return r.json.items.map((b: Json) => b.metadata.name).sort();
}

/** Both group names still list the built-in bindings, and a binding written through kubectl's group lands there. */
async function assertBuiltinBindingsServed(before: string[], probe: string): Promise<void> {
  assert.deepEqual(await bindingsUnder(rbacUpstream), before);
  assert.deepEqual(await bindingsUnder(rbacOurs), before);
  const binding = {
    apiVersion: `${rbacUpstream}/v1`, kind: 'ClusterRoleBinding', metadata: { name: probe },
    roleRef: { apiGroup: rbacUpstream, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'probe', apiGroup: rbacUpstream }],
  };
  const created = await s.client.post(`/apis/${rbacUpstream}/v1/clusterrolebindings`, binding);
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const read = await s.client.get(`/apis/${rbacOurs}/v1/clusterrolebindings/${probe}`);
  assert.equal(read.status, 200, 'the binding is a built-in one, readable under our group name');
  assert.equal(read.json.roleRef.name, 'view');
  assert.equal((await s.client.delete(`/apis/${rbacOurs}/v1/clusterrolebindings/${probe}`)).status, 200);
}

test('a definition cannot take a built-in resource under its upstream group name or ours, approved or not; the built-in keeps answering under both', async () => {
  const builtins = await bindingsUnder(rbacUpstream);
  assert.ok(builtins.length > 0, 'the default policy has cluster role bindings');
  assert.deepEqual(await bindingsUnder(rbacOurs), builtins);
  const approvals: (Json | undefined)[] = [undefined, { [approved]: 'unapproved, hostile' }, { [ours]: 'https://github.com/kubernetes/kubernetes/pull/1' }];
  for (const group of [rbacUpstream, rbacOurs]) {
    for (const annotations of approvals) {
      const name = `clusterrolebindings.${group}`;
      const r = await s.client.post(crdPath, definition(group, 'clusterrolebindings', 'ClusterRoleBinding', { annotations }));
      const claimed = (field: string, value: string) => `spec.names.${field}: Invalid value: "${value}": "${value}" is already in use by a built-in resource of this group`;
      assertStatus(r, 422, 'Invalid', invalidCrd(name, `[${[
        claimed('plural', 'clusterrolebindings'), claimed('singular', 'clusterrolebinding'),
        claimed('kind', 'ClusterRoleBinding'), claimed('listKind', 'ClusterRoleBindingList'),
      ].join(', ')}]`));
      assert.equal((await s.client.get(`${crdPath}/${name}`)).status, 404, 'nothing was stored');
    }
  }
  // Kinds that are only answered hold their names too (a definition taking tokenreviews also kept the server from starting again).
  for (const group of ['authentication.k8s.io', vocabulary.authenticationGroup]) {
    const r = await s.client.post(crdPath, definition(group, 'tokenreviews', 'TokenReview', { annotations: { [approved]: 'unapproved, hostile' } }));
    assertStatus(r, 422, 'Invalid');
    assert.match(r.json.message, /spec\.names\.plural: Invalid value: "tokenreviews": "tokenreviews" is already in use by a built-in resource of this group/);
  }
  const review = await s.client.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } });
  assert.deepEqual([review.status, review.json.kind, review.json.status?.authenticated], [201, 'TokenReview', false]);
  // Names are compared within the group only: apps.k8s.io is not the apps group.
  const deploy = await s.client.post(crdPath, definition('apps.k8s.io', 'thingies', 'Thingy', { annotations: { [approved]: 'unapproved, hostile' }, names: { shortNames: ['deploy'] } }));
  assert.equal(deploy.status, 201, 'apps.k8s.io is not the apps group: its own names are free');
  await assertBuiltinBindingsServed(builtins, 'probe-after-create');
  await canary.assertServerIntact();
});

test('an update cannot move a definition\'s names onto a built-in; a new resource is never served in a built-in group version but is in a new version of the group, which discovery lists beside the built-in one, as upstream', async () => {
  const builtins = await bindingsUnder(rbacUpstream);
  const name = `gizmos.${rbacUpstream}`;
  const created = await s.client.post(crdPath, definition(rbacUpstream, 'gizmos', 'Gizmo', { annotations: { [approved]: 'unapproved, hostile' }, versions: ['v1', 'v2'] }));
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const crd = await waitForCondition(name, 'Established', 'True');
  assert.equal(conditionOf(crd, 'NamesAccepted')?.status, 'True');
  // Upstream's built-in handler answers every path of rbac.authorization.k8s.io/v1: the new resource is not there, under either name.
  for (const group of [rbacUpstream, rbacOurs]) {
    assertStatus(await s.client.get(`/apis/${group}/v1/gizmos`), 404, 'NotFound');
    const discovered = await s.client.get(`/apis/${group}/v1`);
    assert.equal(discovered.status, 200);
    assert.ok(!discovered.json.resources.some((r: Json) => r.name === 'gizmos'), `gizmos are not discovered in ${group}/v1`);
    assert.ok(discovered.json.resources.some((r: Json) => r.name === 'clusterrolebindings'));
  }
  // A version built-ins do not have is the definition's, and the group lists both (kubectl still finds rbac v1 under the upstream name).
  const v2 = await s.client.post(`/apis/${rbacUpstream}/v2/gizmos`, { apiVersion: `${rbacUpstream}/v2`, kind: 'Gizmo', metadata: { name: 'g' } });
  assert.equal(v2.status, 201, JSON.stringify(v2.json));
  const group = await s.client.get(`/apis/${rbacUpstream}`);
  assert.deepEqual(group.json.versions.map((v: Json) => v.version), ['v2', 'v1']);
  const aggregated = await s.client.send('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
  const rbac = aggregated.json.items.find((g: Json) => g.metadata.name === rbacUpstream);
  assert.deepEqual(rbac.versions.map((v: Json) => [v.version, v.resources.map((r: Json) => r.resource).includes('clusterrolebindings')]), [['v2', false], ['v1', true]]);
  const moves: [string, Json, string, string][] = [
    ['singular', { singular: 'clusterrolebinding' }, 'singular', 'clusterrolebinding'],
    ['a short name', { shortNames: ['gz', 'clusterrolebindings'] }, 'shortNames[1]', 'clusterrolebindings'],
    ['the list kind', { listKind: 'ClusterRoleBindingList' }, 'listKind', 'ClusterRoleBindingList'],
  ];
  for (const [what, names, field, value] of moves) {
    const current = (await s.client.get(`${crdPath}/${name}`)).json;
    const moved = { ...current, spec: { ...current.spec, names: { ...current.spec.names, ...names } } };
    const r = await s.client.put(`${crdPath}/${name}`, moved);
    assertStatus(r, 422, 'Invalid', invalidCrd(name, `spec.names.${field}: Invalid value: "${value}": "${value}" is already in use by a built-in resource of this group`));
    const patched = await s.client.send('PATCH', `${crdPath}/${name}`, { raw: JSON.stringify({ spec: { names } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 422, `${what}: a patch is refused as well`);
  }
  const after = (await s.client.get(`${crdPath}/${name}`)).json;
  assert.equal(after.spec.names.singular, 'gizmo');
  assert.deepEqual(after.spec.names.shortNames, undefined);
  // An update that claims nothing new is still accepted.
  const relabelled = await s.client.send('PATCH', `${crdPath}/${name}`, { raw: JSON.stringify({ metadata: { labels: { a: 'b' } } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(relabelled.status, 200, JSON.stringify(relabelled.json));
  await assertBuiltinBindingsServed(builtins, 'probe-after-update');
});

test('a definition stored before the guard that names a built-in is never served: NamesAccepted and Established False, and the built-in answers', async () => {
  const builtins = await bindingsUnder(rbacUpstream);
  const name = `clusterrolebindings.${rbacUpstream}`;
  // As it was stored by a server without the guard, Established then.
  const stored = {
    ...definition(rbacUpstream, 'clusterrolebindings', 'ClusterRoleBinding', { annotations: { [approved]: 'unapproved, stored earlier' } }),
    apiVersion: `${vocabulary.apiextensionsGroup}/v1`,
    metadata: { name, uid: '3f6c2f0e-0000-4000-8000-000000000038', creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 },
    status: {
      acceptedNames: { plural: 'clusterrolebindings', singular: 'clusterrolebinding', kind: 'ClusterRoleBinding', listKind: 'ClusterRoleBindingList' },
      storedVersions: ['v1'],
      conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  };
  const definitions = s.registry.store(vocabulary.apiextensionsGroup, 'v1', 'customresourcedefinitions')!;
  await s.registry.backend.create(definitions.key(undefined, name), toStoredBytes(stored));
  const crd = await waitForCondition(name, 'NamesAccepted', 'False');
  assert.deepEqual(
    [conditionOf(crd, 'NamesAccepted')?.reason, conditionOf(crd, 'NamesAccepted')?.message],
    ['PluralConflict', '"clusterrolebindings" is already in use by a built-in resource'],
  );
  assert.deepEqual([conditionOf(crd, 'Established')?.status, conditionOf(crd, 'Established')?.reason], ['False', 'NotAccepted']);
  await assertBuiltinBindingsServed(builtins, 'probe-after-stored');
  // Still writable for what claims nothing new (an update keeps its approval), and deletable.
  const labelled = await s.client.send('PATCH', `${crdPath}/${name}`, { raw: JSON.stringify({ metadata: { labels: { stale: 'yes' } } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(labelled.status, 200, JSON.stringify(labelled.json));
  assert.equal((await s.client.delete(`${crdPath}/${name}`)).status, 200);
  await eventually('the stored definition is gone', async () => (await s.client.get(`${crdPath}/${name}`)).status === 404);
  assert.deepEqual(await bindingsUnder(rbacUpstream), builtins);
});

/** Upstream's GetAPIApprovalState table (apihelpers), as annotations and the state each gives. */
const approvalTable: { name: string; annotations: Json; state: 'Approved' | 'Bypassed' | 'Missing' | 'Invalid' }[] = [
  { name: 'bare unapproved', annotations: { [approved]: 'unapproved' }, state: 'Bypassed' },
  { name: 'unapproved with message', annotations: { [approved]: 'unapproved, experimental-only' }, state: 'Bypassed' },
  { name: 'mismatched case', annotations: { [approved]: 'Unapproved' }, state: 'Invalid' },
  { name: 'empty', annotations: { [approved]: '' }, state: 'Missing' },
  { name: 'missing', annotations: {}, state: 'Missing' },
  { name: 'url', annotations: { [approved]: 'https://github.com/kubernetes/kubernetes/pull/78458' }, state: 'Approved' },
  { name: 'url - no scheme', annotations: { [approved]: 'github.com/kubernetes/kubernetes/pull/78458' }, state: 'Invalid' },
  { name: 'url - no host', annotations: { [approved]: 'http:///kubernetes/kubernetes/pull/78458' }, state: 'Invalid' },
  { name: 'url - just path', annotations: { [approved]: '/' }, state: 'Invalid' },
  // Ours is read first; upstream's is read when ours is absent or empty.
  { name: 'ours', annotations: { [ours]: 'https://example.com/approvals/1' }, state: 'Approved' },
  { name: 'ours over theirs', annotations: { [ours]: 'bogus', [approved]: 'unapproved' }, state: 'Invalid' },
  { name: 'empty ours, theirs read', annotations: { [ours]: '', [approved]: 'unapproved' }, state: 'Bypassed' },
];

test('protected groups need the approval annotation (upstream\'s table), refused with 422 and upstream\'s message, and carry the KubernetesAPIApprovalPolicyConformant condition', async () => {
  const enhancement = 'https://github.com/kubernetes/enhancements/pull/1111';
  // The whole table in one protected group; in the others, a refusal and a bypass.
  const groups = ['sigs.k8s.io', 'k8s.io', 'sigs.kubernetes.io', `x.${product.domain}`];
  let n = 0;
  for (const group of groups) {
    for (const row of group === groups[0] ? approvalTable : approvalTable.filter((r) => r.name === 'missing' || r.name === 'unapproved with message')) {
      const plural = `approvals${n++}`;
      const name = `${plural}.${group}`;
      const r = await s.client.post(crdPath, definition(group, plural, `Approval${n}`, { annotations: row.annotations }));
      const key = row.annotations[ours] ? ours : row.annotations[approved] ? approved : ours;
      if (row.state === 'Missing') {
        assertStatus(r, 422, 'Invalid', invalidCrd(name, `metadata.annotations[${key}]: Required value: protected groups must have approval annotation "${key}", see ${enhancement}`));
        continue;
      }
      if (row.state === 'Invalid') {
        assertStatus(r, 422, 'Invalid', invalidCrd(name, `metadata.annotations[${key}]: Invalid value: "${row.annotations[key]}": protected groups must have approval annotation "${key}" with either a URL or a reason starting with "unapproved", see ${enhancement}`));
        continue;
      }
      assert.equal(r.status, 201, `${group} ${row.name}: ${JSON.stringify(r.json)}`);
      const crd = await waitForCondition(name, 'KubernetesAPIApprovalPolicyConformant', row.state === 'Approved' ? 'True' : 'False');
      const c = conditionOf(crd, 'KubernetesAPIApprovalPolicyConformant')!;
      const value = row.annotations[key];
      assert.deepEqual([c.reason, c.message], row.state === 'Approved' ? ['ApprovedAnnotation', `approved in ${value}`] : ['UnapprovedAnnotation', `not approved: "${value}"`], `${group} ${row.name}`);
      assert.equal(conditionOf(crd, 'Established')?.status, 'True', 'an unapproved (bypassed) definition is served, as upstream');
    }
  }
  // Outside protected groups nothing is asked and no condition is set.
  const free = await s.client.post(crdPath, definition('different.io', 'frees', 'Free'));
  assert.equal(free.status, 201);
  const freeCrd = await waitForCondition('frees.different.io', 'Established', 'True');
  assert.equal(conditionOf(freeCrd, 'KubernetesAPIApprovalPolicyConformant'), undefined);
  // On update only a change of the approval's state is checked: approved → invalid is refused, approved → unapproved is not.
  const name = 'approvals5.sigs.k8s.io';
  const current = (await s.client.get(`${crdPath}/${name}`)).json;
  const withApproval = (value: string) => ({ ...current, metadata: { ...current.metadata, annotations: { [approved]: value } } });
  assertStatus(await s.client.put(`${crdPath}/${name}`, withApproval('Unapproved')), 422, 'Invalid');
  const bypassed = await s.client.put(`${crdPath}/${name}`, withApproval('unapproved, changed my mind'));
  assert.equal(bypassed.status, 200, JSON.stringify(bypassed.json));
  const after = await waitForCondition(name, 'KubernetesAPIApprovalPolicyConformant', 'False');
  assert.equal(conditionOf(after, 'KubernetesAPIApprovalPolicyConformant')?.reason, 'UnapprovedAnnotation');
});

const base = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties';

test('defaults with fields their schema prunes are refused at create and at update with upstream\'s message', async () => {
  const spec = (dflt: unknown) => ({ type: 'object', properties: { obj: { type: 'object', properties: { a: { type: 'string' } }, default: dflt } } });
  const junk = { a: 'x', junk: { evil: true } };
  const expected = invalidCrd('junks.example.com', `${base}[obj].default: Invalid value: map[string]interface {}{"a":"x", "junk":map[string]interface {}{"evil":true}}: must not have unknown fields`);
  assertStatus(await s.client.post(crdPath, definition('example.com', 'junks', 'Junk', { spec: spec(junk) })), 422, 'Invalid', expected);
  const created = await s.client.post(crdPath, definition('example.com', 'junks', 'Junk', { spec: spec({ a: 'x' }) }));
  assert.equal(created.status, 201, JSON.stringify(created.json));
  await waitForCondition('junks.example.com', 'Established', 'True');
  const current = (await s.client.get(`${crdPath}/junks.example.com`)).json;
  current.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec(junk);
  assertStatus(await s.client.put(`${crdPath}/junks.example.com`, current), 422, 'Invalid', expected);
  // Objects keep getting the pruned default only.
  const obj = await s.client.post('/apis/example.com/v1/junks', { apiVersion: 'example.com/v1', kind: 'Junk', metadata: { name: 'j' }, spec: {} });
  assert.equal(obj.status, 201, JSON.stringify(obj.json));
  assert.deepEqual(obj.json.spec, { obj: { a: 'x' } });
  // One stored before defaults were checked: its objects never get the unknown fields, and it stays writable (upstream's requirePrunedDefaults).
  const stored = {
    ...definition('example.com', 'oldjunks', 'OldJunk', { spec: spec(junk) }), apiVersion: `${vocabulary.apiextensionsGroup}/v1`,
    metadata: { name: 'oldjunks.example.com', uid: '3f6c2f0e-0000-4000-8000-000000000039', creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 },
  };
  const definitions = s.registry.store(vocabulary.apiextensionsGroup, 'v1', 'customresourcedefinitions')!;
  await s.registry.backend.create(definitions.key(undefined, 'oldjunks.example.com'), toStoredBytes(stored));
  await waitForCondition('oldjunks.example.com', 'Established', 'True');
  const old = await s.client.post('/apis/example.com/v1/oldjunks', { apiVersion: 'example.com/v1', kind: 'OldJunk', metadata: { name: 'o' }, spec: {} });
  assert.equal(old.status, 201, JSON.stringify(old.json));
  assert.deepEqual(old.json.spec, { obj: { a: 'x' } });
  const labelled = await s.client.send('PATCH', `${crdPath}/oldjunks.example.com`, { raw: JSON.stringify({ metadata: { labels: { kept: 'yes' } } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(labelled.status, 200, JSON.stringify(labelled.json));
});

test('a default that breaks its own schema or its own CEL rule is refused at create and at update with upstream\'s path and message', async () => {
  const spec = (dflt: unknown) => ({
    type: 'object',
    properties: {
      code: { type: 'string', maxLength: 8, default: dflt, 'x-kubernetes-validations': [{ rule: 'self.startsWith("ok-")', message: 'must start with ok-' }] },
      pair: {
        type: 'object', default: { min: 5, max: 1 }, 'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }],
        properties: { min: { type: 'integer' }, max: { type: 'integer' } },
      },
    },
  });
  // As upstream's rule errors: a scalar's value is shown, an object's is not.
  assertStatus(await s.client.post(crdPath, definition('example.com', 'rulers', 'Ruler', { spec: spec('bad') })), 422, 'Invalid', invalidCrd('rulers.example.com', `[${[
    `${base}[code].default: Invalid value: "string": must start with ok-`,
    `${base}[pair].default: Invalid value: "object": min must not exceed max`,
  ].join(', ')}]`));
  const long = await s.client.post(crdPath, definition('example.com', 'rulers', 'Ruler', { spec: spec('ok-but-far-too-long') }));
  assertStatus(long, 422, 'Invalid');
  assert.ok(long.json.message.includes(`${base}[code].default: Too long: may not be more than 8 bytes`), long.json.message);
  assert.ok(!long.json.message.includes('must start with ok-'), 'rules run only on a default its schema accepts');
  // A sound definition, then an update bringing the bad default back.
  const good = spec('ok-1');
  good.properties.pair.default = { min: 1, max: 5 };
  assert.equal((await s.client.post(crdPath, definition('example.com', 'rulers', 'Ruler', { spec: good }))).status, 201);
  await waitForCondition('rulers.example.com', 'Established', 'True');
  const current = (await s.client.get(`${crdPath}/rulers.example.com`)).json;
  current.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.code.default = 'bad';
  const updated = await s.client.put(`${crdPath}/rulers.example.com`, current);
  assertStatus(updated, 422, 'Invalid', invalidCrd('rulers.example.com', `${base}[code].default: Invalid value: "string": must start with ok-`));
  // Objects omitting the field still get the sound default and pass.
  const obj = await s.client.post('/apis/example.com/v1/rulers', { apiVersion: 'example.com/v1', kind: 'Ruler', metadata: { name: 'r' }, spec: {} });
  assert.equal(obj.status, 201, JSON.stringify(obj.json));
  assert.deepEqual(obj.json.spec, { code: 'ok-1', pair: { min: 1, max: 5 } });
  await canary.assertServerIntact();
});
