import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from '../../../src/machinery/patch/mergepatch.js';
import { ApiError } from '../../../src/machinery/errors.js';

test('merge patch: the examples of RFC 7386', () => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [doc, patch, want] of cases) assert.deepEqual(applyMergePatch(doc, patch), want, JSON.stringify(patch));
});

test('merge patch: lists replace, input untouched, non-object patches are 400', () => {
  const doc = { metadata: { labels: { a: '1', b: '2' } }, spec: { list: [1, 2] } };
  const out = applyMergePatch(doc, { metadata: { labels: { a: null, c: '3' } }, spec: { list: [3] } });
  assert.deepEqual(out, { metadata: { labels: { b: '2', c: '3' } }, spec: { list: [3] } });
  assert.deepEqual(doc.metadata.labels, { a: '1', b: '2' });
  for (const bad of [null, 'x', 1, [1]]) {
    assert.throws(() => applyMergePatch(doc, bad), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'Invalid JSON Patch');
  }
});
