// The structural validator against upstream's messages: one row per keyword
// and marker, valid and invalid values; defaults nested and in list items.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSchema, markers, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { errors } from '../../../../src/machinery/errors.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const obj = (properties: Record<string, JSONSchemaProps>, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => ({ type: 'object', properties, ...extra });
/** A root with `spec` holding one field `x` of schema `s`. */
const specWith = (s: JSONSchemaProps, specExtra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => obj({ spec: obj({ x: s }, specExtra) });
const messages = (schema: JSONSchemaProps, value: unknown): string[] => compileSchema(schema).validate(value).map((e) => e.describe());

/** `bad` rows: the value, then every message it gets. */
interface Row { name: string; schema: JSONSchemaProps; good: unknown[]; bad: [unknown, ...string[]][] }

const rows: Row[] = [
  { name: 'type integer', schema: { type: 'integer' }, good: [1, -3, 2.0], bad: [['1', 'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'], [1.5, 'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"']] },
  { name: 'type number', schema: { type: 'number' }, good: [1, 1.5], bad: [[true, 'spec.x: Invalid value: "boolean": spec.x in body must be of type number: "boolean"']] },
  { name: 'type string', schema: { type: 'string' }, good: ['a'], bad: [[null, 'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'], [{}, 'spec.x: Invalid value: "object": spec.x in body must be of type string: "object"']] },
  { name: 'type boolean', schema: { type: 'boolean' }, good: [false], bad: [['true', 'spec.x: Invalid value: "string": spec.x in body must be of type boolean: "string"']] },
  { name: 'type array', schema: { type: 'array', items: { type: 'string' } }, good: [[], ['a']], bad: [['a', 'spec.x: Invalid value: "string": spec.x in body must be of type array: "string"'], [[1], 'spec.x[0]: Invalid value: "integer": spec.x[0] in body must be of type string: "integer"']] },
  { name: 'nullable', schema: { type: 'string', nullable: true }, good: [null, 'a'], bad: [] },
  { name: 'enum', schema: { type: 'string', enum: ['small', 'large'] }, good: ['small'], bad: [['huge', 'spec.x: Unsupported value: "huge": supported values: "small", "large"']] },
  { name: 'enum of lists', schema: { type: 'array', items: { type: 'integer' }, enum: [[1, 2], [3]] }, good: [[1, 2], [3]], bad: [[[2, 1], 'spec.x: Unsupported value: [2,1]: supported values: "[1,2]", "[3]"']] },
  { name: 'enum of numbers', schema: { type: 'integer', enum: [1, 2] }, good: [2], bad: [[3, 'spec.x: Unsupported value: 3: supported values: "1", "2"']] },
  { name: 'minimum', schema: { type: 'integer', minimum: 0 }, good: [0, 5], bad: [[-1, 'spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 0']] },
  { name: 'exclusiveMinimum', schema: { type: 'number', minimum: 0, exclusiveMinimum: true }, good: [0.5], bad: [[0, 'spec.x: Invalid value: 0: spec.x in body should be greater than 0']] },
  { name: 'maximum', schema: { type: 'integer', maximum: 10 }, good: [10], bad: [[11, 'spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10']] },
  { name: 'exclusiveMaximum', schema: { type: 'number', maximum: 1.5, exclusiveMaximum: true }, good: [1], bad: [[1.5, 'spec.x: Invalid value: 1.5: spec.x in body should be less than 1.5']] },
  { name: 'multipleOf', schema: { type: 'integer', multipleOf: 5 }, good: [10, 0], bad: [[7, 'spec.x: Invalid value: 7: spec.x in body should be a multiple of 5']] },
  { name: 'maxLength', schema: { type: 'string', maxLength: 3 }, good: ['abc', 'äöü'], bad: [['abcd', 'spec.x: Too long: may not be more than 3 bytes']] },
  { name: 'maxLength 1', schema: { type: 'string', maxLength: 1 }, good: ['a'], bad: [['ab', 'spec.x: Too long: may not be more than 1 byte']] },
  { name: 'minLength', schema: { type: 'string', minLength: 3 }, good: ['abc'], bad: [['ab', 'spec.x: Invalid value: "ab": spec.x in body should be at least 3 chars long']] },
  { name: 'pattern (RE2, unanchored)', schema: { type: 'string', pattern: '^[a-z]+$' }, good: ['abc'], bad: [['aB', `spec.x: Invalid value: "aB": spec.x in body should match '^[a-z]+$'`]] },
  { name: 'format date-time', schema: { type: 'string', format: 'date-time' }, good: ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123+01:00'], bad: [['yesterday', 'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"']] },
  { name: 'format uuid', schema: { type: 'string', format: 'uuid' }, good: ['123e4567-e89b-12d3-a456-426614174000'], bad: [['nope', 'spec.x: Invalid value: "nope": spec.x in body must be of type uuid: "nope"']] },
  { name: 'format ipv4 and cidr', schema: { type: 'string', format: 'ipv4' }, good: ['10.0.0.1'], bad: [['10.0.0.256', 'spec.x: Invalid value: "10.0.0.256": spec.x in body must be of type ipv4: "10.0.0.256"']] },
  { name: 'format byte', schema: { type: 'string', format: 'byte' }, good: ['aGVsbG8='], bad: [['***', 'spec.x: Invalid value: "***": spec.x in body must be of type byte: "***"']] },
  { name: 'unknown format is ignored', schema: { type: 'string', format: 'my-own' }, good: ['anything'], bad: [] },
  { name: 'minItems', schema: { type: 'array', items: { type: 'integer' }, minItems: 2 }, good: [[1, 2]], bad: [[[1], 'spec.x: Invalid value: 1: spec.x in body should have at least 2 items']] },
  { name: 'maxItems', schema: { type: 'array', items: { type: 'integer' }, maxItems: 2 }, good: [[1, 2]], bad: [[[1, 2, 3], 'spec.x: Too many: 3: must have at most 2 items']] },
  { name: 'uniqueItems', schema: { type: 'array', items: { type: 'integer' }, uniqueItems: true }, good: [[1, 2]], bad: [[[1, 1], `spec.x: Invalid value: "": spec.x in body shouldn't contain duplicates`]] },
  { name: 'minProperties', schema: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 }, good: [{ a: 'b' }], bad: [[{}, 'spec.x: Invalid value: 0: spec.x in body should have at least 1 properties']] },
  { name: 'maxProperties', schema: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 }, good: [{ a: 'b' }], bad: [[{ a: 'b', c: 'd' }, 'spec.x: Too many: 2: must have at most 1 item']] },
  { name: 'map values', schema: { type: 'object', additionalProperties: { type: 'integer' } }, good: [{ a: 1, __proto__x: 2 }], bad: [[{ a: 'no' }, 'spec.x.a: Invalid value: "string": spec.x.a in body must be of type integer: "string"']] },
  { name: 'required', schema: obj({ secretName: { type: 'string' } }, { required: ['secretName'] }), good: [{ secretName: 's' }], bad: [[{}, 'spec.x.secretName: Required value']] },
  { name: 'int-or-string', schema: { [markers.intOrString]: true }, good: [1, '50%'], bad: [[true, 'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"']] },
  { name: 'preserve-unknown-fields', schema: { type: 'object', [markers.preserveUnknownFields]: true }, good: [{ anything: [1, { b: 2 }] }], bad: [] },
  { name: 'anyOf', schema: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 0 }] }, good: [11, -1], bad: [[5, '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)', 'spec.x: Invalid value: 5: spec.x in body should be greater than or equal to 10']] },
  { name: 'oneOf', schema: { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] }, good: [11, -1], bad: [[5, '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives']] },
  { name: 'allOf', schema: { type: 'integer', allOf: [{ minimum: 0 }, { maximum: 10 }] }, good: [5], bad: [[11, 'spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10', '<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf)']] },
  { name: 'not', schema: { type: 'string', not: { enum: ['admin'] } }, good: ['user'], bad: [['admin', '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)']] },
  { name: 'list-type set', schema: { type: 'array', items: { type: 'string' }, [markers.listType]: 'set' }, good: [['a', 'b']], bad: [[['a', 'b', 'a', 'a', 'b'], 'spec.x[2]: Duplicate value: "a"', 'spec.x[4]: Duplicate value: "b"']] },
  {
    name: 'list-type map', schema: { type: 'array', [markers.listType]: 'map', [markers.listMapKeys]: ['name'], items: obj({ name: { type: 'string' }, port: { type: 'integer' } }) },
    good: [[{ name: 'a', port: 1 }, { name: 'b', port: 1 }]],
    bad: [[[{ name: 'a' }, { name: 'a', port: 2 }], 'spec.x[1]: Duplicate value: {"name":"a"}'], [[{ port: 2 }, { port: 3 }], 'spec.x[1]: Duplicate value: {}'], [['a'], 'spec.x[0]: Invalid value: "string": spec.x[0] in body must be of type object: "string"', 'spec.x[0]: Invalid value: "a": must be an object for an array of list-type map']],
  },
  {
    name: 'embedded resource', schema: { type: 'object', [markers.embeddedResource]: true, [markers.preserveUnknownFields]: true },
    good: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }],
    bad: [[{ kind: 'Pod' }, 'spec.x.apiVersion: Required value'], [{ apiVersion: 'a/b/c', kind: 'Pod' }, 'spec.x.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']],
  },
];

describe('structural validator, keyword by keyword', () => {
  for (const row of rows) {
    test(row.name, () => {
      const schema = specWith(row.schema);
      for (const good of row.good) assert.deepEqual(messages(schema, { spec: { x: good } }), [], `${JSON.stringify(good)} is valid`);
      for (const [bad, ...expected] of row.bad) assert.deepEqual(messages(schema, { spec: { x: bad } }), expected, `${JSON.stringify(bad)}`);
    });
  }
});

describe('structural validator, whole objects', () => {
  const schema = obj({
    spec: obj({
      replicas: { type: 'integer', minimum: 0 },
      size: { type: 'string', enum: ['small', 'large'] },
      secretName: { type: 'string' },
    }, { required: ['secretName'] }),
  });

  test('every error of an object is reported together, as one 422 with upstream wording', () => {
    const errs = compileSchema(schema).validate({ spec: { replicas: -1, size: 'huge' } });
    const status = errors.invalid('stable.example.com', 'Widget', 'w1', errs);
    assert.equal(status.code, 422);
    assert.equal(status.message, 'Widget.stable.example.com "w1" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, spec.size: Unsupported value: "huge": supported values: "small", "large", spec.secretName: Required value]');
    assert.deepEqual(status.details?.causes?.map((c) => c.field), ['spec.replicas', 'spec.size', 'spec.secretName']);
  });

  test('a compiled schema is reused for many objects', () => {
    const compiled = compileSchema(schema);
    for (let i = 0; i < 3; i++) assert.deepEqual(compiled.validate({ spec: { replicas: i, secretName: 's' } }), []);
  });

  test('a root of the wrong type names the nil path', () => {
    assert.deepEqual(messages(schema, 'text'), ['<nil>: Invalid value: "string":  in body must be of type object: "string"']);
  });
});

describe('defaults from the schema', () => {
  const schema = obj({
    spec: obj({
      replicas: { type: 'integer', default: 1 },
      strategy: obj({ type: { type: 'string', default: 'Rolling' }, maxSurge: { type: 'integer', default: 25 } }, { default: {} }),
      ports: { type: 'array', items: obj({ port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } }) },
      labels: { type: 'object', additionalProperties: obj({ value: { type: 'string', default: 'x' } }) },
      nullable: { type: 'string', nullable: true, default: 'd' },
      notNullable: { type: 'string', default: 'd' },
    }, { default: {} }),
  });
  const defaulted = (v: Record<string, unknown>) => { compileSchema(schema).applyDefaults(v); return v; };

  test('a missing object is defaulted, then the defaults inside it apply', () => {
    assert.deepEqual(defaulted({}), { spec: { replicas: 1, strategy: { type: 'Rolling', maxSurge: 25 }, nullable: 'd', notNullable: 'd' } });
  });

  test('list items and map values get their fields defaulted', () => {
    const v = defaulted({ spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }], labels: { a: {} } } }) as any;
    assert.deepEqual(v.spec.ports, [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }]);
    assert.deepEqual(v.spec.labels, { a: { value: 'x' } });
  });

  test('null takes the default unless the field is nullable; a set value is kept', () => {
    const v = defaulted({ spec: { replicas: 3, nullable: null, notNullable: null } }) as any;
    assert.equal(v.spec.replicas, 3);
    assert.equal(v.spec.nullable, null);
    assert.equal(v.spec.notNullable, 'd');
  });

  test('defaults are copies: changing one object leaves the schema alone', () => {
    const a = defaulted({}) as any;
    a.spec.strategy.type = 'changed';
    assert.equal((defaulted({}) as any).spec.strategy.type, 'Rolling');
  });

  test('a key named __proto__ in a map is an ordinary key', () => {
    const v = defaulted({ spec: { labels: JSON.parse('{"__proto__": {}}') } }) as any;
    assert.deepEqual(Object.getOwnPropertyDescriptor(v.spec.labels, '__proto__')?.value, { value: 'x' });
    assert.equal(({} as any).value, undefined);
  });
});

describe('pruning unknown fields', () => {
  const schema = obj({
    spec: obj({
      name: { type: 'string' },
      free: { type: 'object', [markers.preserveUnknownFields]: true, properties: { known: obj({ a: { type: 'string' } }) } },
      items: { type: 'array', items: obj({ a: { type: 'integer' } }) },
      labels: { type: 'object', additionalProperties: obj({ v: { type: 'string' } }) },
      embedded: { type: 'object', [markers.embeddedResource]: true, properties: { spec: obj({ x: { type: 'string' } }) } },
    }),
  });

  test('unknown fields go, with their paths; resource fields and preserved nodes stay; a null that cannot be goes silently', () => {
    const value = {
      apiVersion: 'example.com/v1', kind: 'App', metadata: { name: 'a' }, extra: 1,
      spec: {
        name: null, stray: true,
        free: { anything: { deep: 1 }, known: { a: 'x', b: 'dropped inside a named property' } },
        items: [{ a: 1, b: 2 }], labels: { k: { v: 'x', w: 'y' } },
        embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'x', y: 'y' }, other: 1 },
      },
    };
    const dropped = compileSchema(schema).prune(value);
    assert.deepEqual(dropped.sort(), ['extra', 'spec.embedded.other', 'spec.embedded.spec.y', 'spec.free.known.b', 'spec.items[0].b', 'spec.labels.k.w', 'spec.stray']);
    assert.deepEqual(value, {
      apiVersion: 'example.com/v1', kind: 'App', metadata: { name: 'a' },
      spec: {
        free: { anything: { deep: 1 }, known: { a: 'x' } }, items: [{ a: 1 }], labels: { k: { v: 'x' } },
        embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'x' } },
      },
    });
  });
});
