import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDuplicateFields, jsonPointer, numberLiterals, numberTextOf, scanJsonText } from '../../../src/machinery/duplicates.js';
import { maxNestingDepth, valueExceedsDepth } from '../../../src/machinery/limits.js';
import type { ApiError } from '../../../src/machinery/errors.js';

test('duplicate keys are found with their paths, at any depth', () => {
  assert.deepEqual(findDuplicateFields('{"a":1,"b":{"c":"x","c":"y"},"a":[{"k":1,"k":2}],"s":"\\"a\\":1"}'), ['b.c', 'a', 'a[0].k']);
  assert.deepEqual(findDuplicateFields('{"a":{},"b":[],"c":[1,2,{"d":null}],"e":true}'), []);
  assert.deepEqual(findDuplicateFields(' { "x\\u0041" : 1 , "xA" : 2 } '), ['xA']);
});

test('prototype names are ordinary keys', () => {
  assert.deepEqual(findDuplicateFields('{"__proto__":1,"constructor":2,"__proto__":3,"toString":{"valueOf":1,"valueOf":2}}'), ['__proto__', 'toString.valueOf']);
});

test('number literals a double does not hold as written are kept by JSON pointer', () => {
  const text = '{"count":1e10,"n":{"a/b":18446744073709551616,"c~d":[1,1.0,-0.5,123456789012345,1234567890123456]},"s":"1.5","ok":12}';
  assert.deepEqual([...numberLiterals(text)], [
    ['/count', '1e10'],
    ['/n/a~1b', '18446744073709551616'],
    ['/n/c~0d/1', '1.0'],
    ['/n/c~0d/2', '-0.5'],
    ['/n/c~0d/4', '1234567890123456'],
  ]);
  // A repeated key keeps its last literal, as JSON.parse keeps its last value.
  assert.deepEqual([...numberLiterals('{"a":1.5,"a":2,"b":2,"b":2.5}')], [['/b', '2.5']]);
  assert.equal(jsonPointer(['metadata', 'labels', 'a/b~c', 0]), '/metadata/labels/a~1b~0c/0');
});

test('the literal text is walked once, on the first question', () => {
  const lookup = numberTextOf('{"a":[1E2]}');
  assert.equal(lookup('/a/0'), '1E2');
  assert.equal(lookup('/a/1'), undefined);
});

test('text nested deeper than the limit is refused, not recursed into', () => {
  const deep = `${'['.repeat(maxNestingDepth + 1)}${']'.repeat(maxNestingDepth + 1)}`;
  assert.throws(() => findDuplicateFields(deep), (e: ApiError) => e.code === 400);
  const limit = `${'['.repeat(maxNestingDepth)}1.5${']'.repeat(maxNestingDepth)}`;
  assert.equal(numberLiterals(limit).size, 1);
});

test('one walk answers depth, repeated keys and number text together, and ends on malformed text', () => {
  const text = '{"a":1.50,"b":{"c":1,"c":2},"n":[18446744073709551616]}';
  const facts = scanJsonText(text, true);
  assert.deepEqual(facts.duplicates(JSON.parse(text)), ['b.c']);
  assert.equal(facts.numberText!('/a'), '1.50');
  assert.equal(facts.numberText!('/n/0'), '18446744073709551616');
  assert.equal(facts.numberText!('/b/c'), undefined);
  // Repeated keys are only looked for when asked.
  assert.deepEqual(scanJsonText('{"c":1,"c":2}', false).duplicates(JSON.parse('{"c":1,"c":2}')), []);
  // Too deep is refused by either road, before any parse.
  const deep = `${'['.repeat(maxNestingDepth + 1)}${']'.repeat(maxNestingDepth + 1)}`;
  for (const dup of [true, false]) assert.throws(() => scanJsonText(deep, dup), (e: ApiError) => e.code === 400);
  // Malformed text ends the walk (JSON.parse then reports it): nothing loops.
  for (const bad of ['{', '[', '{"a"', '{,}', '[1,', '{"a":[}', '{"a":1.5', '[[[', '{"a"::}', '"abc', '{"a":1}}}]']) {
    assert.doesNotThrow(() => scanJsonText(bad, true), bad);
  }
});

test('text without a number a double may change is walked key by key only when its value lost members', () => {
  const cases: Array<[string, string[]]> = [
    ['{"a":{"x":1,"y":[{"p":1},{"p":2}]},"b":"1.5e3 {\\"c\\":1}","a":{"x":2}}', ['a']],
    ['{"a":1,"\\u0061":2}', ['a']],
    ['{"l":[{"k":1,"k":2},{"k":3}],"__proto__":{"z":1},"__proto__":{"z":2}}', ['l[0].k', '__proto__']],
    ['{"s":"a:b,c:d","t":true,"f":false,"n":[1e0]}', []],
    ['{"s":"a:b","o":{"x":{"y":{}}},"e":[],"n":[-12,0,123456789012345]}', []],
  ];
  for (const [text, want] of cases) {
    const value = JSON.parse(text);
    assert.deepEqual(scanJsonText(text, true).duplicates(value), want, text);
    assert.deepEqual(findDuplicateFields(text), want, text);
  }
  // A number a double may change has its literal kept, whether or not it looks like one inside a string.
  assert.equal(scanJsonText('{"s":"1.5","n":2E3}', false).numberText!('/n'), '2E3');
  assert.equal(scanJsonText('{"s":"1.5","n":2}', false).numberText, undefined);
  assert.equal(scanJsonText('{"n":1234567890123456}', false).numberText!('/n'), '1234567890123456');
});

test('a decoded value deeper than the limit is found at any depth, without running out of stack', () => {
  const chain = (levels: number, leaf: unknown = 1): unknown => {
    let v: unknown = leaf;
    for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
    return v;
  };
  assert.equal(valueExceedsDepth(chain(maxNestingDepth)), false);
  assert.equal(valueExceedsDepth(chain(maxNestingDepth + 1)), true);
  assert.equal(valueExceedsDepth(chain(200_000)), true);
  assert.equal(valueExceedsDepth({ a: 1, b: [1, { c: chain(maxNestingDepth - 3) }] }), false);
  assert.equal(valueExceedsDepth({ a: 1, b: [1, { c: chain(maxNestingDepth - 2) }] }), true);
  assert.equal(valueExceedsDepth(JSON.parse('{"__proto__":{"a":[[]]}}'), 3), true);
  assert.equal(valueExceedsDepth('x', 0), false);
});
