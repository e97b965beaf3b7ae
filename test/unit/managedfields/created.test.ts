// A create's entry written straight from the object (created.ts) is the
// entry the general road makes: compared on objects of every shape the typed
// walk knows (maps, structs, list-maps, sets, atomic lists and maps,
// untyped values, nulls, empty containers, duplicated items, ignored
// sub-resource fields, stripped metadata), against the general road reached
// by sending the reset entry (a list of one empty entry), which a create
// treats as none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldPaths, updateManagedFields, type UpdateOptions } from '../../../src/machinery/managedfields/fieldmanager.js';
import { createdFieldsV1 } from '../../../src/machinery/managedfields/created.js';
import { metadataJson } from '../../../src/machinery/managedfields/encode.js';
import { typeInfoOf } from '../../../src/api/typeinfo.js';
import { customKindOf } from '../../../src/api/apiextensions/customkind.js';
import { podType } from '../patch/fixtures.js';
import { operatorObject, operatorSchema } from '../../../bench/schemavalidation.js';

type Obj = Record<string, any>;
const now = new Date('2024-01-01T00:00:00Z');

function bothRoads(obj: Obj, opts: UpdateOptions): [unknown, unknown] {
  const fast = updateManagedFields(undefined, obj, opts).managedFields;
  const general = updateManagedFields(undefined, { ...obj, metadata: { ...obj.metadata, managedFields: [{}] } }, opts).managedFields;
  return [fast, general];
}

const pods: Obj[] = [
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u', creationTimestamp: 'x' } },
  {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: JSON.parse('{"app":"web","__proto__":"x"}'), annotations: {}, finalizers: ['a', 'b'] },
    spec: {
      replicas: 2, paused: null,
      containers: [
        { name: 'b', image: 'i', args: ['x', 'x'], env: [{ name: 'E', value: '1' }], ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 80, protocol: 'UDP' }] },
        { name: 'a', image: 'j', ports: [] },
      ],
      volumes: [{ name: 'v', emptyDir: {} }], tags: ['z', 'a', 'm'], hosts: ['h1', 'h1'],
      selector: { matchLabels: { a: 'b' } }, strategy: { rollingUpdate: { maxSurge: 1 } }, nodeSelector: {},
      config: { deep: { list: [1, { x: null }] }, 'f:odd': true }, matrix: [[1, 2], [3]],
    },
    status: { phase: 'Running' },
  },
  // Items sharing an identity: the general road merges them; the straight road leaves them to it.
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }], tags: ['t', 't'] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ image: 'no name' }, 'not an object', null] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: null, status: {} },
];

test('a create\'s entry written straight from the object is the general road\'s', () => {
  for (const [i, pod] of pods.entries()) {
    for (const extra of [{}, { ignoredFields: fieldPaths('status') }, { subresource: 'status', ignoredFields: fieldPaths('spec', 'metadata') }, { manager: '' }]) {
      const [fast, general] = bothRoads(pod, { manager: 'maker', typeInfo: podType, apiVersion: 'v1', now, ...extra });
      assert.deepEqual(fast, general, `pod ${i} ${JSON.stringify(extra)}`);
    }
  }
  const app = customKindOf({
    spec: { group: 'bench.example.com', scope: 'Namespaced', names: { plural: 'apps', kind: 'App' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: operatorSchema(true) } }] },
  });
  for (let i = 0; i < 5; i++) {
    const obj = { ...operatorObject(i), apiVersion: 'bench.example.com/v1', metadata: { name: `a${i}`, namespace: 'x', labels: { i: String(i) } }, status: { phase: 'Ready' } };
    const [fast, general] = bothRoads(obj, { manager: 'maker', typeInfo: typeInfoOf(app.schema), apiVersion: 'bench.example.com/v1', now, ignoredFields: fieldPaths('status') });
    assert.deepEqual(fast, general, `app ${i}`);
    assert.ok(JSON.stringify(fast).includes('"k:{\\"name\\":\\"c1\\"}"'), 'containers are a list-map keyed by name');
  }
});

test('the straight road gives up on merged items and says when nothing is owned', () => {
  assert.equal(createdFieldsV1(pods[2]!, podType), undefined);
  assert.equal(createdFieldsV1({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, podType, fieldPaths('apiVersion', 'kind', 'metadata', 'metadata.name')), null);
});

test('the straight road orders fields as upstream (by UTF-8 bytes), also beyond the engine\'s own order', () => {
  const names = ['z', '\uff01', 'a', '\u{1F600}', 'é', '\ue000', 'B', '\u{10000}x', '\ud7ff'];
  const many = [...names, ...Array.from({ length: 30 }, (_, i) => `k${(i * 7) % 30}`)];
  for (const labels of [Object.fromEntries(names.map((n) => [n, 'v'])), Object.fromEntries(many.map((n) => [n, 'v'])), { b: 'v', a: 'v', c: 'v' }]) {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels } };
    const [fast, general] = bothRoads(pod, { manager: 'maker', typeInfo: podType, apiVersion: 'v1', now });
    assert.equal(JSON.stringify(fast), JSON.stringify(general));
  }
});

test('a create of the shape of the last one reuses its FieldsV1; any other shape gets its own, the general road\'s', () => {
  const opts: UpdateOptions = { manager: 'maker', typeInfo: podType, apiVersion: 'v1', now, ignoredFields: fieldPaths('status') };
  const base = (): Obj => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { app: 'web' } },
    spec: { containers: [{ name: 'a', image: 'x', args: ['1'] }, { name: 'b', image: 'y' }], tags: ['t', 'u'], nodeSelector: { zone: 'z' } },
  });
  const fieldsOf = (obj: Obj) => (updateManagedFields(undefined, obj, opts).managedFields as Obj[])[0]!.fieldsV1;
  const first = fieldsOf(base());
  const same = base();
  same.metadata.name = 'q';
  same.spec.containers[0].image = 'other';
  same.spec.containers[0].args = ['2', '3'];
  same.spec.nodeSelector.zone = 'elsewhere';
  assert.equal(fieldsOf(same), first, 'other values in the same fields: the same FieldsV1, shared');
  assert.ok(Object.isFrozen(first));
  const variants: [string, (o: Obj) => void][] = [
    ['a label more', (o) => { o.metadata.labels.tier = 'db'; }],
    ['another label', (o) => { o.metadata.labels = { tier: 'web' }; }],
    ['a container renamed', (o) => { o.spec.containers[1].name = 'c'; }],
    ['a container more', (o) => { o.spec.containers.push({ name: 'c' }); }],
    ['a container without its key', (o) => { delete o.spec.containers[1].name; }],
    ['a set value changed', (o) => { o.spec.tags[1] = 'v'; }],
    ['a field of a container gone', (o) => { delete o.spec.containers[0].args; }],
    ['a map become a scalar', (o) => { o.spec.nodeSelector = null; }],
    ['fields in another order', (o) => { o.spec = { tags: o.spec.tags, nodeSelector: o.spec.nodeSelector, containers: o.spec.containers }; }],
    ['merged items', (o) => { o.spec.containers[1].name = 'a'; }],
    ['an ignored field', (o) => { o.status = { phase: 'Running' }; }],
  ];
  for (const [what, change] of variants) {
    const obj = base();
    change(obj);
    const [fast, general] = bothRoads(obj, opts);
    assert.deepEqual(fast, general, what);
    // After each variant, the first shape again: still the general road's.
    const [again, againGeneral] = bothRoads(base(), opts);
    assert.deepEqual(again, againGeneral, `${what}, then the first shape`);
  }
});

test('metadata holding a kept FieldsV1 is written as JSON.stringify writes it, in upstream\'s member order', () => {
  const opts: UpdateOptions = { manager: 'maker', typeInfo: podType, apiVersion: 'v1', now };
  const pod = (): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { containers: [{ name: 'a', image: 'x' }] } });
  updateManagedFields(undefined, pod(), opts);
  const created = updateManagedFields(undefined, pod(), opts).object as Obj;
  const entries = created.metadata.managedFields as Obj[];
  const metadatas: Obj[] = [
    created.metadata,
    { ...created.metadata, annotations: undefined, 'with "quotes"': 'é\u2028', managedFields: [...entries, 'odd', null, { ...entries[0], extra: undefined }] },
  ];
  for (const metadata of metadatas) assert.equal(metadataJson(metadata), JSON.stringify(metadata));
  // Members a write built in another order are written in ObjectMeta's, so the same metadata is the same bytes.
  assert.equal(metadataJson({ managedFields: entries, extra: 1, uid: 'u', name: 'n' }), JSON.stringify({ name: 'n', uid: 'u', managedFields: entries, extra: 1 }));
});
