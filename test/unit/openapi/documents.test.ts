// The v2 document and the schema translation: every declared kind is there,
// with the routes, identities and merge markers clients rely on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import * as meta from '../../../src/api/meta/v1.js';
import { discoveredUpstreamGroup, vocabulary } from '../../../src/machinery/vocabulary.js';
import { OpenApiService } from '../../../src/server/openapi/index.js';
import { catalogRegistry } from '../../support/catalog.js';
import { translateSchema, collectRefs } from '../../../src/server/openapi/translate.js';
import { operationGroupVersion, operationTag } from '../../../src/server/openapi/names.js';

type J = Record<string, any>;
const ours = (name: string) => `${vocabulary.openapiExtensionPrefix}${name}`;
const doc = new OpenApiService(catalogRegistry(), { version: 'v1.32.0' }).v2Document().doc as J;
const sa = builtinKinds.find((k) => k.kind === 'ServiceAccount')!;
const ns = builtinKinds.find((k) => k.kind === 'Namespace')!;

test('v2 document header', () => {
  assert.equal(doc.swagger, '2.0');
  assert.equal(doc.info.version, 'v1.32.0');
  assert.ok(doc.info.title);
  assert.ok(doc.securityDefinitions.BearerToken);
});

test('every kind has its routes and operations', () => {
  for (const k of builtinKinds) {
    const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
    const coll = k.scope === 'Namespaced' ? `${base}/namespaces/{namespace}/${k.plural}` : `${base}/${k.plural}`;
    const gv = operationGroupVersion(k.group, k.version);
    const scoped = k.scope === 'Namespaced' ? 'Namespaced' : '';
    const c = doc.paths[coll];
    const o = doc.paths[`${coll}/{name}`];
    assert.ok(c && o, `${k.kind} paths`);
    assert.equal(c.get.operationId, `list${gv}${scoped}${k.kind}`);
    assert.equal(c.post.operationId, `create${gv}${scoped}${k.kind}`);
    if (k.verbs.includes('deletecollection')) assert.equal(c.delete.operationId, `delete${gv}Collection${scoped}${k.kind}`);
    else assert.equal(c.delete, undefined, `${k.kind} offers no deletecollection`);
    assert.equal(o.get.operationId, `read${gv}${scoped}${k.kind}`);
    assert.equal(o.put.operationId, `replace${gv}${scoped}${k.kind}`);
    assert.equal(o.patch.operationId, `patch${gv}${scoped}${k.kind}`);
    assert.equal(o.delete.operationId, `delete${gv}${scoped}${k.kind}`);
    assert.ok(doc.paths[`${base}/watch/${k.plural}`], `${k.kind} watch path`);
    if (k.scope === 'Namespaced') {
      assert.equal(doc.paths[`${base}/${k.plural}`].get.operationId, `list${gv}${k.kind}ForAllNamespaces`);
      assert.equal(doc.paths[`${base}/watch/namespaces/{namespace}/${k.plural}/{name}`].get.deprecated, true);
    }
    for (const item of [c, o]) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const op = item[method];
        if (!op) continue;
        assert.deepEqual(op['x-kubernetes-group-version-kind'], { group: k.group, kind: k.kind, version: k.version });
        assert.deepEqual(op[ours('group-version-kind')], { group: k.group, kind: k.kind, version: k.version });
        assert.equal(op['x-kubernetes-action'], op[ours('action')]);
        assert.deepEqual(op.tags, [operationTag(k.group, k.version)]);
        assert.ok(op.responses['401']);
      }
    }
  }
  assert.equal(doc.paths['/api/v1/namespaces/{name}/status'].get.operationId, 'readCoreV1NamespaceStatus');
  assert.equal(doc.paths['/api/v1/namespaces/{name}/status'].patch.operationId, 'patchCoreV1NamespaceStatus');
  assert.ok(!doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/status'], 'no status without the sub-resource');
});

test('operations carry the parameters of their verb', () => {
  const names = (op: J) => op.parameters.filter((p: J) => p.in === 'query').map((p: J) => p.name);
  const coll = doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts'];
  const obj = doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}'];
  for (const p of ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'resourceVersionMatch',
    'timeoutSeconds', 'watch', 'allowWatchBookmarks', 'sendInitialEvents']) assert.ok(names(coll.get).includes(p), p);
  assert.deepEqual(names(coll.post), ['dryRun', 'fieldManager', 'fieldValidation']);
  assert.deepEqual(names(obj.patch), ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
  for (const p of ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']) assert.ok(names(obj.delete).includes(p), p);
  assert.deepEqual(obj.parameters.map((p: J) => p.name), ['namespace', 'name', 'pretty']);
  assert.deepEqual(obj.patch.consumes, ['application/json-patch+json', 'application/merge-patch+json',
    'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
  assert.equal(obj.patch.parameters[0].in, 'body');
  assert.equal(obj.patch.parameters[0].schema.$ref, `#/definitions/${meta.Patch.name!}`);
  assert.equal(coll.post.parameters[0].schema.$ref, `#/definitions/${sa.definitionName}`);
});

test('responses reference the right definitions', () => {
  const ref = (name: string) => `#/definitions/${name}`;
  const coll = doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts'];
  assert.equal(coll.get.responses['200'].schema.$ref, ref(sa.listDefinitionName));
  assert.deepEqual(Object.keys(coll.post.responses), ['200', '201', '202', '401']);
  assert.equal(coll.delete.responses['200'].schema.$ref, ref(meta.Status.name!));
  const secretObj = doc.paths['/api/v1/namespaces/{namespace}/secrets/{name}'];
  assert.equal(secretObj.delete.responses['200'].schema.$ref, ref(meta.Status.name!), 'secrets answer delete with a Status');
  const saObj = doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}'];
  assert.equal(saObj.delete.responses['200'].schema.$ref, ref(sa.definitionName), 'service accounts answer with the object');
  assert.equal(doc.paths['/api/v1/watch/namespaces'].get.responses['200'].schema.$ref, ref(meta.WatchEvent.name!));
});

test('every kind and list kind is defined with its group-version-kind', () => {
  for (const k of builtinKinds) {
    const def = doc.definitions[k.definitionName];
    const list = doc.definitions[k.listDefinitionName];
    assert.ok(def && list, k.kind);
    // Groups discovery also lists by their upstream name carry that name too, after ours.
    const groups = [k.group, discoveredUpstreamGroup(k.group)].filter((g) => g !== undefined);
    assert.deepEqual(def['x-kubernetes-group-version-kind'], groups.map((group) => ({ group, kind: k.kind, version: k.version })));
    assert.deepEqual(def[ours('group-version-kind')], groups.map((group) => ({ group, kind: k.kind, version: k.version })));
    assert.deepEqual(list['x-kubernetes-group-version-kind'], groups.map((group) => ({ group, kind: k.listKind, version: k.version })));
    assert.deepEqual(list.required, ['items']);
    assert.equal(list.properties.items.items.$ref, `#/definitions/${k.definitionName}`);
    assert.equal(list.properties.metadata.$ref, `#/definitions/${meta.ListMeta.name!}`);
  }
  assert.deepEqual(doc.definitions[meta.Status.name!]['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Status', version: 'v1' }]);
});

test('every reference resolves', () => {
  const refs = collectRefs(doc, 'v2', new Set());
  assert.ok(refs.size > 10);
  for (const r of refs) assert.ok(doc.definitions[r], `dangling $ref ${r}`);
  // No reference escapes the definitions prefix.
  const text = JSON.stringify(doc);
  assert.equal(text.match(/"\$ref":"(?!#\/definitions\/)/g), null);
});

test('merge markers appear under our names and the upstream ones', () => {
  const secrets = doc.definitions[sa.definitionName].properties.secrets;
  assert.equal(secrets['x-kubernetes-patch-merge-key'], 'name');
  assert.equal(secrets['x-kubernetes-patch-strategy'], 'merge');
  assert.equal(secrets[ours('patch-merge-key')], 'name');
  assert.equal(secrets[ours('patch-strategy')], 'merge');
  assert.equal(secrets[ours('list-type')], 'map');
  assert.deepEqual(secrets[ours('list-map-keys')], ['name']);
  const owners = doc.definitions[meta.ObjectMeta.name!].properties.ownerReferences;
  assert.equal(owners['x-kubernetes-patch-merge-key'], 'uid');
  assert.equal(doc.definitions[meta.OwnerReference.name!][ours('map-type')], 'atomic');
  const conditions = doc.definitions[`${ns.definitionName}Status`].properties.conditions;
  assert.equal(conditions['x-kubernetes-patch-merge-key'], 'type');
});

test('a reference with a description: siblings in v2, allOf in v3', () => {
  const v2 = translateSchema({ ref: meta.ObjectMeta, description: 'Standard object metadata.' }, 'v2');
  assert.deepEqual(v2, { $ref: `#/definitions/${meta.ObjectMeta.name!}`, description: 'Standard object metadata.' });
  const v3 = translateSchema({ ref: meta.ObjectMeta, description: 'Standard object metadata.', default: {} }, 'v3');
  assert.deepEqual(v3, { allOf: [{ $ref: `#/components/schemas/${meta.ObjectMeta.name!}` }], description: 'Standard object metadata.', default: {} });
  assert.deepEqual(translateSchema({ ref: meta.ObjectMeta }, 'v3'), { $ref: `#/components/schemas/${meta.ObjectMeta.name!}` });
});

test('int-or-string, free-form and nullable schemas', () => {
  assert.deepEqual(translateSchema({ intOrString: true, format: 'int-or-string', description: 'port' }, 'v2'),
    { description: 'port', type: 'string', format: 'int-or-string' });
  const v3 = translateSchema({ intOrString: true, format: 'int-or-string' }, 'v3');
  assert.equal(v3['x-kubernetes-int-or-string'], true);
  assert.equal(v3.type, undefined);
  const free = { type: 'object' as const, preserveUnknownFields: true, embeddedResource: true };
  assert.equal(translateSchema(free, 'v3')['x-kubernetes-preserve-unknown-fields'], true);
  assert.equal(translateSchema(free, 'v3')['x-kubernetes-embedded-resource'], true);
  assert.equal(translateSchema(free, 'v2')['x-kubernetes-preserve-unknown-fields'], undefined);
  assert.equal(translateSchema({ type: 'string', nullable: true }, 'v3').nullable, true);
  assert.equal(translateSchema({ type: 'string', nullable: true }, 'v2')['x-nullable'], true);
});

test('enums and required fields survive translation', () => {
  const phase = doc.definitions[`${ns.definitionName}Status`].properties.phase;
  assert.deepEqual(phase.enum, ['Active', 'Terminating']);
  assert.deepEqual(doc.definitions[meta.OwnerReference.name!].required, ['apiVersion', 'kind', 'name', 'uid']);
});

test('operations follow the capabilities: namespaces offer no deletecollection, a sub-resource only its verbs', () => {
  const namespaces = doc.paths['/api/v1/namespaces'];
  assert.ok(namespaces.get && namespaces.post);
  assert.equal(namespaces.delete, undefined, 'no deletecollection on namespaces, as upstream');
  const finalize = doc.paths['/api/v1/namespaces/{name}/finalize'];
  assert.ok(finalize.put, 'finalize is described as it is served');
  assert.equal(finalize.put.operationId, 'replaceCoreV1NamespaceFinalize');
  assert.equal(finalize.get, undefined);
  assert.equal(finalize.patch, undefined);
  const status = doc.paths['/api/v1/namespaces/{name}/status'];
  assert.deepEqual(['get', 'patch', 'put'].filter((m) => status[m]), ['get', 'patch', 'put']);
  assert.equal(status.get.operationId, 'readCoreV1NamespaceStatus');
  assert.ok(sa.verbs.includes('patch'));
});
