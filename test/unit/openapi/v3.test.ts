// The v3 documents: one per group version plus the discovery roots, each
// closed under $ref and holding only its own paths.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { builtinKinds } from '../../../src/api/catalog.js';
import { defineKind } from '../../../src/api/kind.js';
import * as meta from '../../../src/api/meta/v1.js';
import { discoveredUpstreamGroup, productGroup, vocabulary } from '../../../src/machinery/vocabulary.js';
import { OpenApiService } from '../../../src/server/openapi/index.js';
import { catalogRegistry } from '../../support/catalog.js';
import { collectRefs } from '../../../src/server/openapi/translate.js';

type J = Record<string, any>;

// A cluster-scoped kind in a named group, to see the group-version split.
const widgetSchema = {
  type: 'object' as const,
  description: 'A test kind in a named group.',
  properties: {
    apiVersion: { type: 'string' as const }, kind: { type: 'string' as const },
    metadata: { ref: meta.ObjectMeta },
    spec: { type: 'object' as const, properties: { size: { intOrString: true, format: 'int-or-string' } } },
  },
};
const widgets = defineKind({
  group: productGroup('widgets'), version: 'v1alpha1', kind: 'Widget', plural: 'widgets', scope: 'Cluster',
  definitionName: 'test.widgets.v1alpha1.Widget', schema: widgetSchema,
  // An alpha version is served only when asked for (--runtime-config, or its declaration, as here).
  storedVersion: { enabledByDefault: true },
});
const service = new OpenApiService(catalogRegistry([...builtinKinds, widgets]));
const { index, docs } = service.v3Documents();
const parse = (key: string) => JSON.parse(docs.get(key)!.body.toString()) as J;

test('index lists every group version and the roots with content hashes', () => {
  const paths = JSON.parse(index.body.toString()).paths as Record<string, { serverRelativeURL: string }>;
  const widgetKey = `apis/${widgets.group}/v1alpha1`;
  // Every served version of every kind, in its own group (core Event is also served in the events group); not those --runtime-config must turn on.
  const versions = builtinKinds.flatMap((k) => k.versions.filter((v) => v.served && v.enabledByDefault !== false));
  const builtinGroups = [...new Set(versions.filter((v) => v.group).flatMap((v) => [`apis/${v.group}`, `apis/${v.group}/${v.name}`]))];
  const upstreamNamed = [...new Set(versions.flatMap((v) => (discoveredUpstreamGroup(v.group) ? [`apis/${discoveredUpstreamGroup(v.group)}/${v.name}`] : [])))];
  assert.ok(upstreamNamed.length > 0, 'some group is listed by its upstream name too');
  assert.deepEqual(Object.keys(paths).sort(), ['api', 'api/v1', 'apis', ...builtinGroups, ...upstreamNamed, `apis/${widgets.group}`, widgetKey].sort());
  for (const [key, { serverRelativeURL }] of Object.entries(paths)) {
    const hash = createHash('sha512').update(docs.get(key)!.body).digest('hex').toUpperCase();
    assert.equal(serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`);
  }
});

test('each group-version document holds only its own paths', () => {
  const core = parse('api/v1');
  assert.equal(core.openapi, '3.0.0');
  assert.ok(core.info.title && core.info.version);
  for (const path of Object.keys(core.paths)) assert.ok(path.startsWith('/api/v1/'), path);
  const named = parse(`apis/${widgets.group}/v1alpha1`);
  assert.deepEqual(Object.keys(named.paths).sort(), [
    `/apis/${widgets.group}/v1alpha1/`,
    `/apis/${widgets.group}/v1alpha1/watch/widgets`,
    `/apis/${widgets.group}/v1alpha1/watch/widgets/{name}`,
    `/apis/${widgets.group}/v1alpha1/widgets`,
    `/apis/${widgets.group}/v1alpha1/widgets/{name}`,
  ]);
  assert.equal(named.paths[`/apis/${widgets.group}/v1alpha1/widgets`].get.operationId, 'listWidgetsV1alpha1Widget');
  assert.ok(parse('api').paths['/api/'], 'core versions');
  assert.ok(parse('apis').paths['/apis/'], 'group list');
  assert.ok(parse(`apis/${widgets.group}`).paths[`/apis/${widgets.group}/`], 'group document');
});

test('components are exactly the schemas reachable from the paths', () => {
  for (const key of docs.keys()) {
    const d = parse(key);
    const schemas = d.components.schemas as J;
    const fromPaths = collectRefs(d.paths, 'v3', new Set());
    const closure = new Set<string>();
    const queue = [...fromPaths];
    while (queue.length) {
      const name = queue.pop()!;
      if (closure.has(name)) continue;
      closure.add(name);
      assert.ok(schemas[name], `${key}: dangling $ref ${name}`);
      queue.push(...collectRefs(schemas[name], 'v3', new Set()));
    }
    assert.deepEqual(Object.keys(schemas).sort(), [...closure].sort(), key);
    assert.equal(JSON.stringify(d).match(/"\$ref":"(?!#\/components\/schemas\/)/g), null, key);
  }
  const named = parse(`apis/${widgets.group}/v1alpha1`).components.schemas as J;
  assert.ok(named['test.widgets.v1alpha1.Widget'] && named[meta.ObjectMeta.name!] && named[meta.DeleteOptions.name!]);
  assert.ok(!named[builtinKinds.find((k) => k.kind === 'Secret')!.definitionName], 'no schemas of other group versions');
  assert.equal(named['test.widgets.v1alpha1.Widget'].properties.spec.properties.size['x-kubernetes-int-or-string'], true);
});

test('v3 operations are what kubectl checks before server-side validation', () => {
  // kubectl looks for a PATCH operation tagged with the kind's GVK that takes fieldValidation.
  const core = parse('api/v1');
  const patches = Object.values(core.paths as J).map((item: J) => item.patch).filter(Boolean);
  const sa = patches.filter((op: J) => op['x-kubernetes-group-version-kind']?.kind === 'ServiceAccount');
  assert.equal(sa.length, 1);
  for (const op of patches) {
    assert.ok(op.parameters.some((p: J) => p.name === 'fieldValidation' && p.in === 'query'), op.operationId);
    assert.deepEqual(Object.keys(op.requestBody.content), ['application/json-patch+json', 'application/merge-patch+json',
      'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
  }
  const kindSchema = core.components.schemas[builtinKinds.find((k) => k.kind === 'ServiceAccount')!.definitionName];
  assert.deepEqual(kindSchema['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ServiceAccount', version: 'v1' }]);
  // As upstream's: ObjectMeta is a value struct, so `default: {}` beside the reference.
  assert.deepEqual(kindSchema.properties.metadata, { allOf: [{ $ref: `#/components/schemas/${meta.ObjectMeta.name!}` }], description: 'Standard object metadata.', default: {} });
  assert.equal(kindSchema.properties.secrets['x-kubernetes-patch-merge-key'], 'name');
  const list = core.paths['/api/v1/namespaces/{namespace}/serviceaccounts'].get;
  assert.ok(list.responses['200'].content['application/json'].schema.$ref.endsWith('ServiceAccountList'));
});

test('documents are rebuilt after the registry changes', () => {
  const registry = catalogRegistry();
  const s = new OpenApiService(registry);
  const before = s.v3Documents();
  registry.addKind(widgets);
  const after = s.v3Documents();
  assert.notEqual(before, after);
  assert.ok(after.docs.has(`apis/${widgets.group}/v1alpha1`));
  assert.ok(!before.docs.has(`apis/${widgets.group}/v1alpha1`));
});

test('a group discovery also lists by its upstream name has a document under that name, paths and kinds renamed', () => {
  const upstream = discoveredUpstreamGroup(vocabulary.certificatesGroup)!;
  const doc = parse(`apis/${upstream}/v1`);
  const path = `/apis/${upstream}/v1/certificatesigningrequests/{name}`;
  assert.ok(doc.paths[path], Object.keys(doc.paths).join(', '));
  assert.deepEqual(doc.paths[path].get['x-kubernetes-group-version-kind'], { group: upstream, kind: 'CertificateSigningRequest', version: 'v1' });
  assert.ok(Object.keys(doc.paths).every((p) => p.startsWith(`/apis/${upstream}/v1/`)));
});
