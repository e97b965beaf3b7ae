// Schema-typed CEL values, as upstream's UnstructuredToVal makes them:
// date-time and date strings are timestamps, durations durations, byte
// strings bytes, int-or-string an int or a string; lists of list-type set
// and map compare regardless of order and merge on `+`. Each row is a rule
// and whether it holds over `value` (the cases follow apiextensions'
// TestValidationExpressions; the values are ours).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSchema, compileSchema, markers, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const obj = (properties: Record<string, JSONSchemaProps>): JSONSchemaProps => ({ type: 'object', properties });
const withRules = (schema: JSONSchemaProps, rules: string[]): JSONSchemaProps => ({ ...schema, [markers.validations]: rules.map((rule) => ({ rule })) });

/** The rules of `rows` that do not hold (or fail) over `value`, with what went wrong. */
function failing(schema: JSONSchemaProps, value: unknown, rows: string[], old?: unknown): string[] {
  const out: string[] = [];
  for (const rule of rows) {
    const compiled = compileSchema(withRules(schema, [rule]));
    const errs = old === undefined ? compiled.validate(value) : compiled.validateUpdate(value, old);
    if (errs.length) out.push(`${rule}: ${errs.map((e) => e.describe()).join('; ')}`);
  }
  return out;
}

const times = obj({
  start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' },
  day: { type: 'string', format: 'date' }, ttl: { type: 'string', format: 'duration' }, week: { type: 'string', format: 'duration' },
  data: { type: 'string', format: 'byte' }, plain: { type: 'string' },
  port: { [markers.intOrString]: true } as JSONSchemaProps, portName: { [markers.intOrString]: true } as JSONSchemaProps,
});
const timesValue = {
  start: '2024-01-01T10:00:00Z', end: '2024-01-01T12:30:00.25+02:00', day: '2024-02-29', ttl: '90m', week: '1w',
  data: 'aGVsbG8=', plain: '2024-01-01T10:00:00Z', port: 8080, portName: 'http',
};

describe('schema-typed values', () => {
  test('formats become timestamps, durations and bytes; int-or-string is an int or a string', () => {
    assert.deepEqual(failing(times, timesValue, [
      'self.end > self.start',
      "self.end - self.start == duration('30m250ms')",
      "self.start + self.ttl == timestamp('2024-01-01T11:30:00Z')",
      'type(self.start) == google.protobuf.Timestamp',
      'type(self.ttl) == google.protobuf.Duration',
      "self.ttl < duration('2h') && self.ttl > duration('1h')",
      "self.week == duration('168h')",
      'self.start.getHours() == 10',
      "self.day == timestamp('2024-02-29T00:00:00Z')",
      'self.day.getDayOfMonth() == 28',
      "self.data == b'hello'",
      'type(self.data) == bytes',
      'size(self.data) == 5',
      "type(self.plain) == string",
      'type(self.port) == int && self.port == 8080',
      "type(self.portName) == string && self.portName == 'http'",
    ]), []);
  });

  test('timestamps and durations compare inside lists, maps and `in`, keep their type through arithmetic, and fail with the same messages', () => {
    assert.deepEqual(failing(times, timesValue, [
      "[self.start, self.ttl] == [timestamp('2024-01-01T10:00:00Z'), duration('5400s')]",
      "{'t': self.ttl} == {'t': duration('1h30m')} && {'t': self.ttl} != {'t': duration('1h')}",
      "self.ttl in [duration('1h'), duration('90m')] && !(self.start in [self.end])",
      'self.start != self.end && self.ttl != self.week',
      "timestamp('2024-01-01T09:00:00Z') + duration('1h') == self.start && self.start - duration('1h') + duration('1h') == self.start",
      "type(timestamp('2024-01-01T00:00:00Z') + duration('1s')) == google.protobuf.Timestamp && type(self.end - self.start) == google.protobuf.Duration",
      "duration('-1.5s') == duration('-1500ms') && duration(3) == duration('3s')",
    ]), []);
    assert.deepEqual(failing(times, timesValue, [
      "duration('1x') == self.ttl",
      "timestamp('9999-12-31T23:00:00Z') + duration('2h') > self.start",
      "timestamp('yesterday') < self.start",
    ]), [
      "duration('1x') == self.ttl: <nil>: Invalid value: \"object\": Failed to parse duration: invalid syntax evaluating rule: duration('1x') == self.ttl",
      "timestamp('9999-12-31T23:00:00Z') + duration('2h') > self.start: <nil>: Invalid value: \"object\": timestamp out of range evaluating rule: timestamp('9999-12-31T23:00:00Z') + duration('2h') > self.start",
      "timestamp('yesterday') < self.start: <nil>: Invalid value: \"object\": Failed to parse timestamp: Error: cannot decode message google.protobuf.Timestamp from JSON: invalid RFC 3339 string evaluating rule: timestamp('yesterday') < self.start",
    ]);
  });

  test('oldSelf is typed as self: a transition rule compares timestamps', () => {
    const schema = obj({ expires: { type: 'string', format: 'date-time', [markers.validations]: [{ rule: 'self >= oldSelf', message: 'may only be extended' }] } as JSONSchemaProps });
    const compiled = compileSchema(schema);
    assert.deepEqual(compiled.validateUpdate({ expires: '2024-06-01T00:00:00Z' }, { expires: '2024-05-31T23:00:00-02:00' }).map((e) => e.describe()),
      ['expires: Invalid value: "string": may only be extended']);
    assert.deepEqual(compiled.validateUpdate({ expires: '2024-06-01T02:00:00+01:00' }, { expires: '2024-06-01T00:00:00Z' }), []);
  });

  test('a rule over unbounded date-time and duration strings is not refused as a rule over 3 MiB strings', () => {
    const schema = obj({ items: { type: 'array', maxItems: 100, items: withRules(obj({ a: { type: 'string', format: 'date-time' }, b: { type: 'string', format: 'date-time' }, t: { type: 'string', format: 'duration' } }), ["self.a < self.b && self.t > duration('1s')"]) } });
    assert.deepEqual(checkSchema(schema, 'schema').map((e) => e.describe()), []);
  });
});

const item = obj({ name: { type: 'string' }, port: { type: 'integer' } });
const lists = obj({
  set: { type: 'array', items: { type: 'string' }, [markers.listType]: 'set' } as JSONSchemaProps,
  atomic: { type: 'array', items: { type: 'string' } },
  ports: { type: 'array', items: item, [markers.listType]: 'map', [markers.listMapKeys]: ['name'] } as JSONSchemaProps,
  nested: { type: 'array', items: { type: 'array', items: { type: 'integer' }, [markers.listType]: 'set' } as JSONSchemaProps },
  numbers: { type: 'array', items: { type: 'integer' }, [markers.listType]: 'set' } as JSONSchemaProps,
});
const listsValue = {
  set: ['a', 'b', 'c'], atomic: ['a', 'b', 'c'],
  ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }],
  nested: [[1, 2], [2, 1]],
  numbers: [1, 2],
};

describe('lists of list-type set and map', () => {
  test('== and != ignore order with a set or list-map on the left; a plain list compares in order', () => {
    assert.deepEqual(failing(lists, listsValue, [
      "self.set == ['c', 'a', 'b']",
      "self.set != ['c', 'a']",
      "self.set != ['c', 'a', 'd']",
      "['c', 'a', 'b'] != self.set",
      "self.atomic != ['c', 'a', 'b']",
      "self.ports == [{'name': 'https', 'port': 443}, {'name': 'http', 'port': 80}]",
      "self.ports != [{'name': 'https', 'port': 443}, {'name': 'http', 'port': 81}]",
      "self.ports != [{'name': 'https', 'port': 443}]",
      'self.nested[0] == self.nested[1]',
      'self.numbers == [2u, 1.0]',
      'self.numbers + [1u, 3.0] == [1, 2, 3]',
    ]), []);
    assert.deepEqual(failing(lists, listsValue, ["self.atomic == ['c', 'a', 'b']"]), ["self.atomic == ['c', 'a', 'b']: <nil>: Invalid value: \"object\": failed rule: self.atomic == ['c', 'a', 'b']"]);
  });

  test('+ merges: a set keeps its order and appends new items once; a list-map replaces items with the same keys in place', () => {
    assert.deepEqual(failing(lists, listsValue, [
      "self.set + ['d', 'a', 'd'] == ['a', 'b', 'c', 'd']",
      "(self.set + ['d', 'a', 'd'])[3] == 'd'",
      "size(self.set + ['d', 'a', 'd']) == 4",
      "size(['d', 'a'] + self.set) == 5",
      "size(self.atomic + ['a']) == 4",
      "(self.ports + [{'name': 'http', 'port': 8080}, {'name': 'dns', 'port': 53}])[0].port == 8080",
      "(self.ports + [{'name': 'http', 'port': 8080}, {'name': 'dns', 'port': 53}])[2].name == 'dns'",
      "size(self.ports + [{'name': 'http', 'port': 8080}]) == 2",
      "self.ports + [{'name': 'http', 'port': 8080}] == [{'name': 'https', 'port': 443}, {'name': 'http', 'port': 8080}]",
      "self.set + ['d'] + ['a', 'e'] == ['e', 'd', 'c', 'b', 'a']",
    ]), []);
  });

  test('objects are read in place: maps of the JSON as sent, nulls, own keys only, equality with literals, iteration', () => {
    const schema: JSONSchemaProps = obj({
      spec: obj({ replicas: { type: 'integer' }, ratio: { type: 'number' }, note: { type: 'string', nullable: true }, labels: { type: 'object', additionalProperties: { type: 'string' } } }),
      free: { type: 'object', [markers.preserveUnknownFields]: true } as JSONSchemaProps,
    });
    const value = { spec: { replicas: 3, ratio: 1.5, note: null, labels: JSON.parse('{"a":"1","__proto__":"2"}') }, free: { n: 2, deep: { list: [1, { m: 4 }] } } };
    assert.deepEqual(failing(schema, value, [
      'self.spec.replicas == 3 && type(self.spec.replicas) == int',
      'type(self.spec.ratio) == double',
      '!has(self.spec.note) && self.spec.note == null',
      "size(self.spec.labels) == 2 && self.spec.labels['__proto__'] == '2' && !has(self.spec.labels.constructor)",
      "self.spec.labels == {'__proto__': '2', 'a': '1'}",
      "self.spec.labels.all(k, k in ['a', '__proto__'])",
      "self.spec.labels.exists_one(k, self.spec.labels[k] == '1')",
      "'toString' in self.spec.labels == false",
      'type(self.free.n) == int && self.free.deep.list[1].m == 4 && type(self.free.deep.list[0]) == int',
      'self.spec.map(k, k).size() == 4',
    ]), []);
  });

  test("data never passes for a library's value: an object with the hidden key of an optional is read as the map it is", () => {
    const schema: JSONSchemaProps = obj({ free: { type: 'object', [markers.preserveUnknownFields]: true } as JSONSchemaProps });
    const forged = { free: JSON.parse('{"\\u0000kind":"optional","has":false,"value":null,"x":1}') };
    assert.deepEqual(failing(schema, forged, [
      'has(self.free.x) && self.free.x == 1',
      "size(self.free) == 4 && type(self.free) == map",
      '!has(self.free.y)',
    ]), []);
  });
});
