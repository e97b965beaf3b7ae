import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyAsJson, copyDecoded } from '../../../src/machinery/copy.js';

test('a decoded object is copied as structuredClone copies it, sharing nothing with the original', () => {
  const original = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"},"__proto__":{"polluted":true},"constructor":"c"},"data":{"k":"v"},"list":[1,"two",null,{"deep":[true,false]}]}');
  original.metadata.resourceVersion = undefined;
  const copy = copyDecoded(original);
  assert.deepStrictEqual(copy, structuredClone(original));
  assert.ok(Object.hasOwn(copy.metadata, 'resourceVersion'), 'a key whose value is undefined is kept');
  // __proto__ stays an ordinary own key; no prototype changes.
  assert.ok(Object.hasOwn(copy.metadata, '__proto__'));
  assert.equal(Object.getPrototypeOf(copy.metadata), Object.prototype);
  assert.equal((copy.metadata as { polluted?: boolean }).polluted, undefined);
  copy.metadata.labels.x = '2';
  copy.list[3].deep.push(true);
  assert.equal(original.metadata.labels.x, '1');
  assert.deepEqual(original.list[3].deep, [true, false]);
});

test('frozen values, values that are not plain objects and very deep values are copied too', () => {
  const frozen = Object.freeze({ a: Object.freeze({ b: Object.freeze([1, 2]) }) });
  const copy = copyDecoded(frozen);
  assert.deepStrictEqual(copy, { a: { b: [1, 2] } });
  assert.ok(!Object.isFrozen(copy) && !Object.isFrozen(copy.a.b));
  const when = new Date(0);
  const withDate = copyDecoded({ when });
  assert.ok(withDate.when instanceof Date && withDate.when !== when);
  let deep: Record<string, unknown> = { leaf: 'x' };
  for (let i = 0; i < 1000; i++) deep = { next: deep };
  assert.deepStrictEqual(copyDecoded(deep), structuredClone(deep));
  assert.throws(() => copyDecoded({ f: () => 1 }));
});

test('copyAsJson gives what a JSON round trip gives: undefined and functions dropped, array holes null, dates as text, key order kept', () => {
  const original = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","__proto__":{"polluted":true},"constructor":"c","2":"n"},"data":{"k":"v","1":"one"},"list":[1,"two",null,{"deep":[true,false]}]}');
  original.metadata.resourceVersion = undefined;
  original.metadata.uid = 'u';
  original.list.push(undefined, () => 1, -0, Infinity, NaN);
  original.when = new Date(0);
  original.fn = () => 1;
  original.nested = { toJSON: () => 'as text' };
  let deep: Record<string, unknown> = { leaf: 'x', gone: undefined };
  for (let i = 0; i < 100; i++) deep = { next: deep };
  original.deep = deep;
  const viaText = JSON.parse(JSON.stringify(original));
  const copy = copyAsJson(original);
  assert.deepStrictEqual(copy, viaText);
  assert.equal(JSON.stringify(copy), JSON.stringify(original));
  assert.deepEqual(Object.keys(copy.metadata), Object.keys(viaText.metadata));
  assert.ok(Object.hasOwn(copy.metadata, '__proto__'));
  assert.equal((copy.metadata as { polluted?: boolean }).polluted, undefined);
  copy.data.k = 'w';
  assert.equal(original.data.k, 'v');
});
