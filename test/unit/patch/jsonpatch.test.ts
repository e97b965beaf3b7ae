import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonPatch } from '../../../src/machinery/patch/jsonpatch.js';
import { ApiError } from '../../../src/machinery/errors.js';

const doc = () => ({ metadata: { name: 'a', labels: { 'app/x': 'y', 'a~b': 'z' } }, spec: { list: [1, 2, 3] } });

function rejects(fn: () => unknown, code: number, detail?: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, code);
    if (code === 422) {
      assert.equal(e.reason, 'Invalid');
      assert.equal(e.message, 'the server rejected our request due to an error in our request');
      assert.equal(e.details?.causes?.[0].reason, 'UnexpectedServerResponse');
      if (detail) assert.match(e.details?.causes?.[0].message ?? '', detail);
    } else if (detail) {
      assert.match(e.message, detail);
    }
    return true;
  });
}

test('json patch: the six operations', () => {
  const d = doc();
  const out = jsonPatch(d, [
    { op: 'add', path: '/metadata/labels/new', value: 'v' },
    { op: 'remove', path: '/metadata/labels/a~0b' },
    { op: 'replace', path: '/metadata/labels/app~1x', value: 'w' },
    { op: 'add', path: '/spec/list/-', value: 4 },
    { op: 'add', path: '/spec/list/0', value: 0 },
    { op: 'move', from: '/metadata/name', path: '/spec/name' },
    { op: 'copy', from: '/spec/list', path: '/spec/copy' },
    { op: 'test', path: '/spec/copy', value: [0, 1, 2, 3, 4] },
    { op: 'remove', path: '/spec/list/1' },
  ]);
  assert.deepEqual(out, {
    metadata: { labels: { 'app/x': 'w', new: 'v' } },
    spec: { list: [0, 2, 3, 4], name: 'a', copy: [0, 1, 2, 3, 4] },
  });
  assert.deepEqual(d, doc(), 'the input is not modified');
});

test('json patch: library quirks clients rely on', () => {
  // replace of a missing object key adds it; negative indices count from the end
  assert.deepEqual(jsonPatch({ a: {} }, [{ op: 'replace', path: '/a/b', value: 1 }]), { a: { b: 1 } });
  assert.deepEqual(jsonPatch({ l: [1, 2, 3] }, [{ op: 'remove', path: '/l/-1' }]), { l: [1, 2] });
  // test of a missing value against null passes; the copy is independent
  assert.deepEqual(jsonPatch({ a: 1 }, [{ op: 'test', path: '/b', value: null }]), { a: 1 });
  const out = jsonPatch({ a: { x: 1 } }, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'replace', path: '/b/x', value: 2 }]);
  assert.deepEqual(out, { a: { x: 1 }, b: { x: 2 } });
  // add without value sets null
  assert.deepEqual(jsonPatch({}, [{ op: 'add', path: '/a' }]), { a: null });
});

test('json patch: failures while applying are 422 with the library text', () => {
  rejects(() => jsonPatch(doc(), [{ op: 'test', path: '/metadata/name', value: 'b' }]), 422, /^testing value \/metadata\/name failed: test failed$/);
  rejects(() => jsonPatch(doc(), [{ op: 'add', path: '/missing/x', value: 1 }]), 422, /add operation does not apply: doc is missing path: "\/missing\/x": missing value/);
  rejects(() => jsonPatch(doc(), [{ op: 'remove', path: '/metadata/nope' }]), 422, /error in remove for path: '\/metadata\/nope': Unable to remove nonexistent key: nope: missing value/);
  rejects(() => jsonPatch(doc(), [{ op: 'replace', path: '/spec/list/9', value: 1 }]), 422, /replace operation does not apply: doc is missing key/);
  rejects(() => jsonPatch(doc(), [{ op: 'add', path: '/spec/list/9', value: 1 }]), 422, /Unable to access invalid index: 9: invalid index referenced/);
  rejects(() => jsonPatch(doc(), [{ op: 'add', path: '/spec/list/x', value: 1 }]), 422, /value was not a proper array index: 'x'/);
  rejects(() => jsonPatch(doc(), [{ op: 'frob', path: '/a' }]), 422, /^Unexpected kind: frob$/);
  rejects(() => jsonPatch(doc(), [{ path: '/a' }]), 422, /^Unexpected kind: unknown$/);
  rejects(() => jsonPatch(doc(), [{ op: 'move', from: '/nope', path: '/a' }]), 422, /Unable to remove nonexistent key/);
  rejects(() => jsonPatch(doc(), [{ op: 'add', value: 1 }]), 422, /failed to decode path/);
  // a failure leaves nothing half-applied for the caller
  const d = doc();
  rejects(() => jsonPatch(d, [{ op: 'add', path: '/x', value: 1 }, { op: 'test', path: '/x', value: 2 }]), 422);
  assert.deepEqual(d, doc());
});

test('json patch: malformed documents are 400, too many operations 413', () => {
  rejects(() => jsonPatch(doc(), { op: 'add' }), 400, /cannot unmarshal object into Go value of type jsonpatch.Patch/);
  rejects(() => jsonPatch(doc(), ['add']), 400, /cannot unmarshal string into Go value of type jsonpatch.Operation/);
  const many = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/spec', value: null }));
  rejects(() => jsonPatch(doc(), many), 413, /The allowed maximum operations in a JSON patch is 10000, got 10001/);
});
