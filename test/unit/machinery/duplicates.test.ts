import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDuplicateFields } from '../../../src/machinery/duplicates.js';

test('duplicate keys are found with their paths, at any depth', () => {
  assert.deepEqual(findDuplicateFields('{"a":1,"b":{"c":"x","c":"y"},"a":[{"k":1,"k":2}],"s":"\\"a\\":1"}'), ['b.c', 'a', 'a[0].k']);
  assert.deepEqual(findDuplicateFields('{"a":{},"b":[],"c":[1,2,{"d":null}],"e":true}'), []);
  assert.deepEqual(findDuplicateFields(' { "x\\u0041" : 1 , "xA" : 2 } '), ['xA']);
});
