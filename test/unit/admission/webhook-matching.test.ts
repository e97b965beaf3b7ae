// Which webhooks a request reaches: rules with their wildcards and scopes,
// namespace and object selectors, matchPolicy Exact and Equivalent; and the
// exemption of the webhook configurations themselves.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookMatcher, exemptFromWebhooks } from '../../../src/admission/webhook/matcher.js';
import { WebhookSource } from '../../../src/admission/webhook/source.js';
import type { Operation } from '../../../src/admission/types.js';
import { configMaps, namespaces } from '../../../src/api/core/v1/index.js';
import { mutatingWebhookConfigurations } from '../../../src/api/admissionregistration/v1/index.js';
import { defineKind, type KindDefinition, type KubeObject } from '../../../src/api/kind.js';
import { t } from '../../../src/api/schema.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { admissionRequest, rejection } from '../../support/admission.js';

const clusterThings = defineKind({
  group: 'example.test', version: 'v1', kind: 'Thing', plural: 'things', scope: 'Cluster',
  definitionName: 'test.example.v1.Thing', schema: t.object({ apiVersion: t.string(), kind: t.string() }),
});

function compiled(hook: Record<string, unknown>, configName = 'cfg') {
  const config = { metadata: { name: configName }, webhooks: [{ name: 'w.example.com', clientConfig: { url: 'https://h.example.com' }, sideEffects: 'None', admissionReviewVersions: ['v1'], ...hook }] };
  mutatingWebhookConfigurations.strategy.defaults!(config);
  return new WebhookSource({ list: () => [config], onChange: () => {} }).webhooks()[0]!;
}

const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra });

const labelled: Record<string, KubeObject> = {
  prod: { metadata: { name: 'prod', labels: { env: 'prod' } } },
  dev: { metadata: { name: 'dev', labels: { env: 'dev' } } },
};
const matcher = new WebhookMatcher(async (name) => labelled[name]);

async function calls(hook: ReturnType<typeof compiled>, op: Operation, kind: KindDefinition, name: string, parts: Parameters<typeof admissionRequest>[3] = {}) {
  return (await matcher.invocation(hook, admissionRequest(op, kind, name, parts), new Map())) !== undefined;
}

describe('rules', () => {
  test('resources: exact, *, */*, pods/*, */status', async () => {
    const cases: [string[], string | undefined, boolean][] = [
      [['configmaps'], undefined, true], [['configmaps'], 'status', false],
      [['*'], undefined, true], [['*'], 'status', false],
      [['*/*'], undefined, true], [['*/*'], 'status', true],
      [['configmaps/*'], 'status', true], [['configmaps/*'], undefined, true], [['secrets/*'], 'status', false],
      [['*/status'], 'status', true], [['*/status'], undefined, false], [['*/status'], 'scale', false],
    ];
    for (const [resources, subresource, expected] of cases) {
      assert.equal(await calls(compiled({ rules: [rule(resources)] }), 'UPDATE', configMaps, 'cm', { namespace: 'prod', subresource }), expected, `${resources} ${subresource}`);
    }
  });

  test('operations, groups and versions: exact or *', async () => {
    const only = (extra: Record<string, unknown>) => compiled({ rules: [rule(['configmaps'], extra)] });
    assert.equal(await calls(only({ operations: ['CREATE'] }), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), true);
    assert.equal(await calls(only({ operations: ['CREATE'] }), 'DELETE', configMaps, 'cm', { namespace: 'prod' }), false);
    assert.equal(await calls(only({ apiGroups: [''] }), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), true);
    assert.equal(await calls(only({ apiGroups: ['apps'] }), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), false);
    assert.equal(await calls(only({ apiVersions: ['v2'] }), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), false);
  });

  test('scope: Namespaced, Cluster (namespaces themselves are cluster-scoped), *', async () => {
    const scoped = (scope: string) => compiled({ rules: [rule(['*'], { scope })] });
    assert.equal(await calls(scoped('Namespaced'), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), true);
    assert.equal(await calls(scoped('Namespaced'), 'CREATE', namespaces, 'prod'), false);
    assert.equal(await calls(scoped('Namespaced'), 'CREATE', clusterThings, 'x'), false);
    assert.equal(await calls(scoped('Cluster'), 'CREATE', namespaces, 'prod'), true);
    assert.equal(await calls(scoped('Cluster'), 'CREATE', clusterThings, 'x'), true);
    assert.equal(await calls(scoped('Cluster'), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), false);
    assert.equal(await calls(scoped('*'), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), true);
  });

  test('no rules: never called', async () => {
    assert.equal(await calls(compiled({ rules: [] }), 'CREATE', configMaps, 'cm', { namespace: 'prod' }), false);
  });
});

describe('selectors', () => {
  const all = [rule(['*'])];

  test('namespaceSelector: the namespace\'s labels; a Namespace written is judged by its own new labels', async () => {
    const hook = compiled({ rules: all, namespaceSelector: { matchLabels: { env: 'prod' } } });
    assert.equal(await calls(hook, 'CREATE', configMaps, 'cm', { namespace: 'prod' }), true);
    assert.equal(await calls(hook, 'CREATE', configMaps, 'cm', { namespace: 'dev' }), false);
    assert.equal(await calls(hook, 'CREATE', namespaces, 'fresh', { object: { metadata: { name: 'fresh', labels: { env: 'prod' } } } }), true);
    assert.equal(await calls(hook, 'UPDATE', namespaces, 'prod', { object: { metadata: { name: 'prod', labels: { env: 'dev' } } } }), false);
    assert.equal(await calls(hook, 'DELETE', namespaces, 'prod'), true, 'a deletion: the stored labels');
    assert.equal(await calls(hook, 'CREATE', clusterThings, 'x'), true, 'other cluster-scoped objects are never exempted');
  });

  test('a missing namespace is 404 when the rules match, and nothing when they do not', async () => {
    const hook = compiled({ rules: [rule(['configmaps'])], namespaceSelector: { matchLabels: { env: 'prod' } } });
    const status = (await rejection(matcher.invocation(hook, admissionRequest('CREATE', configMaps, 'cm', { namespace: 'gone' }), new Map()))).toStatus();
    assert.equal(status.code, 404);
    assert.equal(status.message, 'namespaces "gone" not found');
    assert.equal(await calls(hook, 'CREATE', namespaces, 'x'), false);
  });

  test('objectSelector: the object or the old object; an absent one does not match', async () => {
    const hook = compiled({ rules: all, objectSelector: { matchExpressions: [{ key: 'watched', operator: 'Exists' }] } });
    const on = { metadata: { name: 'cm', labels: { watched: 'yes' } } };
    const off = { metadata: { name: 'cm' } };
    assert.equal(await calls(hook, 'CREATE', configMaps, 'cm', { namespace: 'prod', object: on }), true);
    assert.equal(await calls(hook, 'CREATE', configMaps, 'cm', { namespace: 'prod', object: off }), false);
    assert.equal(await calls(hook, 'UPDATE', configMaps, 'cm', { namespace: 'prod', object: off, oldObject: on }), true, 'labels removed');
    assert.equal(await calls(hook, 'DELETE', configMaps, 'cm', { namespace: 'prod', oldObject: on }), true);
    assert.equal(await calls(hook, 'DELETE', configMaps, 'cm', { namespace: 'prod', oldObject: off }), false);
    const absent = compiled({ rules: all, objectSelector: { matchExpressions: [{ key: 'watched', operator: 'DoesNotExist' }] } });
    assert.equal(await calls(absent, 'CREATE', configMaps, 'cm', { namespace: 'prod', object: off }), true);
  });

  test('namespace lookups are shared by the webhooks of one request', async () => {
    const asked: string[] = [];
    const counting = new WebhookMatcher(async (name) => { asked.push(name); return labelled[name]; });
    const hook = compiled({ rules: all, namespaceSelector: { matchLabels: { env: 'prod' } } });
    const cache = new Map();
    const r = admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod' });
    await counting.invocation(hook, r, cache);
    await counting.invocation(hook, r, cache);
    assert.deepEqual(asked, ['prod']);
  });
});

describe('matchPolicy', () => {
  const v2 = { resource: { group: '', version: 'v2', resource: 'configmaps' }, kind: { group: '', version: 'v2', kind: 'ConfigMap' } };
  // ConfigMaps as if also served at v2: the equivalent versions come from the kind's declaration.
  const twoVersions = defineKind({
    ...configMaps,
    otherVersions: [{ name: 'v2', schema: configMaps.schema, definitionName: 'test.core.v2.ConfigMap', toStored: (o) => o, fromStored: (o) => o }],
  });
  const withEquivalents = new WebhookMatcher(async (name) => labelled[name]);
  const v2only = [rule(['configmaps'], { apiVersions: ['v2'] })];

  test('Equivalent calls for the same resource at another version, naming that version; Exact does not', async () => {
    const r = admissionRequest('CREATE', twoVersions, 'cm', { namespace: 'prod' });
    const inv = await withEquivalents.invocation(compiled({ rules: v2only, matchPolicy: 'Equivalent' }), r, new Map());
    assert.deepEqual(inv?.resource, v2.resource);
    assert.deepEqual(inv?.kind, v2.kind);
    assert.equal(await withEquivalents.invocation(compiled({ rules: v2only, matchPolicy: 'Exact' }), r, new Map()), undefined);
  });

  test('a version the server does not serve (--runtime-config) is no equivalent', async () => {
    const v2off = new WebhookMatcher(async (name) => labelled[name], (_group, version) => version.name !== 'v2');
    const r = admissionRequest('CREATE', twoVersions, 'cm', { namespace: 'prod' });
    assert.equal(await v2off.invocation(compiled({ rules: v2only, matchPolicy: 'Equivalent' }), r, new Map()), undefined);
  });

  test('a direct match wins over an equivalent one; a kind served at one version has no equivalent', async () => {
    assert.equal(await withEquivalents.invocation(compiled({ rules: v2only, matchPolicy: 'Equivalent' }), admissionRequest('CREATE', configMaps, 'cm', { namespace: 'prod' }), new Map()), undefined);
    const r = admissionRequest('CREATE', twoVersions, 'cm', { namespace: 'prod' });
    const inv = await withEquivalents.invocation(compiled({ rules: [rule(['configmaps'])] }), r, new Map());
    assert.equal(inv?.resource.version, 'v1');
  });
});

test('writes of webhook configurations never reach webhooks', () => {
  assert.equal(exemptFromWebhooks(admissionRequest('CREATE', mutatingWebhookConfigurations, 'x'), vocabulary.admissionRegistrationGroup), true);
  assert.equal(exemptFromWebhooks(admissionRequest('CREATE', configMaps, 'x', { namespace: 'prod' }), vocabulary.admissionRegistrationGroup), false);
});

test('configurations run in name order; repeated webhook names stay apart', () => {
  const hook = (name: string) => ({ name, clientConfig: { url: 'https://h.example.com' }, sideEffects: 'None', admissionReviewVersions: ['v1'] });
  const feed = { list: () => [{ metadata: { name: 'b' }, webhooks: [hook('x.example.com'), hook('x.example.com')] }, { metadata: { name: 'a' }, webhooks: [hook('y.example.com')] }], onChange: () => {} };
  assert.deepEqual(new WebhookSource(feed).webhooks().map((w) => w.uid), ['a/y.example.com/0', 'b/x.example.com/0', 'b/x.example.com/1']);
});

test('candidates: only webhooks with a rule naming the resource or *, in calling order with their index', () => {
  const hook = (name: string, resources: string[]) => ({ name, clientConfig: { url: 'https://h.example.com' }, sideEffects: 'None', admissionReviewVersions: ['v1'], rules: [rule(resources)] });
  let configs = [{ metadata: { name: 'a' }, webhooks: [hook('cm.example.com', ['configmaps/status']), hook('sec.example.com', ['secrets']), hook('all.example.com', ['*/scale'])] }];
  const listeners: (() => void)[] = [];
  const source = new WebhookSource({ list: () => configs, onChange: (l) => { listeners.push(l); } });
  assert.deepEqual(source.candidates('configmaps').map((c) => [c.webhook.name, c.index]), [['cm.example.com', 0], ['all.example.com', 2]]);
  assert.deepEqual(source.candidates('events'), [{ webhook: source.webhooks()[2], index: 2 }]);
  configs = [{ metadata: { name: 'a' }, webhooks: [hook('sec.example.com', ['secrets'])] }];
  for (const l of listeners) l();
  assert.deepEqual(source.candidates('configmaps'), [], 'recomputed after a change');
});
