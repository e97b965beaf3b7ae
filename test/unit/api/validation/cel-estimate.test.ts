// The static cost estimator against upstream's own figures: each row is a
// case of apiextensions' TestCostEstimation (the rule's estimated cost over
// a schema without bounds, then with the bound the case sets on its list,
// map or string), so a rule is refused at CRD create exactly where
// upstream refuses it.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSchema, compileExpression, compileSchema, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { cardinalityOf, estimateCost } from '../../../../src/api/validation/cel/cost.js';
import { escapePropertyName, unescapePropertyName } from '../../../../src/api/validation/cel/escaping.js';
import { markers } from '../../../../src/api/validation/structural.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

type Gen = (max?: number) => JSONSchemaProps;

const scalar = (t: string): JSONSchemaProps => {
  if (t === 'int-or-string') return { [markers.intOrString]: true } as JSONSchemaProps;
  if (['duration', 'date', 'date-time'].includes(t)) return { type: 'string', format: t };
  return { type: t };
};
const array = (items: JSONSchemaProps): Gen => (max) => ({ type: 'array', items, ...(max === undefined ? {} : { maxItems: max }) });
const map = (values: JSONSchemaProps): Gen => (max) => ({ type: 'object', additionalProperties: values, ...(max === undefined ? {} : { maxProperties: max }) });
const string: Gen = (max) => ({ type: 'string', ...(max === undefined ? {} : { maxLength: max }) });
const objectItem: JSONSchemaProps = { type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] };

/** [schema, rule, cost without bounds, the bound, cost with it]; a cost of 0 is upstream's "not checked". */
const rows: [string, Gen, string, number, number, number][] = [
  ['number array with all', array(scalar('number')), 'self.all(x, true)', 4718591, 10, 32],
  ['string array with all', array(scalar('string')), 'self.all(x, true)', 3145727, 20, 62],
  ['boolean array with all', array(scalar('boolean')), 'self.all(x, true)', 1887437, 5, 17],
  ['array of number arrays with all', array({ type: 'array', items: scalar('number') }), 'self.all(x, true)', 3145727, 100, 302],
  ['array of objects with all', array(objectItem), 'self.all(x, true)', 555128, 50, 152],
  ['map of numbers with all', map(scalar('number')), 'self.all(x, true)', 1348169, 10, 32],
  ['map of strings with all', map(scalar('string')), 'self.all(x, true)', 1179647, 3, 11],
  ['map of booleans with all', map(scalar('boolean')), 'self.all(x, true)', 943718, 100, 302],
  ['string with contains', string, "self.contains('test')", 314574, 10, 5],
  ['string with startsWith', string, "self.startsWith('test')", 2, 15, 2],
  ['string with endsWith', string, "self.endsWith('test')", 2, 30, 2],
  ['concat string', string, 'size(self + "hello") > size("hello")', 314578, 4, 7],
  ['index of array with numbers', array(scalar('number')), 'self[1] == 0.0', 2, 5000, 2],
  ['index of array with strings', array(scalar('string')), 'self[1] == self[1]', 314577, 8, 314577],
  ['O(n^2) loop with numbers', array(scalar('number')), 'self.all(x, self.all(y, true))', 0, 10, 352],
  ['O(n^3) loop with numbers', array(scalar('number')), 'self.all(x, self.all(y, self.all(z, true)))', 0, 10, 3552],
  ['regex matches simple', string, 'self.matches("x")', 314574, 50, 22],
  ['regex matches empty string', string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7],
  ['regex matches empty regex', string, 'self.matches("")', 1, 100, 1],
  ['set array maxLength to zero', array(scalar('number')), 'self[3] == 0.0', 2, 0, 2],
  ['set map maxLength to zero', map(scalar('number')), 'self["x"] == 0.0', 2, 0, 2],
  ['set string maxLength to zero', string, 'self == "x"', 2, 0, 1],
  ['set maxLength greater than estimated maxLength', array(scalar('number')), 'self.all(x, x == 0.0)', 6291454, 3 * 1024 * 2048, 25165826],
  ['int-or-string array with all', array(scalar('int-or-string')), 'self.all(x, true)', 4718591, 10, 32],
  ['index of array with int-or-strings', array(scalar('int-or-string')), 'self[0] == 5', 3, 10, 3],
  ['index of array with booleans', array(scalar('boolean')), 'self[0] == false', 2, 25, 2],
  ['index of array of objects', array(objectItem), 'self[0] == null', 2, 422, 2],
  ['index of array of array of numbers', array({ type: 'array', items: scalar('number') }), 'self[0][0] == -1.0', 3, 51, 3],
  ['array of number maps with all', array({ type: 'object', additionalProperties: scalar('number') }), 'self.all(x, x.y == 25.2)', 6291452, 12, 74],
  ['index of array of number maps', array({ type: 'object', additionalProperties: scalar('number') }), 'self[0].x > 2.0', 4, 3000, 4],
  ['duration array with all', array(scalar('duration')), 'self.all(x, true)', 2359295, 5, 17],
  ['index of duration array', array(scalar('duration')), 'self[0].getHours() == 2', 4, 525, 4],
  ['date array with all', array(scalar('date')), 'self.all(x, true)', 725936, 15, 47],
  ['index of date array', array(scalar('date')), 'self[2].getDayOfMonth() == 13', 4, 42, 4],
  ['date-time array with all', array(scalar('date-time')), 'self.all(x, true)', 428963, 25, 77],
  ['index of date-time array', array(scalar('date-time')), 'self[2].getMinutes() == 45', 4, 99, 4],
  ['map of int-or-strings with all', map(scalar('int-or-string')), 'self.all(x, true)', 1348169, 15, 47],
  ['map of objects with all', map(objectItem), 'self.all(x, true)', 428963, 20, 62],
  ['map of number maps with all', map({ type: 'object', additionalProperties: scalar('number') }), 'self.all(x, true)', 1179647, 10, 32],
  ['map of number arrays with all', map({ type: 'array', items: scalar('number') }), 'self.all(x, true)', 1179647, 25, 77],
  ['map of durations with all', map(scalar('duration')), 'self.all(x, true)', 1048577, 5, 17],
  ['map of dates with all', map(scalar('date')), 'self.all(x, true)', 524288, 10, 32],
  ['map of date-times with all', map(scalar('date-time')), 'self.all(x, true)', 349526, 25, 77],
  ['extended library regex find', string, "self.find('[0-9]+') == ''", 629147, 10, 11],
  ['extended library lowerAscii', string, "self.lowerAscii() == 'lower!'", 314575, 10, 6],
  ['check cost of size call', map(scalar('integer')), 'oldSelf.size() == self.size()', 5, 10, 5],
  ['check cost of timestamp comparison', map(scalar('date-time')), 'self["a"] == self["b"]', 8, 7, 8],
  ['check cost of duration comparison', map(scalar('duration')), 'self["c"] == self["d"]', 8, 42, 8],
  ['enums sized by their longest value', (max) => ({ ...string(max), enum: ['A', 'B', 'C', 'LongValue'] }), "self.contains('A')", 2, 1000, 401],
  ['int-or-string with quantity rule', (max) => ({ ...scalar('int-or-string'), ...(max === undefined ? {} : { maxLength: max }) }), 'isQuantity(self)', 314574, 20, 9],
];

const cost = (rule: string, schema: JSONSchemaProps): number => {
  const compiled = compileExpression(rule, ['self', 'oldSelf']);
  if (typeof compiled === 'string') throw new Error(compiled);
  return estimateCost(compiled.ast, { self: schema, oldSelf: schema });
};

describe('rule cost estimates as upstream (TestCostEstimation)', () => {
  for (const [name, gen, rule, calc, bound, set] of rows) {
    test(name, () => {
      if (calc) assert.equal(cost(rule, gen()), calc, `${rule} without bounds`);
      else assert.ok(cost(rule, gen()) > 10_000_000, `${rule} without bounds exceeds the limit`);
      if (set) assert.equal(cost(rule, gen(bound)), set, `${rule} with ${bound}`);
    });
  }
});

// What made real CRDs (Gateway API, prometheus-operator, Crossplane) fail
// here where upstream installs them, each beside its upstream figure.
describe('the estimates real CRDs depend on', () => {
  const checkRules = (schema: JSONSchemaProps) => checkSchema({ type: 'object', properties: { spec: schema } }, 's').map((e) => e.describe());

  test('string equality is charged by the smaller operand: a 3 MiB field against a literal costs a few units', () => {
    assert.equal(cost("self.mode == 'Terminate'", { type: 'object', properties: { mode: { type: 'string' } } }), 3);
    assert.equal(cost("self.mode != 'Terminate'", { type: 'object', properties: { mode: { type: 'string' } } }), 3);
  });

  test('a string with an enum and no maxLength is sized by its longest value', () => {
    const mode = { type: 'string', enum: ['Terminate', 'Passthrough'] };
    // contains: ceil(11 * 0.1) * ceil(1 * 0.1) + 2 for self.mode, where 3 MiB would cost 314,575.
    assert.equal(cost("self.mode.contains('T')", { type: 'object', properties: { mode } }), 4);
  });

  test('nested unbounded lists: the rule runs as often as its node fits in a request, not the product of every bound', () => {
    // Gateway API's shape: rules[] of matches[] of headers[], all unbounded, a rule on each header.
    const header = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 256 }, value: { type: 'string', maxLength: 4096 } },
      [markers.validations]: [{ rule: "self.name != ''" }] };
    const schema = { type: 'array', items: { type: 'object', properties: { matches: { type: 'array', items: { type: 'object', properties: { headers: { type: 'array', items: header } } } } } } };
    assert.deepEqual(checkRules(schema as JSONSchemaProps), []);
    // upstream: maxCardinality(minSize 2 + len("name") + 2 + 4 = 12) = 3 MiB / 13; the rule costs 3.
    assert.equal(cardinalityOf([{ type: 'object' }, schema as JSONSchemaProps, schema.items as JSONSchemaProps, header as JSONSchemaProps]), 241979);
  });

  test('escaped property names are sized by their properties', () => {
    const schema = { type: 'object', properties: { namespace: { type: 'string', maxLength: 63 }, 'x-y': { type: 'string', maxLength: 10 } } };
    // contains on 252 and 40 characters, where an unknown name would be 3 MiB.
    assert.equal(cost("self.__namespace__.contains('a')", schema), 28);
    assert.equal(cost("self.x__dash__y.contains('a')", schema), 6);
  });

  test('a string doubled by format() has no bound: using it is refused at create, as upstream refuses it', () => {
    let s = 'self.s';
    for (let i = 0; i < 20; i++) s = `'%s%s'.format([${s}, ${s.length > 200 ? 'self.s' : s}])`;
    const schema = { type: 'object', properties: { s: { type: 'string', maxLength: 10 }, l: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } } },
      [markers.validations]: [{ rule: `self.l.all(a, self.l.all(b, ${s}.contains(a + b)))` }] };
    const errs = checkRules(schema as JSONSchemaProps);
    assert.ok(errs.some((e) => e.includes('x-plat-validations[0].rule: Forbidden: estimated rule cost exceeds budget')), errs.join('\n'));
  });
});

describe('escaped property names at run time', () => {
  test('a rule reads `namespace`, `a-b`, `x.y` and `p/q` under their escaped names, and fires', () => {
    const schema: JSONSchemaProps = { type: 'object', properties: { spec: {
      type: 'object',
      properties: { namespace: { type: 'string' }, 'a-b': { type: 'integer' }, 'x.y': { type: 'string' }, 'p/q': { type: 'string' } },
      [markers.validations]: [
        { rule: "self.__namespace__ != 'kube-system'", message: 'namespace' },
        { rule: 'self.a__dash__b < 10', message: 'dash' },
        { rule: "self.x__dot__y == 'ok' && self.p__slash__q == 'ok'", message: 'dot and slash' },
        { rule: "self.all(k, k in ['__namespace__', 'a__dash__b', 'x__dot__y', 'p__slash__q'])", message: 'keys' },
        { rule: 'has(self.__namespace__) && has(self.a__dash__b)', message: 'has' },
      ],
    } } };
    const run = (spec: unknown) => compileSchema(schema).validate({ spec }).map((e) => e.describe());
    assert.deepEqual(run({ namespace: 'apps', 'a-b': 1, 'x.y': 'ok', 'p/q': 'ok' }), []);
    assert.deepEqual(run({ namespace: 'kube-system', 'a-b': 11, 'x.y': 'no', 'p/q': 'ok' }), [
      'spec: Invalid value: "object": namespace', 'spec: Invalid value: "object": dash', 'spec: Invalid value: "object": dot and slash',
    ]);
  });

  test('upstream escaping: reserved words whole, __ . - / inside a name, nothing else', () => {
    const table: [string, string | undefined][] = [
      ['namespace', '__namespace__'], ['in', '__in__'], ['a__b', 'a__underscores__b'], ['a.b', 'a__dot__b'], ['a-b', 'a__dash__b'],
      ['a/b', 'a__slash__b'], ['1a', undefined], ['a b', undefined], ['', undefined], ['plain_name', 'plain_name'],
    ];
    for (const [name, escaped] of table) {
      assert.equal(escapePropertyName(name), escaped, name);
      if (escaped) assert.equal(unescapePropertyName(escaped), name, escaped);
    }
    assert.equal(unescapePropertyName('a__namespace__b'), undefined);
  });
});

// apiextensions' TestCostInfo: how many times a rule on a string leaf can run
// under the schemas above it; unbounded: as many leaves as fit in a request.
describe('rule cardinality as upstream (TestCostInfo)', () => {
  const object: JSONSchemaProps = { type: 'object' };
  const arr = (maxItems?: number): JSONSchemaProps => ({ type: 'array', items: { type: 'string' }, ...(maxItems === undefined ? {} : { maxItems }) });
  const mapOf = (maxProperties?: number): JSONSchemaProps => ({ type: 'object', additionalProperties: { type: 'string' }, ...(maxProperties === undefined ? {} : { maxProperties }) });
  const unboundedLeaf = Math.floor(3 * 1024 * 1024 / 3);
  const rows: [string, JSONSchemaProps[], number][] = [
    ['object', [object], 1],
    ['array', [arr(5)], 5],
    ['unbounded array', [arr()], unboundedLeaf],
    ['map', [mapOf(10)], 10],
    ['unbounded map', [mapOf()], unboundedLeaf],
    ['array inside map', [mapOf(5), arr(5)], 25],
    ['unbounded array inside bounded map', [mapOf(5), arr()], unboundedLeaf],
    ['object inside array', [arr(3), object], 3],
    ['map inside object inside array', [arr(2), object, mapOf(4)], 8],
    ['integer overflow bounds check', [arr(Number.MAX_SAFE_INTEGER), arr(100_000)], 2 ** 64],
  ];
  for (const [name, chain, expected] of rows) {
    test(name, () => assert.equal(cardinalityOf([...chain, { type: 'string' }]), expected));
  }
});
