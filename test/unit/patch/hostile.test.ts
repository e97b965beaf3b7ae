// Hostile input to the three patch algorithms: keys that name Object.prototype
// members, copies that grow without end, and nesting at and past the limit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/machinery/errors.js';
import { maxNestingDepth, maxRequestBodyBytes } from '../../../src/machinery/limits.js';
import { applyJsonPatch, decodeJsonPatch, jsonPatch } from '../../../src/machinery/patch/jsonpatch.js';
import { applyMergePatch } from '../../../src/machinery/patch/mergepatch.js';
import { applyStrategicMergePatch } from '../../../src/machinery/patch/strategic.js';
import { encodedSize } from '../../../src/machinery/patch/json.js';
import { untyped } from '../../../src/machinery/patch/typeinfo.js';
import { list, podType, scalar, struct } from './fixtures.js';

type Obj = Record<string, any>;
const specialKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
/** JSON text parsed, so that `__proto__` arrives as an own key, as from a request body. */
const parse = (text: string): any => JSON.parse(text);
const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

function assertPristine(): void {
  assert.equal(({} as Obj).ref, undefined);
  assert.equal(({} as Obj).polluted, undefined);
  for (const k of ['ref', 'polluted', 'x', 'a', 'b']) assert.ok(!own(Object.prototype, k), `Object.prototype.${k}`);
  assert.equal(typeof ({}).toString, 'function');
  assert.equal(({}).constructor, Object);
}

function rejects(fn: () => unknown, code: number, message: string | RegExp, cause?: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, code);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    if (cause !== undefined) {
      const got = e.details?.causes?.[0].message ?? '';
      if (typeof cause === 'string') assert.equal(got, cause);
      else assert.match(got, cause);
    }
    return true;
  });
}

/** `{"a":{"a":...{}}}` with `levels` objects in all (the outermost is level 1). */
function chain(levels: number, key = 'a'): Obj {
  let v: Obj = {};
  for (let i = 1; i < levels; i++) v = { [key]: v };
  return v;
}
function chainText(levels: number, key = 'a'): string {
  return `${`{"${key}":`.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}
function depthOf(v: unknown): number {
  let d = 0;
  for (let cur: any = v; cur !== null && typeof cur === 'object'; cur = Array.isArray(cur) ? cur[0] : cur[Object.keys(cur)[0]]) d++;
  return d;
}

const tooDeepInput = 'the object provided is nested too deeply: exceeded max depth of 500';
const tooDeepResult = 'the patched object is nested too deeply: exceeded max depth of 500';

test('merge patch: __proto__ merges into an own key, never into Object.prototype', () => {
  const live = { metadata: { name: 'a' }, data: { x: '1' } };
  const out = applyMergePatch(live, parse('{"metadata":{"__proto__":{"ref":"x"}}}')) as Obj;
  assertPristine();
  assert.ok(own(out.metadata, '__proto__'));
  assert.deepEqual(Object.getOwnPropertyDescriptor(out.metadata, '__proto__')?.value, { ref: 'x' });
  assert.equal(Object.getPrototypeOf(out.metadata), Object.prototype);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(out.metadata.ref, undefined);
  // Merging again merges into the own key; null removes it.
  const again = applyMergePatch(out, parse('{"metadata":{"__proto__":{"polluted":true}}}')) as Obj;
  assert.deepEqual(Object.getOwnPropertyDescriptor(again.metadata, '__proto__')?.value, { ref: 'x', polluted: true });
  const removed = applyMergePatch(again, parse('{"metadata":{"__proto__":null}}')) as Obj;
  assert.ok(!own(removed.metadata, '__proto__'));
  assertPristine();
});

test('merge patch: every special key is an ordinary key (add, merge, replace, remove)', () => {
  for (const k of specialKeys) {
    const added = applyMergePatch({ data: {} }, parse(`{"data":{"${k}":"v"},"obj":{"${k}":{"b":2}}}`)) as Obj;
    assert.ok(own(added.data, k), k);
    assert.equal(Object.getOwnPropertyDescriptor(added.data, k)?.value, 'v');
    assert.deepEqual(Object.getOwnPropertyDescriptor(added.obj, k)?.value, { b: 2 }, k);
    const merged = applyMergePatch(added, parse(`{"obj":{"${k}":{"c":3}}}`)) as Obj;
    assert.deepEqual(Object.getOwnPropertyDescriptor(merged.obj, k)?.value, { b: 2, c: 3 }, k);
    const removed = applyMergePatch(merged, parse(`{"data":{"${k}":null},"missing":{"${k}":null}}`)) as Obj;
    assert.ok(!own(removed.data, k), k);
    assert.deepEqual(removed.missing, {});
    // Removing a key the object never had leaves inherited members alone.
    applyMergePatch({ data: {} }, parse(`{"data":{"${k}":null}}`));
    assertPristine();
  }
});

test('strategic merge patch: special keys in maps, merge-key values and directives', () => {
  for (const k of specialKeys) {
    const live = { metadata: { labels: { app: 'x' }, finalizers: ['a'] }, spec: { containers: [{ name: 'web', image: 'v1' }] } };
    const out = applyStrategicMergePatch(live, parse(`{
      "metadata": {"labels": {"${k}": "l"}, "annotations": {"${k}": {"deep": true}}, "finalizers": ["${k}"]},
      "spec": {"containers": [{"name": "${k}", "image": "i"}, {"name": "web", "${k}": "x"}], "config": {"${k}": {"y": 1}}}
    }`), podType) as Obj;
    assertPristine();
    assert.equal(Object.getOwnPropertyDescriptor(out.metadata.labels, k)?.value, 'l', k);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out.metadata.annotations, k)?.value, { deep: true }, k);
    assert.deepEqual(out.metadata.finalizers, [k, 'a'].sort((p, q) => (p === k ? -1 : q === k ? 1 : 0)));
    assert.deepEqual(out.spec.containers.map((c: Obj) => c.name).sort(), [k, 'web'].sort());
    const web = out.spec.containers.find((c: Obj) => c.name === 'web');
    assert.equal(Object.getOwnPropertyDescriptor(web, k)?.value, 'x', k);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out.spec.config, k)?.value, { y: 1 });

    // Directives naming the special key: delete an item, order a list, delete from a primitive list, retain keys.
    const directed = applyStrategicMergePatch(out, parse(`{
      "metadata": {"$deleteFromPrimitiveList/finalizers": ["${k}"], "labels": {"$retainKeys": ["${k}"], "${k}": "kept"}},
      "spec": {"containers": [{"name": "${k}", "$patch": "delete"}], "$setElementOrder/containers": [{"name": "web"}]}
    }`), podType) as Obj;
    assertPristine();
    assert.deepEqual(directed.metadata.finalizers, ['a']);
    assert.deepEqual(Object.keys(directed.metadata.labels), [k]);
    assert.equal(Object.getOwnPropertyDescriptor(directed.metadata.labels, k)?.value, 'kept');
    assert.deepEqual(directed.spec.containers.map((c: Obj) => c.name), ['web']);

    // A merging list field named by the special key: $setElementOrder/<key> and $deleteFromPrimitiveList/<key>.
    const named = struct({ [k]: list(scalar, { patchStrategy: 'merge' }) });
    const ordered = applyStrategicMergePatch(parse(`{"${k}": ["x", "y", "z"]}`),
      parse(`{"$setElementOrder/${k}": ["z", "y", "x"], "${k}": ["y"]}`), named) as Obj;
    assert.deepEqual(Object.getOwnPropertyDescriptor(ordered, k)?.value, ['z', 'y', 'x']);
    const pruned = applyStrategicMergePatch(ordered, parse(`{"$deleteFromPrimitiveList/${k}": ["y", "w"]}`), named) as Obj;
    assert.deepEqual(Object.getOwnPropertyDescriptor(pruned, k)?.value, ['z', 'x']);
    // A map replaced whole, and a key deleted with null.
    const replaced = applyStrategicMergePatch(out, parse(`{"spec": {"config": {"$patch": "replace", "${k}": 1}}, "metadata": {"labels": {"${k}": null}}}`), podType) as Obj;
    assert.deepEqual(Object.keys(replaced.spec.config), [k]);
    assert.ok(!own(replaced.metadata.labels, k));
    assertPristine();
  }
});

test('strategic merge patch: __proto__ stays an own key through merge, directives and list items', () => {
  const out = applyStrategicMergePatch({ spec: { containers: [] } },
    parse('{"metadata":{"__proto__":{"ref":"x"},"labels":{"__proto__":"y"}},"spec":{"containers":[{"name":"__proto__","__proto__":{"polluted":1}}]}}'), podType) as Obj;
  assertPristine();
  assert.deepEqual(Object.getOwnPropertyDescriptor(out.metadata, '__proto__')?.value, { ref: 'x' });
  assert.equal(Object.getOwnPropertyDescriptor(out.metadata.labels, '__proto__')?.value, 'y');
  assert.deepEqual(Object.getOwnPropertyDescriptor(out.spec.containers[0], '__proto__')?.value, { polluted: 1 });
  for (const o of [out, out.metadata, out.metadata.labels, out.spec.containers[0]]) assert.equal(Object.getPrototypeOf(o), Object.prototype);
});

test('json patch: special keys in paths are own keys; inherited members are not there', () => {
  for (const k of specialKeys) {
    const esc = k.replace(/~/g, '~0').replace(/\//g, '~1');
    const out = jsonPatch({ data: {} }, [
      { op: 'add', path: `/data/${esc}`, value: { ref: 'x' } },
      { op: 'add', path: `/data/${esc}/polluted`, value: true },
      { op: 'copy', from: `/data/${esc}`, path: '/copied' },
      { op: 'test', path: `/copied`, value: { ref: 'x', polluted: true } },
      { op: 'replace', path: `/meta`, value: { [k]: 'r' } },
      { op: 'move', from: `/data/${esc}`, path: `/moved` },
    ]) as Obj;
    assertPristine();
    assert.deepEqual(out.moved, { ref: 'x', polluted: true });
    assert.ok(!own(out.data, k));
    assert.equal(Object.getPrototypeOf(out.data), Object.prototype);
    // Inherited members are no values: paths through them are missing, removing them fails, testing them finds nothing.
    rejects(() => jsonPatch({ data: {} }, [{ op: 'add', path: `/data/${esc}/ref`, value: 'x' }]), 422,
      'the server rejected our request due to an error in our request', `add operation does not apply: doc is missing path: "/data/${esc}/ref": missing value`);
    rejects(() => jsonPatch({ data: {} }, [{ op: 'remove', path: `/data/${esc}` }]), 422,
      'the server rejected our request due to an error in our request', `error in remove for path: '/data/${esc}': Unable to remove nonexistent key: ${k}: missing value`);
    rejects(() => jsonPatch({ data: {} }, [{ op: 'test', path: `/data/${esc}`, value: 'x' }]), 422,
      'the server rejected our request due to an error in our request', `testing value /data/${esc} failed: test failed`);
    assertPristine();
  }
  // An operation's own members only: a `value` inherited from nowhere is no value.
  const ops = decodeJsonPatch(parse('[{"op":"add","path":"/x","__proto__":{"value":"inherited"}}]'));
  assert.equal(ops[0].hasValue, false);
  assert.deepEqual(applyJsonPatch({}, ops), { x: null });
});

test('json patch: copies are bounded by the accumulated copy size, as the library bounds them', () => {
  // Each copy doubles the list: the 27 copies upstream's limit stops would build gigabytes.
  const ops: unknown[] = [{ op: 'add', path: '/v', value: ['x'.repeat(50)] }];
  for (let i = 0; i < 27; i++) ops.push({ op: 'copy', from: '/v', path: '/v/-' });
  rejects(() => jsonPatch({}, ops), 422, 'the server rejected our request due to an error in our request',
    /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  assert.equal(maxRequestBodyBytes, 3145728);
  // Exactly at the limit is allowed; one byte more is not. "xyz" is 5 bytes encoded.
  const three = decodeJsonPatch([1, 2, 3].map((i) => ({ op: 'copy', from: '/a', path: `/c${i}` })));
  assert.deepEqual(applyJsonPatch({ a: 'xyz' }, three.slice(0, 2), { copySizeLimit: 10 }), { a: 'xyz', c1: 'xyz', c2: 'xyz' });
  rejects(() => applyJsonPatch({ a: 'xyz' }, three, { copySizeLimit: 10 }), 422, 'the server rejected our request due to an error in our request',
    'Unable to complete the copy, the accumulated size increase of copy is 15, exceeding the limit 10');
  // Adds and moves add no copies: many of them pass.
  const moves = decodeJsonPatch(Array.from({ length: 5000 }, (_, i) => ({ op: 'move', from: i % 2 ? '/b' : '/a', path: i % 2 ? '/a' : '/b' })));
  assert.deepEqual(applyJsonPatch({ a: 'x'.repeat(100000) }, moves, { copySizeLimit: 10 }), { a: 'x'.repeat(100000) });
});

test('encodedSize counts the bytes Go writes, without building the text', () => {
  const goLength = (v: unknown) => Buffer.byteLength(JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, '\\u0000'));
  const samples: unknown[] = [
    null, true, false, 0, -12, 1.5, 'plain', '', 'quote " back \\ nl \n tab \t bell \u0007 bs \b ff \f',
    '<script>&amp;</script>', 'é ü ß', '€ 中', '😀 🎉', 'sep \u2028 \u2029', [], {}, [1, 'a', null, [[]]],
    { 'k<': ['é', null, true, 1.5, '\n', '😀'], '': { x: {} } }, parse('{"__proto__":{"constructor":"toString"}}'),
  ];
  for (const v of samples) assert.equal(encodedSize(v), goLength(v), JSON.stringify(v));
});

test('json patch: a result nested past the limit is a 400, however it was built', () => {
  // A small value copied one level deeper each time (the copies stay far below the size limit).
  const ops: unknown[] = [];
  let path = '/a';
  for (let i = 0; i < 600; i++) {
    ops.push({ op: 'copy', from: '/c', path: `${path}/b` });
    path += '/b';
  }
  rejects(() => jsonPatch({ a: {}, c: {} }, ops), 400, tooDeepResult);
  // A subtree copied into itself doubles, and meets the size limit first.
  rejects(() => jsonPatch({ a: { b: {} } }, Array.from({ length: 600 }, (_, i) => ({ op: 'copy', from: '/a/b', path: `/a${'/b'.repeat(i + 1)}/b` }))),
    422, 'the server rejected our request due to an error in our request', /^Unable to complete the copy/);
  // One copy of a deep subtree below itself.
  rejects(() => jsonPatch({ a: chain(300) }, [{ op: 'copy', from: '/a', path: `/a${'/a'.repeat(298)}/x` }]), 400, tooDeepResult);
  // A value added deep enough, and a move deeper.
  rejects(() => jsonPatch({ a: chain(400) }, [{ op: 'add', path: `/a${'/a'.repeat(398)}/x`, value: chain(200) }]), 400, tooDeepResult);
  rejects(() => jsonPatch({ a: chain(400), b: chain(200) }, [{ op: 'move', from: '/b', path: `/a${'/a'.repeat(398)}/x` }]), 400, tooDeepResult);
  // A patch document itself too deep, even far too deep.
  rejects(() => decodeJsonPatch(parse(`[{"op":"add","path":"/x","value":${chainText(maxNestingDepth)}}]`)), 400, tooDeepInput);
  rejects(() => decodeJsonPatch(parse(`[{"op":"add","path":"/x","value":${chainText(100000)}}]`)), 400, tooDeepInput);
  assertPristine();
});

test('json patch: an object nested exactly to the limit still patches', () => {
  const deepPath = `/a${'/a'.repeat(maxNestingDepth - 2)}`; // the innermost object, at level 500
  const out = jsonPatch({ a: chain(maxNestingDepth - 1) }, [
    { op: 'add', path: `${deepPath}/leaf`, value: 'x' },
    { op: 'test', path: `${deepPath}/leaf`, value: 'x' },
    { op: 'copy', from: `${deepPath}/leaf`, path: `${deepPath}/copy` },
    { op: 'move', from: `${deepPath}/copy`, path: `${deepPath}/moved` },
    { op: 'replace', path: `${deepPath}/leaf`, value: 'y' },
  ]) as Obj;
  assert.equal(depthOf(out), maxNestingDepth);
  rejects(() => jsonPatch(out, [{ op: 'add', path: `${deepPath}/one-more`, value: {} }]), 400, tooDeepResult);
});

test('merge and strategic patches: nesting at the limit works, past it is a 400', () => {
  for (const apply of [(d: unknown, p: unknown) => applyMergePatch(d, p), (d: unknown, p: unknown) => applyStrategicMergePatch(d, p, untyped)]) {
    const live = { a: chain(maxNestingDepth - 1) };
    const out = apply(live, parse(`{"a":${chainText(maxNestingDepth - 1)}, "b": ${chainText(maxNestingDepth - 1, 'c')}}`)) as Obj;
    assert.equal(depthOf(out), maxNestingDepth);
    assert.equal(depthOf(out.b), maxNestingDepth - 1);
    rejects(() => apply(live, parse(`{"a":${chainText(maxNestingDepth)}}`)), 400, tooDeepInput);
    rejects(() => apply(live, parse(`{"a":${chainText(100000)}}`)), 400, tooDeepInput);
  }
});

test('strategic merge patch: list merges and directives stay linear on long lists', () => {
  const n = 50000;
  const names = (from: number, count: number) => Array.from({ length: count }, (_, i) => `n${from + i}`);
  // Primitive lists with the merge strategy: union, then deletions.
  const live = { metadata: { finalizers: names(0, n) }, spec: { containers: names(0, n).map((name) => ({ name, image: 'a' })) } };
  const merged = applyStrategicMergePatch(live, { metadata: { finalizers: names(n / 2, n) } }, podType) as Obj;
  assert.equal(merged.metadata.finalizers.length, n + n / 2);
  assert.deepEqual(new Set(merged.metadata.finalizers), new Set(names(0, n + n / 2)));
  const deleted = applyStrategicMergePatch(live, { metadata: { '$deleteFromPrimitiveList/finalizers': names(1, n - 1) } }, podType) as Obj;
  assert.deepEqual(deleted.metadata.finalizers, ['n0']);
  // Keyed lists: merge every item, delete half, and order them all backwards.
  const patch = {
    spec: {
      containers: [
        ...names(0, n / 2).reverse().map((name) => ({ name, image: 'b' })),
        ...names(n / 2, n / 2).map((name) => ({ name, $patch: 'delete' })),
      ],
      '$setElementOrder/containers': names(0, n / 2).reverse().map((name) => ({ name })),
    },
  };
  const keyed = applyStrategicMergePatch(live, patch, podType) as Obj;
  assert.equal(keyed.spec.containers.length, n / 2);
  assert.deepEqual(keyed.spec.containers[0], { name: `n${n / 2 - 1}`, image: 'b' });
  assert.deepEqual(keyed.spec.containers[n / 2 - 1], { name: 'n0', image: 'b' });
});
