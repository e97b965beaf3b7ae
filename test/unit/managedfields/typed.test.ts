import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toFieldsV1 } from '../../../src/machinery/managedfields/fieldsv1.js';
import { FieldSet } from '../../../src/machinery/managedfields/fieldset.js';
import { compareValues, mergeValues } from '../../../src/machinery/managedfields/merge.js';
import { fieldPE as f, pathString } from '../../../src/machinery/managedfields/pathelement.js';
import { reconcileWithSchema, toFieldSet, type ValidationError } from '../../../src/machinery/managedfields/typed.js';
import { list, podType, scalar, struct, untypedT } from '../patch/fixtures.js';

test('fields of a value: struct fields implied, map keys, keyed and set items owned, atomic lists whole', () => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', labels: { app: 'x' }, annotations: {}, finalizers: ['f1'] },
    spec: {
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }],
      hosts: ['a', 'b'], selector: { matchLabels: { a: 'b' } }, tags: ['t'], replicas: null,
    },
  };
  assert.deepEqual(toFieldsV1(toFieldSet(pod, podType)), {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:annotations': {}, 'f:finalizers': { 'v:"f1"': {} }, 'f:labels': { 'f:app': {} }, 'f:name': {} },
    'f:spec': {
      'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } },
      'f:hosts': {}, 'f:replicas': {}, 'f:selector': {}, 'f:tags': { 'v:"t"': {} },
    },
  });
});

test('fields of schemaless values: every map key is owned, lists are atomic', () => {
  const set = toFieldSet({ spec: { a: { b: 1 }, l: [{ x: 1 }] } }, untypedT);
  assert.deepEqual(toFieldsV1(set), { 'f:spec': { '.': {}, 'f:a': { '.': {}, 'f:b': {} }, 'f:l': {} } });
});

test('invalid and duplicate items of an applied configuration are reported', () => {
  const errs: ValidationError[] = [];
  toFieldSet({ spec: { containers: [{ name: 'a' }, { name: 'a' }, { image: 'x' }], tags: ['t', 't', { a: 1 }] } }, podType, errs);
  assert.deepEqual(errs.map((e) => `${pathString(e.path)}: ${e.message}`), [
    '.spec.containers: element 2: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    '.spec.containers: duplicate entries for key [name="a"]',
    ".spec.tags: element 2: associative list without keys has an element that's a map type",
    '.spec.tags: duplicate entries for key [="t"]',
  ]);
});

test('compare: added, modified and removed, containers included when they appear', () => {
  const before = { metadata: { labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'c', image: 'i' }], hosts: ['x'] } };
  const after = { metadata: { labels: { a: '9' } }, spec: { containers: [{ name: 'c', image: 'i' }, { name: 'd', image: 'j' }], hosts: ['y'], strategy: { rollingUpdate: { maxSurge: 1 } } } };
  const c = compareValues(before, after, podType);
  assert.deepEqual(c.modified.paths().map(pathString), ['.metadata.labels.a', '.spec.hosts']);
  assert.deepEqual(c.removed.paths().map(pathString), ['.metadata.labels.b']);
  assert.deepEqual(toFieldsV1(c.added), {
    'f:spec': {
      'f:containers': { 'k:{"name":"d"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
      'f:strategy': { '.': {}, 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {} } },
    },
  });
  assert.ok(compareValues(after, structuredClone(after), podType).modified.isEmpty());
});

test('merge: config leaves win, granular containers merge, live list items keep their place', () => {
  const liveObj = {
    metadata: { labels: { a: '1' } },
    spec: { containers: [{ name: 'a', image: 'a:1', args: ['x'] }, { name: 'b', image: 'b:1' }], hosts: ['h'], selector: { matchLabels: { x: 'y' } } },
  };
  const config = { metadata: { labels: { b: '2' } }, spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'c', image: 'c' }], hosts: ['i'], selector: { matchLabels: { z: 'w' } } } };
  assert.deepEqual(mergeValues(liveObj, config, podType), {
    metadata: { labels: { a: '1', b: '2' } },
    spec: {
      containers: [{ name: 'a', image: 'a:1', args: ['x'] }, { name: 'b', image: 'b:2' }, { name: 'c', image: 'c' }],
      hosts: ['i'],
      selector: { matchLabels: { z: 'w' } },
    },
  });
  // the configuration orders the items it shares with the live list; live-only items stay where the walk meets them
  const reordered = mergeValues({ spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'x' }] } },
    { spec: { containers: [{ name: 'b' }, { name: 'a' }] } }, podType) as any;
  assert.deepEqual(reordered.spec.containers.map((c: any) => c.name), ['b', 'x', 'a']);
});

test('a list or map turned atomic gives its owners the whole of it', () => {
  const granular = struct({ spec: struct({ items: list(struct({ name: scalar, v: scalar }), { listType: 'map', listMapKeys: ['name'] }) }) });
  const atomic = struct({ spec: struct({ items: list(struct({ name: scalar, v: scalar }), { listType: 'atomic' }) }) });
  const set = toFieldSet({ spec: { items: [{ name: 'a', v: 1 }] } }, granular);
  const reconciled = reconcileWithSchema(set, atomic);
  assert.deepEqual(toFieldsV1(reconciled), { 'f:spec': { 'f:items': {} } });
  // the reverse derives no owners of the items
  assert.ok(reconcileWithSchema(reconciled, granular).equals(reconciled));
  assert.ok(reconcileWithSchema(set, granular) === set);
  void FieldSet; void f;
});
