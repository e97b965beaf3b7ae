// Runtime cost of validation rules against upstream's own figures: every
// expected cost below is the one apiextensions' TestCelCostStability
// expects for the same rule over the same object and schema, so the
// per-call and per-request budgets stop evaluation where upstream's do.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { compileToCel } from '../../../../src/api/validation/cel/rules.js';
import { markers } from '../../../../src/api/validation/structural.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const str: JSONSchemaProps = { type: 'string' };
const int: JSONSchemaProps = { type: 'integer' };
const num: JSONSchemaProps = { type: 'number' };
const bool: JSONSchemaProps = { type: 'boolean' };
const list = (items: JSONSchemaProps): JSONSchemaProps => ({ type: 'array', items });
const map = (values: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', additionalProperties: values });
const obj = (properties: Record<string, JSONSchemaProps>): JSONSchemaProps => ({ type: 'object', properties });
const listSet = (items: JSONSchemaProps): JSONSchemaProps => ({ ...list(items), [markers.listType]: 'set' });
const listMap = (keys: string[], items: JSONSchemaProps): JSONSchemaProps => ({ ...list(items), [markers.listType]: 'map', [markers.listMapKeys]: keys });
const duration: JSONSchemaProps = { type: 'string', format: 'duration' };
const date: JSONSchemaProps = { type: 'string', format: 'date' };
const dateTime: JSONSchemaProps = { type: 'string', format: 'date-time' };
/** Upstream's ValsEqualThemselvesAndDataLiteral. */
const equalThemselvesAnd = (a: string, b: string, literal: string) => `${a} == ${literal} && ${literal} == ${a} && ${a} == ${b}`;
const intOrString: JSONSchemaProps = { [markers.intOrString]: true } as JSONSchemaProps;
const unknown: JSONSchemaProps = { type: 'object', [markers.preserveUnknownFields]: true } as JSONSchemaProps;
/** `vals(a, b)`: self.val1 = a, self.val2 = b... with the schemas `types` in the same order. */
const vals = (types: JSONSchemaProps[], values: unknown[]) => ({
  schema: obj(Object.fromEntries(types.map((t, i) => [`val${i + 1}`, t]))),
  value: Object.fromEntries(values.map((v, i) => [`val${i + 1}`, v])),
});

interface Case { schema: JSONSchemaProps; value: unknown; costs: Record<string, number> }

const cases: Record<string, Case> = {
  integers: {
    ...vals([int, int, int, int, int, int], [2 ** 53, 2 ** 53, 2147483647, 2147483647, 2 ** 53, 2 ** 53]),
    costs: { 'self.val1 == self.val6': 5, 'type(self.val1) == int': 4, 'self.val3 + 1 == 2147483647 + 1': 5 },
  },
  numbers: {
    ...vals([num, num, num, num, num, num, num], [1.5, 1.5, 2.5, 2.5, 1.5, 1.5, 1]),
    costs: { 'self.val1 == self.val6': 5, 'type(self.val1) == double': 4, 'type(self.val7) == double': 4, 'self.val7 == 1.0': 3 },
  },
  'numeric comparisons': {
    ...vals([int, num], [5, 10.5]),
    costs: {
      'double(self.val1) < self.val2': 6, 'self.val1 < int(self.val2)': 6,
      'double(5) < 10.0': 1, '5 < int(10.0)': 1, 'double(self.val1) < 10.0': 4,
    },
  },
  'unicode strings': {
    ...vals([str, str], ['Rook takes 👑', 'Rook takes 👑']),
    costs: {
      "self.val1.startsWith('Rook')": 4, "!self.val1.startsWith('knight')": 5,
      "self.val1.matches('^[^0-9]*$')": 8, "!self.val1.matches('^[0-9]*$')": 7,
      'type(self.val1) == string': 4, 'size(self.val1) == 12': 4,
      "self.val1.charAt(3) == 'k'": 4, "self.val1.indexOf('o') == 1": 4, "self.val1.indexOf('o', 2) == 2": 4,
      "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'": 7, "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'": 7,
      "self.val1.split(' ') == ['Rook', 'takes', '👑']": 6, "self.val1.split(' ', 2) == ['Rook', 'takes 👑']": 6,
      "self.val1.substring(5) == 'takes 👑'": 5, "self.val1.substring(0, 4) == 'Rook'": 5,
      "self.val1.substring(4, 10).trim() == 'takes'": 6,
      "self.val1.upperAscii() == 'ROOK TAKES 👑'": 6, "self.val1.lowerAscii() == 'rook takes 👑'": 6,
    },
  },
  'escaped strings': { ...vals([str], ['l1\nl2']), costs: { "self.val1 == '''l1\nl2'''": 3 } },
  booleans: { ...vals([bool, bool, bool, bool], [true, true, false, false]), costs: { 'self.val1 != self.val4': 5, 'type(self.val1) == bool': 4 } },
  'list sets': {
    ...vals([listSet(str), listSet(str), listSet(int)], [['a', 'b', 'c'], ['a', 'c', 'b'], Array.from({ length: 1000 }, (_, i) => i)]),
    costs: {
      "self.val1 == ['c', 'b', 'a']": 3, 'self.val1 == self.val2': 5, "'a' in self.val1": 5, 'self.val2[0] in self.val1': 8,
      "!('x' in self.val1)": 6, "self.val1 + self.val2 == ['a', 'b', 'c']": 6, "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']": 4,
      "sets.contains(self.val1, ['a'])": 6, "sets.equivalent(self.val1, ['a', 'b', 'c'])": 21, "sets.intersects(self.val1, ['a'])": 6,
      'sets.contains(self.val3, [1])': 1003,
    },
  },
  'duration format': {
    ...vals([duration, duration], ['1h2m3s4ms', '1h2m3s4ms']),
    costs: {
      [equalThemselvesAnd('self.val1', 'self.val2', "duration('1h2m3s4ms')")]: 11,
      "self.val1 == duration('1h2m') + duration('3s4ms')": 4, 'self.val1.getHours() == 1': 4, 'type(self.val1) == google.protobuf.Duration': 4,
    },
  },
  'date format': {
    ...vals([date, date], ['1997-07-16', '1997-07-16']),
    costs: {
      [equalThemselvesAnd('self.val1', 'self.val2', "timestamp('1997-07-16T00:00:00.000Z')")]: 11,
      'self.val1.getDate() == 16': 4, 'type(self.val1) == google.protobuf.Timestamp': 4,
    },
  },
  'date-time format': {
    ...vals([dateTime, dateTime], ['2011-08-18T19:03:37.010000000+01:00', '2011-08-18T19:03:37.010000000+01:00']),
    costs: {
      [equalThemselvesAnd('self.val1', 'self.val2', "timestamp('2011-08-18T19:03:37.010+01:00')")]: 11,
      "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')": 4,
      "self.val1.getDate('01:00') == 18": 4, 'type(self.val1) == google.protobuf.Timestamp': 4,
    },
  },
  enums: {
    schema: obj({ enumStr: { type: 'string', enum: ['Pending', 'Available', 'Bound'] } }), value: { enumStr: 'Pending' },
    costs: { "self.enumStr == 'Pending'": 3, "self.enumStr in ['Pending', 'Available']": 2 },
  },
  conversions: {
    ...vals([int, num, num, num, bool, str], [10, 10.0, 10.49, 10.5, true, '10']),
    costs: { 'int(self.val2) == self.val1': 6, 'double(self.val1) == self.val2': 6, 'string(self.val1) == self.val6': 6, "string(self.val4) == '10.5'": 4 },
  },
  lists: {
    ...vals([list(int), list(int)], [[1, 2, 3], [1, 2, 3]]),
    costs: {
      '1 in self.val1': 5, 'self.val2[0] in self.val1': 8, '!(0 in self.val1)': 6,
      'self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]': 6, 'self.val1 + [4, 5] == [1, 2, 3, 4, 5]': 4,
    },
  },
  listMaps: {
    schema: obj({ objs: list(listMap(['k'], obj({ k: str, v: str }))) }),
    value: { objs: [[{ k: 'a', v: '1' }, { k: 'b', v: '2' }], [{ k: 'b', v: '2' }, { k: 'a', v: '1' }], [{ k: 'b', v: '3' }, { k: 'a', v: '1' }], [{ k: 'c', v: '4' }]] },
    costs: {
      'self.objs[0] == self.objs[1]': 7, 'self.objs[0] + self.objs[2] == self.objs[2]': 11,
      'self.objs[0] == [self.objs[0][0], self.objs[0][1]]': 22,
      'self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]': 26,
      'size(self.objs[0] + [self.objs[3][0]]) == 3': 20,
    },
  },
  maps: {
    ...vals([map(str), map(str)], [{ k1: 'a', k2: 'b' }, { k2: 'b', k1: 'a' }]),
    costs: { 'self.val1 == self.val2': 5, "'k1' in self.val1": 3, "!('k3' in self.val1)": 4, "self.val1 == {'k1': 'a', 'k2': 'b'}": 3 },
  },
  'object access': {
    schema: obj({ a: obj({ b: int, c: int }), a1: obj({ b1: obj({ c1: int }), d2: obj({ e2: int }) }) }),
    value: { a: { b: 1 }, a1: { b1: { c1: 4 } } },
    costs: { 'has(self.a.b)': 2, 'has(self.a1.b1.c1)': 3, '!(has(self.a1.d2) && has(self.a1.d2.e2))': 3, '!has(self.a1.d2)': 3 },
  },
  'map access': {
    schema: obj({ val: map(int) }), value: { val: { b: 1, d: 2 } },
    costs: {
      "!('a' in self.val)": 4, "'b' in self.val": 3, '!has(self.val.a)': 3, 'has(self.val.b)': 2,
      'self.val.all(k, self.val[k] > 0)': 17, 'self.val.exists_one(k, self.val[k] == 2)': 14,
      '!self.val.exists_one(k, self.val[k] > 0)': 17, 'size(self.val) == 2': 4,
      'size(self.val.filter(k, self.val[k] > 1)) == 1': 26,
    },
  },
  'listMap access': {
    schema: obj({ listMap: listMap(['k'], obj({ k: str, v: str, v2: str })) }),
    value: { listMap: [{ k: 'a1', v: 'b1' }, { k: 'a2', v: 'b2' }, { k: 'a3', v: 'b3', v2: 'z' }] },
    costs: {
      'has(self.listMap[0].v)': 3,
      "self.listMap.all(m, m.k.startsWith('a'))": 21, "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')": 21,
      "self.listMap.exists(m, m.k.endsWith('1'))": 13, "self.listMap.exists_one(m, m.k == 'a3')": 15,
      "!self.listMap.all(m, m.k.endsWith('1'))": 18, "!self.listMap.exists(m, m.v == 'x')": 25,
      "!self.listMap.exists_one(m, m.k.startsWith('a'))": 20, "size(self.listMap.filter(m, m.k == 'a1')) == 1": 27,
      "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')": 16, "self.listMap.map(m, m.v).exists(v, v == 'b1')": 55,
      "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')": 21, "!self.listMap.all(m, has(m.v2) && m.v2 != 'z')": 10,
      "self.listMap.exists_one(m, has(m.v2) && m.v2 == 'z')": 12,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1": 24,
      "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1": 25,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1": 39,
      "self.listMap.exists(m, m.v2 == 'z')": 24, "!self.listMap.all(m, m.v2 != 'z')": 22,
    },
  },
  'list access': {
    schema: obj({ array: list(int) }), value: { array: [1, 1, 2, 2, 3, 3, 4, 5] },
    costs: {
      '2 in self.array': 10, 'self.array.all(e, e > 0)': 43, 'self.array.exists(e, e > 2)': 36,
      'self.array.exists_one(e, e > 4)': 22, '!self.array.all(e, e < 2)': 21, '!self.array.exists(e, e < 0)': 52,
      '!self.array.exists_one(e, e == 2)': 25, 'self.array.all(e, e < 100)': 43,
      'size(self.array.filter(e, e%2 == 0)) == 3': 68, 'self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)': 194,
      'size(self.array) == 8': 4,
    },
  },
  'typemeta and objectmeta': {
    schema: obj({ kind: str, apiVersion: str, metadata: obj({ name: str, generateName: str }) }),
    value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foo', generateName: 'pickItForMe' } },
    costs: { "self.kind == 'Pod'": 3, "self.apiVersion == 'v1'": 3, "self.metadata.name == 'foo'": 4, "self.metadata.generateName == 'pickItForMe'": 5 },
  },
  'string in intOrString': {
    schema: obj({ something: intOrString }), value: { something: '25%' },
    costs: {
      "type(self.something) == int ? self.something == 1 : self.something == '25%'": 7,
      "type(self.something) == string && self.something == '25%'": 7,
      "self.something == '25%'": 3, 'self.something != 1': 3,
      "self.something == 1 || self.something == '25%'": 6, "self.something == '25%' || self.something == 1": 3,
      "self.something != ['anything']": 3,
    },
  },
  'percent comparison using intOrString': {
    schema: obj({ min: intOrString, current: int, available: int }), value: { min: '50%', current: 5, available: 10 },
    costs: {
      "type(self.min) == string && self.min.matches(r'(\\d+(\\.\\d+)?%)')": 10,
      "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0": 17,
    },
  },
  'preserve unknown fields': {
    schema: obj({ withUnknownList: list(unknown) }), value: { withUnknownList: [{ field1: 'a', field2: 'b' }, { field1: 'x', field2: 'y' }, { field1: 'x', field2: 'y' }, {}, {}] },
    costs: {
      'self.withUnknownList.size() == 5': 4, 'self.withUnknownList[0] != self.withUnknownList[1]': 7,
      'self.withUnknownList[1] == self.withUnknownList[2]': 7, 'self.withUnknownList[3] == self.withUnknownList[4]': 6,
    },
  },
  'container type composition': {
    schema: obj({
      obj: obj({ field: str }), mapOfMap: map(map(str)), mapOfObj: map(obj({ field2: str })),
      mapOfListMap: map(listMap(['k'], obj({ k: str, v: str }))), mapOfList: map(list(str)),
      listOfMap: list(map(str)), listOfObj: list(obj({ field3: str })),
    }),
    value: {
      obj: { field: 'a' }, mapOfMap: { x: { y: 'b' } }, mapOfObj: { k: { field2: 'c' } }, mapOfListMap: { o: [{ k: '1', v: 'd' }] },
      mapOfList: { l: ['e'] }, listOfMap: [{ z: 'g' }], listOfObj: [{ field3: 'h' }],
    },
    costs: {
      "self.obj.field == 'a'": 4, "self.mapOfMap['x']['y'] == 'b'": 5, "self.mapOfObj['k'].field2 == 'c'": 5,
      "self.mapOfListMap['o'].exists(e, e.k == '1' && e.v == 'd')": 14, "self.mapOfList['l'][0] == 'e'": 5,
      "self.listOfMap[0]['z'] == 'g'": 5, "self.listOfObj[0].field3 == 'h'": 5,
      'type(self) == type(self)': 5, "type(self.mapOfObj['k']) == type(self.mapOfObj['k'])": 9,
    },
  },
  optionals: {
    schema: obj({ obj: obj({ field: str, absentField: str }), m: map(str), l: list(str) }),
    value: { obj: { field: 'a' }, m: { k: 'v' }, l: ['a'] },
    costs: {
      "optional.of('a') != optional.of('b')": 3, "optional.of('a') != optional.none()": 3, "optional.of('a').hasValue()": 2,
      "optional.of('a').or(optional.of('a')).hasValue()": 2, "optional.none().or(optional.of('a')).hasValue()": 3,
      "self.obj.?field == optional.of('a')": 5, "self.obj.?absentField == optional.none()": 4,
      "self.obj.?field.orValue('v') == 'a'": 4, "self.m[?'k'] == optional.of('v')": 5, "self.l[?0] == optional.of('a')": 5,
      'optional.ofNonZeroValue(1).hasValue()': 2,
    },
  },
};

describe('runtime cost, as upstream counts it', () => {
  for (const [name, c] of Object.entries(cases)) {
    test(name, () => {
      const self = compileToCel(c.schema)(c.value);
      const wrong: string[] = [];
      for (const [rule, expected] of Object.entries(c.costs)) {
        const program = compileExpression(rule, ['self']);
        assert.equal(typeof program, 'object', `${rule}: ${String(program)}`);
        if (typeof program === 'string') continue;
        const result = program.eval({ self }, 1_000_000);
        if (result.value !== true) wrong.push(`${rule}: evaluated to ${String(result.value)} ${result.error ?? ''}`);
        if (result.cost !== expected) wrong.push(`${rule}: cost ${result.cost}, upstream ${expected}`);
      }
      assert.deepEqual(wrong, []);
    });
  }

  test('the per-call limit stops a rule at the step that passes it, as upstream', () => {
    const program = compileExpression('self.array.all(e, e > 0)', ['self']);
    if (typeof program === 'string') assert.fail(program);
    const self = compileToCel(obj({ array: list(int) }))({ array: [1, 1, 2, 2, 3, 3, 4, 5] });
    assert.equal(program.eval({ self }, 43).exceeded, false);
    const stopped = program.eval({ self }, 42);
    assert.equal(stopped.exceeded, true);
    assert.equal(stopped.error, 'operation cancelled: actual cost limit exceeded');
  });
});
