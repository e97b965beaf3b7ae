import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyStrategicMergePatch as smp } from '../../../src/machinery/patch/strategic.js';
import { ApiError } from '../../../src/machinery/errors.js';
import { podType, untypedT } from './fixtures.js';

const live = () => ({
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
  spec: {
    containers: [{ name: 'a', image: 'a:1', args: ['1'] }, { name: 'b', image: 'b:1' }],
    hosts: ['h1', 'h2'],
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
    volumes: [{ name: 'v', emptyDir: {} }],
  },
});

function code(fn: () => unknown, want: number, message?: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, want, e.message);
    if (message) assert.match(want === 422 ? e.details?.causes?.[0].message ?? '' : e.message, message);
    return true;
  });
}

test('strategic: maps merge, null deletes, lists without merge strategy are replaced', () => {
  const before = live();
  const out = smp(before, { metadata: { labels: { a: null, c: '3' } }, spec: { hosts: ['h3'], containers: [{ name: 'a', args: ['2'] }] } }, podType);
  assert.deepEqual(out.metadata, { name: 'p', labels: { b: '2', c: '3' }, finalizers: ['x', 'y'] });
  assert.deepEqual((out.spec as any).hosts, ['h3']);
  assert.deepEqual((out.spec as any).containers[0], { name: 'a', image: 'a:1', args: ['2'] });
  assert.deepEqual(before, live(), 'input untouched');
  // a null for a missing key is ignored; nulls inside new values are dropped
  const added = smp({}, { spec: { nodeSelector: { a: 'x', b: null } }, gone: null }, podType);
  assert.deepEqual(added, { spec: { nodeSelector: { a: 'x' } } });
});

test('strategic: merge lists by key keep live order; new items lead', () => {
  const names = (o: any) => o.spec.containers.map((c: any) => `${c.name}=${c.image}`);
  // a new item goes before the live items that do not precede a patched one
  assert.deepEqual(names(smp(live(), { spec: { containers: [{ name: 'c', image: 'c:1' }] } }, podType)), ['c=c:1', 'a=a:1', 'b=b:1']);
  // patch items keep the patch order after the live items before them
  assert.deepEqual(names(smp(live(), { spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }] } }, podType)),
    ['a=a:1', 'b=b:2', 'c=c:1']);
  assert.deepEqual(names(smp(live(), { spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'a', image: 'a:2' }] } }, podType)),
    ['b=b:2', 'a=a:2']);
  // primitive lists with the merge strategy are sets
  const fin = smp(live(), { metadata: { finalizers: ['y', 'z'] } }, podType);
  assert.deepEqual((fin.metadata as any).finalizers, ['x', 'y', 'z']);
});

test('strategic: $patch on list items and maps', () => {
  const del = smp(live(), { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }, podType);
  assert.deepEqual((del.spec as any).containers.map((c: any) => c.name), ['b']);
  const rep = smp(live(), { spec: { containers: [{ name: 'z', image: 'z' }, { $patch: 'replace' }] } }, podType);
  assert.deepEqual((rep.spec as any).containers, [{ name: 'z', image: 'z' }]);
  const mapReplace = smp(live(), { metadata: { labels: { $patch: 'replace', only: 'me' } } }, podType);
  assert.deepEqual((mapReplace.metadata as any).labels, { only: 'me' });
  const mapDelete = smp(live(), { spec: { strategy: { $patch: 'delete' } } }, podType);
  assert.deepEqual((mapDelete.spec as any).strategy, {});
  // a new key whose value is a directive is not stored; nested directives are stripped
  const fresh = smp({}, { spec: { strategy: { $patch: 'delete' }, nodeSelector: { k: 'v', x: { $patch: 'replace' } } } }, podType);
  assert.deepEqual(fresh, { spec: { nodeSelector: { k: 'v' } } });
  code(() => smp(live(), { spec: { containers: [{ name: 'a', $patch: 'merge' }] } }, podType), 400, /merging lists cannot yet be specified in the patch/);
  code(() => smp(live(), { spec: { containers: [{ name: 'a', $patch: 'frob' }] } }, podType), 400, /unknown patch type: frob/);
  code(() => smp(live(), { metadata: { labels: { $patch: 'merge' } } }, podType), 400, /unknown patch type: merge in map/);
  code(() => smp(live(), { spec: { containers: [{ $patch: 'delete' }] } }, podType), 400, /does not contain declared merge key: name/);
  code(() => smp(live(), { spec: { containers: [{ image: 'x' }] } }, podType), 400, /does not contain declared merge key: name/);
});

test('strategic: $retainKeys clears unlisted keys and validates the patch', () => {
  const out = smp(live(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, podType);
  assert.deepEqual((out.spec as any).strategy, { type: 'Recreate' });
  const vol = smp(live(), { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }] } }, podType);
  assert.deepEqual((vol.spec as any).volumes, [{ name: 'v', hostPath: { path: '/x' } }]);
  code(() => smp(live(), { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 2 } } } }, podType), 400, /^invalid patch format of retainKeys$/);
  code(() => smp(live(), { spec: { strategy: { $retainKeys: 'type' } } }, podType), 400, /^invalid patch format of retainKeys$/);
  // null values need not be listed
  const cleared = smp(live(), { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null } } }, podType);
  assert.deepEqual((cleared.spec as any).strategy, { type: 'RollingUpdate' });
});

test('strategic: $deleteFromPrimitiveList removes scalars from a merge list', () => {
  const out = smp(live(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['x', 'nope'] } }, podType);
  assert.deepEqual((out.metadata as any).finalizers, ['y']);
  const untouched = smp({ metadata: {} }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } }, podType);
  assert.deepEqual(untouched, { metadata: {} });
  code(() => smp(live(), { metadata: { '$deleteFromPrimitiveListfinalizers': ['x'] } }, podType), 400, /^invalid patch format of primitive list$/);
});

test('strategic: $setElementOrder orders merged lists', () => {
  const out = smp(live(), {
    spec: {
      '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }, { name: 'a' }],
      containers: [{ name: 'c', image: 'c:1' }],
    },
  }, podType);
  assert.deepEqual((out.spec as any).containers.map((c: any) => c.name), ['b', 'c', 'a']);
  // kubectl's client-side apply: order list plus a changed item
  const csa = smp(live(), {
    spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'n' }], containers: [{ name: 'n', image: 'n:1' }] },
  }, podType);
  assert.deepEqual((csa.spec as any).containers.map((c: any) => c.name), ['a', 'b', 'n']);
  // primitives, with deletions in the same patch
  const fin = smp(live(), { metadata: { '$setElementOrder/finalizers': ['z', 'x'], finalizers: ['z'], '$deleteFromPrimitiveList/finalizers': ['y'] } }, podType);
  assert.deepEqual((fin.metadata as any).finalizers, ['z', 'x']);
  // the patch list must follow the order list
  code(() => smp(live(), { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'b', image: 'x' }] } }, podType),
    400, /doesn't match \$setElementOrder list/);
  code(() => smp(live(), { spec: { '$setElementOrder/containers': { name: 'a' } } }, podType), 400, /expected a \[\]interface \{\}/);
});

test('strategic: lists of lists are 422, malformed patches 400, schemaless fields merge maps', () => {
  code(() => smp({ spec: { matrix: [[1]] } }, { spec: { matrix: [[2]] } }, podType), 422, /^lists of lists are not supported$/);
  code(() => smp(live(), [1], podType), 400, /cannot unmarshal array/);
  code(() => smp({ spec: { containers: ['a'] } }, { spec: { containers: [{ name: 'a' }] } }, podType), 400, /list element types are not identical/);
  const out = smp({ spec: { config: { a: { b: 1, c: [1] } } } }, { spec: { config: { a: { d: 2, c: [2] } } } }, podType);
  assert.deepEqual(out, { spec: { config: { a: { b: 1, c: [2], d: 2 } } } });
  const u = smp({ a: [1], b: { c: 1 } }, { a: [2], b: { d: 2 } }, untypedT);
  assert.deepEqual(u, { a: [2], b: { c: 1, d: 2 } });
});

test('strategic: list-map keys with merge key on multiple-key lists merge by the strategic key', () => {
  const base = { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }] }] } };
  const out = smp(base, { spec: { containers: [{ name: 'a', ports: [{ containerPort: 53, name: 'dns' }] }] } }, podType);
  assert.deepEqual((out.spec as any).containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP', name: 'dns' }]);
});
