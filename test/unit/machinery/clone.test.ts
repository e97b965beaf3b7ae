import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clone } from '../../../src/machinery/patch/json.js';

test('a decoded object is copied as structuredClone copies it, sharing nothing with the original', () => {
  const original = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"},"__proto__":{"polluted":true},"constructor":"c"},"data":{"k":"v"},"list":[1,"two",null,{"deep":[true,false]}]}');
  original.metadata.resourceVersion = undefined;
  const copy = clone(original);
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
  const copy = clone(frozen);
  assert.deepStrictEqual(copy, { a: { b: [1, 2] } });
  assert.ok(!Object.isFrozen(copy) && !Object.isFrozen(copy.a.b));
  const when = new Date(0);
  const withDate = clone({ when });
  assert.ok(withDate.when instanceof Date && withDate.when !== when);
  let deep: Record<string, unknown> = { leaf: 'x' };
  for (let i = 0; i < 1000; i++) deep = { next: deep };
  assert.deepStrictEqual(clone(deep), structuredClone(deep));
  assert.throws(() => clone({ f: () => 1 }));
});
